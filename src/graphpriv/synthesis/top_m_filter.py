"""TmF (Top-m Filter): edge-level DP release of a graph's edge set at a cost linear in |E|.

Source: Nguyen, Imine, Rusinowitch, "Differentially Private Publication of Social Graphs at Linear
Cost" (ASONAM 2015), the Top-m Filter algorithm (journal version: "Network Structure Release
under Differential Privacy", Transactions on Data Privacy 9(3), 2016). The count step, the
threshold theta and its two closed forms follow the authors' own code (``GreedyReconstruct.
filterLaplace`` of ``hiepbkhn/itce2011``); the 0-cells are drawn as graphpriv's design note on the
generators recommends (below).

Setting. N nodes (public), the N(N-1)/2 cells of the strict upper triangle of the adjacency
matrix A (row-major pair codes, :func:`graphpriv.data.graph.pair_codes`), m = |E| counted on the
canonical pairs u < v. Neighbouring graphs differ by adding or removing one undirected edge
(dp-accounting's ``ADD_OR_REMOVE_ONE``); that changes m by 1 and exactly one cell of A by 1, so
both have L1 sensitivity 1.

The mechanism, epsilon = eps1 + eps2 (``count_fraction`` = eps2 / epsilon):

1. M = clip(round(m + Lap(1/eps2)), 1, P - 1), P = N(N-1)/2: eps2-DP (Laplace mechanism on m;
   the rounding and clipping are post-processing). Event ``LaplaceDpEvent(1/eps2)``.
2. Conceptually, every cell gets a_ij + Lap(1/eps1): eps1-DP (Laplace mechanism on the vector
   A, L1 sensitivity 1). Event ``LaplaceDpEvent(1/eps1)``. Everything else is a function of M and
   of this noisy matrix, i.e. post-processing, and it is simulated exactly without ever
   materialising the P cells:

   - ``mode="threshold"`` (TmF): release the cells whose noisy value exceeds theta(M), the
     threshold at which the expected number of released cells is M
     (:func:`tmf_threshold`). A true edge passes with probability p1 = P(1 + Lap(1/eps1) > theta),
     a non-edge with p0 = P(Lap(1/eps1) > theta), all cells independently: each true edge is
     kept by a Bernoulli(p1) draw, and a Binomial(P - m, p0) number of non-edges, chosen uniformly
     without replacement, is added (the same law as P - m independent Bernoulli(p0) draws). This
     is Cormode et al.'s high-pass filter ("Differentially private summaries for sparse data",
     ICDT 2012). The released size is random, about M in expectation.
   - ``mode="topm"``: release the exact top-M cells of the noisy matrix (what TmF approximates;
     the same law as graphpriv's :func:`graphpriv.privacy.lapgraph.lapgraph`). The largest
     K = min(M, P - m) noisy values of the P - m non-edges are drawn directly as order statistics
     (Rényi's representation of uniform order statistics pushed through the Laplace survival
     function), ranked with the m noisy edge values, and the selected non-edges get uniformly
     random distinct identities (the non-edge cells are exchangeable).

   Using the true m for the number P - m of non-edge cells is part of simulating the noisy matrix
   exactly; it is not a release of m.

Total: pure (eps1 + eps2)-DP, delta = 0, by basic composition of the two Laplace mechanisms.

Not offered: the paper's "linear cost" completion that adds exactly M - n1 uniform non-edges
after n1 true edges passed the filter. Its output is not a post-processing of the noisy matrix:
given M, an output O containing the added edge e has probability ratio p1 (P - m) / (M - |O n E|)
between G + e and G, unbounded when few non-edges are added (an exact enumeration on 5 nodes at
eps1 = eps2 = 1 gives |log ratio| 2.68 > 2; with M held fixed it is infinite), so it is not
epsilon-DP. ``tests/synthesis/test_top_m_filter.py`` keeps that enumeration as a negative test.

Cost: O(m log m + |release| log |release|) time and O(m + |release|) memory; never an array of
size P or N x N (:func:`distinct_uniform` draws the non-edges' ranks in O(|release|)).

These are pure functions of their inputs and a ``numpy.random.Generator``; the estimator is
:class:`graphpriv.methods.tmf.TmF`.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from dp_accounting import dp_event
from scipy.optimize import brentq

from graphpriv.data.graph import decode_pairs, pair_codes
from graphpriv.privacy.accountant import check_epsilon
from graphpriv.privacy.mechanisms import non_edge_offsets

__all__ = [
    "MODES",
    "distinct_uniform",
    "laplace_survival",
    "noisy_edge_count",
    "pass_probabilities",
    "threshold_cells",
    "tmf_threshold",
    "top_m_cells",
    "top_m_filter",
]

#: The release modes: the TmF threshold filter (default) and the exact top-M of the noisy matrix.
MODES = ("threshold", "topm")

_LOG_HALF = math.log(0.5)


def laplace_survival(x: float, epsilon: float) -> float:
    """P(Lap(1/epsilon) > x): ``0.5 exp(-epsilon x)`` for x >= 0, ``1 - 0.5 exp(epsilon x)`` below.

    Args:
        x: any float (+-inf allowed). epsilon: > 0 (the Laplace scale is 1/epsilon).

    Returns:
        A probability in [0, 1].
    """
    return 0.5 * math.exp(-epsilon * x) if x >= 0 else 1.0 - 0.5 * math.exp(epsilon * x)


def _log_survival(x: float, epsilon: float) -> float:
    """log P(Lap(1/epsilon) > x), without underflow for large x."""
    return _LOG_HALF - epsilon * x if x >= 0 else math.log1p(-0.5 * math.exp(epsilon * x))


def _log_cdf(x: float, epsilon: float) -> float:
    """log P(Lap(1/epsilon) <= x), without underflow for very negative x."""
    return _LOG_HALF + epsilon * x if x <= 0 else math.log1p(-0.5 * math.exp(-epsilon * x))


def pass_probabilities(theta: float, epsilon: float) -> tuple[float, float]:
    """``(p0, p1)``: the probabilities that a non-edge cell (value 0) and an edge cell (value 1)
    pass the filter ``a + Lap(1/epsilon) > theta``.

    Args:
        theta: the threshold (any float). epsilon: eps1 > 0, the cells' Laplace budget.

    Returns:
        ``(P(Lap > theta), P(1 + Lap > theta))``, p0 < p1 for a finite theta.
    """
    return laplace_survival(theta, epsilon), laplace_survival(theta - 1.0, epsilon)


def tmf_threshold(num_pairs: int, target: int, epsilon: float) -> float:
    """TmF's threshold theta: the expected number of released cells equals ``target``.

    With M = ``target``, P = ``num_pairs``, p0(theta) = P(Lap(1/eps) > theta) and
    p1(theta) = P(1 + Lap(1/eps) > theta), theta solves the paper's balance
    ``M (1 - p1) = (P - M) p0`` (the 1-cells expected to be lost equal the 0-cells expected to
    pass; with M true edges, exactly M cells pass in expectation). The left side increases and the
    right side decreases in theta, so the root is unique; it is found by Brent's method on the
    logarithms of both sides (no underflow when theta is large). Closed forms, with
    eps_t = ln(P/M - 1) (used only to test this function):

    - 0 <= theta <= 1 (eps >= eps_t >= 0): theta = 1/2 + ln(P/M - 1) / (2 eps);
    - theta > 1 (eps < eps_t): theta = ln(P/(2M) + (e^eps - 1)/2) / eps;
    - theta < 0 (M > P/2 and eps < -eps_t): theta = ln(2 (P - M) / (P - M + M e^-eps)) / eps.

    The first two are the authors' (``filterLaplace``); the third covers releases denser than half
    of all cells.

    Args:
        num_pairs: P = N(N-1)/2, >= 2. target: M, 0 < M < P. epsilon: eps1 > 0.

    Returns:
        theta (float).

    Raises:
        ValueError: P < 2, M outside (0, P), or epsilon not a finite number > 0.
    """
    check_epsilon(epsilon)
    if not (num_pairs >= 2 and 0 < target < num_pairs):
        raise ValueError(f"need 0 < target < num_pairs (got target={target}, num_pairs={num_pairs})")
    log_zero, log_one = math.log(num_pairs - target), math.log(target)

    def balance(theta: float) -> float:  # log((P - M) p0) - log(M (1 - p1)): strictly decreasing
        return log_zero + _log_survival(theta, epsilon) - log_one - _log_cdf(theta - 1.0, epsilon)

    lo, hi, width = 0.0, 1.0, 1.0
    while balance(lo) <= 0:
        lo -= width
        width *= 2
    width = 1.0
    while balance(hi) >= 0:
        hi += width
        width *= 2
    return float(brentq(balance, lo, hi, xtol=1e-13, rtol=8.9e-16, maxiter=500))


def noisy_edge_count(num_edges: int, num_pairs: int, *, epsilon: float,
                     rng: np.random.Generator) -> tuple[int, dp_event.DpEvent]:
    """M = clip(round(m + Lap(1/epsilon)), 1, P - 1): the noisy edge count (L1 sensitivity 1).

    Args:
        num_edges: m, the true undirected edge count. num_pairs: P = N(N-1)/2, >= 2.
        epsilon: eps2 > 0. rng: numpy Generator (one Laplace draw).

    Returns:
        ``(M, LaplaceDpEvent(1/epsilon))``: M in [1, P - 1]; pure epsilon-DP under one edge added
        or removed (the rounding and the clipping are post-processing).

    Raises:
        ValueError: epsilon not a finite number > 0, or P < 2.
    """
    check_epsilon(epsilon)
    if num_pairs < 2:
        raise ValueError(f"need at least 2 node pairs (3 nodes) for a noisy edge count in [1, P - 1] (got {num_pairs})")
    noisy = num_edges + rng.laplace(0.0, 1.0 / epsilon)
    return int(np.clip(np.rint(noisy), 1, num_pairs - 1)), dp_event.LaplaceDpEvent(1.0 / epsilon)


def distinct_uniform(population: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` distinct integers drawn uniformly without replacement from ``[0, population)``.

    O(count log count) time and O(count) memory (``Generator.choice(replace=False)`` permutes the
    whole population once ``count`` exceeds 2% of it): rounds of uniform draws are merged until
    ``count`` distinct values are seen, then a uniform ``count``-subset of them is kept. The
    process is invariant under relabelling ``[0, population)`` and stops on sizes only, so the set
    of distinct values is a uniform subset of its size, and so is the subset kept. When ``count``
    is more than half the population, the ``population - count`` values left out are drawn
    instead (the output then has more than ``population / 2`` entries anyway).

    Args:
        population: >= 0. count: in [0, population]. rng: numpy Generator.

    Returns:
        ``[count]`` sorted, distinct int64 values.

    Raises:
        ValueError: ``count`` outside ``[0, population]``.
    """
    if not 0 <= count <= population:
        raise ValueError(f"cannot draw {count} distinct values from {population}")
    if 2 * count > population:
        keep = np.ones(population, dtype=bool)
        keep[distinct_uniform(population, population - count, rng)] = False
        return np.flatnonzero(keep).astype(np.int64)
    chosen = np.empty(0, dtype=np.int64)
    while chosen.size < count:
        need = count - chosen.size
        size = int(need * 1.2 * population / (population - chosen.size)) + 16
        chosen = np.union1d(chosen, rng.integers(0, population, size=size, dtype=np.int64))
    if chosen.size > count:
        chosen = np.sort(chosen[rng.permutation(chosen.size)[:count]])
    return chosen


def _uniform_non_edges(edge_codes: np.ndarray, num_pairs: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` distinct codes drawn uniformly among the P - m codes not in ``edge_codes``: uniform
    distinct ranks among the non-edges, mapped to codes by :func:`non_edge_offsets`."""
    if count <= 0:
        return np.empty(0, dtype=np.int64)
    return non_edge_offsets(edge_codes, distinct_uniform(num_pairs - edge_codes.size, count, rng))


def threshold_cells(edge_codes: np.ndarray, num_nodes: int, *, target: int, epsilon: float,
                    rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """TmF's filter given M: the cells whose value plus Lap(1/epsilon) exceeds theta(M).

    Each true edge is kept independently with probability p1 (one uniform draw per edge); a
    Binomial(P - m, p0) number of non-edges is chosen uniformly without replacement. The output's
    law is the product of Bernoulli(p1) over the edge cells and Bernoulli(p0) over the non-edge
    cells, i.e. exactly the set of cells of A + Lap(1/epsilon) above theta.

    Args:
        edge_codes: ``[m]`` sorted, distinct int64 pair codes of the true edges.
        num_nodes: N (>= 3). target: M in [1, P - 1]. epsilon: eps1 > 0. rng: numpy Generator.

    Returns:
        ``(codes, info)``: the released cells' pair codes ``[E']`` (unsorted: the kept edges, then
        the added non-edges), and ``{"theta", "p_edge" (p1), "p_non_edge" (p0)}``, functions of M
        and eps1 only.
    """
    num_pairs = num_nodes * (num_nodes - 1) // 2
    theta = tmf_threshold(num_pairs, target, epsilon)
    p0, p1 = pass_probabilities(theta, epsilon)
    kept = edge_codes[rng.random(edge_codes.size) < p1]
    added = _uniform_non_edges(edge_codes, num_pairs, int(rng.binomial(num_pairs - edge_codes.size, p0)), rng)
    return np.concatenate([kept, added]), {"theta": theta, "p_edge": p1, "p_non_edge": p0}


def _top_laplace_order_statistics(count: int, population: int, epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """The ``count`` largest of ``population`` i.i.d. Lap(1/epsilon) values, descending, in O(count).

    With E_i i.i.d. Exp(1), Gamma_k = E_1 + ... + E_k and T = Gamma_{population + 1}, the vector
    (Gamma_k / T)_{k <= count} is distributed as the ``count`` smallest of ``population`` i.i.d.
    uniforms (Rényi's representation); T = Gamma_count + Gamma(population - count + 1). Mapping a
    uniform s through the inverse survival function S^-1(s) = -ln(2s)/eps (s <= 1/2),
    ln(2(1 - s))/eps (s > 1/2) gives the largest Laplace values, in decreasing order.
    """
    if count <= 0:
        return np.empty(0)
    gam = np.cumsum(rng.standard_exponential(count))
    total = gam[-1] + rng.standard_gamma(population - count + 1)
    s = gam / total
    low = s <= 0.5
    out = np.empty(count)
    out[low] = -np.log(2.0 * s[low]) / epsilon
    out[~low] = np.log(2.0 * (total - gam[~low]) / total) / epsilon  # 1 - s without cancellation
    return out


def top_m_cells(edge_codes: np.ndarray, num_nodes: int, *, target: int, epsilon: float,
                rng: np.random.Generator) -> np.ndarray:
    """The exact top-M cells of A + Lap(1/epsilon), in O((m + M) log(m + M)).

    The m edge cells get 1 + Lap(1/epsilon) each; of the P - m non-edge cells only the
    K = min(M, P - m) largest noisy values can reach the top M, and they are drawn directly as
    order statistics (:func:`_top_laplace_order_statistics`). The top M of those m + K values is
    taken; the k0 selected non-edge cells get uniformly random distinct identities among the
    non-edges (the non-edge cells are i.i.d., so which of them are selected is a uniform k0-subset,
    independent of their values).

    Args:
        edge_codes: ``[m]`` sorted, distinct int64 pair codes of the true edges.
        num_nodes: N (>= 3). target: M in [1, P - 1]. epsilon: eps1 > 0. rng: numpy Generator.

    Returns:
        ``[M]`` pair codes of the released cells (unsorted).
    """
    num_pairs = num_nodes * (num_nodes - 1) // 2
    free = num_pairs - edge_codes.size
    zeros = _top_laplace_order_statistics(min(target, free), free, epsilon, rng)
    values = np.concatenate([1.0 + rng.laplace(0.0, 1.0 / epsilon, size=edge_codes.size), zeros])
    chosen = np.argpartition(-values, target - 1)[:target] if target < values.size else np.arange(values.size)
    kept = edge_codes[chosen[chosen < edge_codes.size]]
    added = _uniform_non_edges(edge_codes, num_pairs, int(np.count_nonzero(chosen >= edge_codes.size)), rng)
    return np.concatenate([kept, added])


def top_m_filter(pairs: np.ndarray, num_nodes: int, *, epsilon: float, count_fraction: float,
                 mode: Literal["threshold", "topm"] = "threshold",
                 rng: np.random.Generator) -> tuple[np.ndarray, list[tuple[str, dp_event.DpEvent]], dict]:
    """Release a graph under edge-level pure epsilon-DP by TmF (module docstring).

    Args:
        pairs: ``[2, m]`` int64 undirected edges, each once with u < v, no self-loop (e.g.
            :func:`graphpriv.data.graph.undirected_pairs` of a checked graph).
        num_nodes: N >= 3 (public). epsilon: total budget, > 0.
        count_fraction: share eps2 / epsilon of the noisy edge count, in (0, 1).
        mode: ``"threshold"`` (TmF's filter) or ``"topm"`` (exact top-M). rng: numpy Generator.

    Returns:
        ``(released, events, info)``: ``released`` ``[2, E']`` int64 pairs u < v sorted by pair
        code, distinct; ``events`` ``[("edge count", LaplaceDpEvent(1/eps2)), ("cells",
        LaplaceDpEvent(1/eps1))]``; ``info`` (release-derived numbers only): ``mode``,
        ``noisy_edge_count`` M, ``eps_count``, ``eps_cells``, ``released_edges`` and, for
        ``threshold``, ``theta``, ``p_edge``, ``p_non_edge``.

    Raises:
        ValueError: epsilon not a finite number > 0, count_fraction outside (0, 1), an unknown
            mode, N < 3, or pairs not ``[2, m]`` distinct u < v pairs inside ``[0, N)``.
    """
    check_epsilon(epsilon)
    if not 0 < count_fraction < 1:
        raise ValueError(f"'count_fraction' must be in (0, 1) (got {count_fraction})")
    if mode not in MODES:
        raise ValueError(f"'mode' must be one of {', '.join(MODES)} (got {mode!r})")
    if num_nodes < 3:
        raise ValueError(f"TmF needs at least 3 nodes (got {num_nodes}): the noisy edge count lies in [1, P - 1]")
    pairs = np.asarray(pairs, dtype=np.int64).reshape(2, -1)
    if pairs.size and (pairs.min() < 0 or pairs.max() >= num_nodes or not bool((pairs[0] < pairs[1]).all())):
        raise ValueError(f"'pairs' must be u < v node pairs in [0, {num_nodes})")
    edge_codes = np.sort(pair_codes(pairs, num_nodes))
    if edge_codes.size > 1 and not bool((edge_codes[1:] > edge_codes[:-1]).all()):
        raise ValueError("'pairs' must be distinct (each undirected edge once)")
    eps_count, eps_cells = count_fraction * epsilon, (1.0 - count_fraction) * epsilon
    num_pairs = num_nodes * (num_nodes - 1) // 2
    target, count_event = noisy_edge_count(edge_codes.size, num_pairs, epsilon=eps_count, rng=rng)
    info: dict = {"mode": mode, "noisy_edge_count": target, "eps_count": eps_count, "eps_cells": eps_cells}
    if mode == "threshold":
        codes, extra = threshold_cells(edge_codes, num_nodes, target=target, epsilon=eps_cells, rng=rng)
        info.update(extra)
    else:
        codes = top_m_cells(edge_codes, num_nodes, target=target, epsilon=eps_cells, rng=rng)
    released = decode_pairs(np.sort(codes), num_nodes)
    info["released_edges"] = int(released.shape[1])
    events = [("edge count", count_event), ("cells", dp_event.LaplaceDpEvent(1.0 / eps_cells))]
    return released, events, info
