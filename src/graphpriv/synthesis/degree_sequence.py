"""DP-1K: an edge-level DP degree sequence (Hay et al.'s constrained inference) and Chung–Lu graphs.

Sources: Hay, Li, Miklau, Jensen, "Accurate Estimation of the Degree Distribution of Private
Networks" (ICDM 2009), the sorted degree sequence query and its constrained inference (the
least-squares non-decreasing fit of the noisy sorted sequence); Chung & Lu, "Connected components
in random graphs with given expected degree sequences" (Annals of Combinatorics 2002), in the
erased Poisson form of Norros & Reittu, "On a conditionally Poissonian graph process" (Advances in
Applied Probability 2006).

Setting. N nodes (public); neighbouring graphs differ by adding or removing one undirected edge
(dp-accounting's ``ADD_OR_REMOVE_ONE``).

Release (:func:`release_degree_sequence`), pure epsilon-DP:

1. s = the degree sequence sorted ascending, ``[N]``.
2. s~ = s + Lap(2/epsilon) on each of the N entries: the Laplace mechanism with L1 sensitivity 2
   (:func:`sorted_degrees`, proof there). Event ``LaplaceDpEvent(1/epsilon)`` (dp-accounting's
   noise multiplier is the scale over the L1 sensitivity: (2/epsilon) / 2).
3. Constrained inference (post-processing): s_bar = the non-decreasing sequence closest to s~ in
   L2 (isotonic regression, pool-adjacent-violators, ``sklearn.isotonic.IsotonicRegression``),
   then rounded to integers and clipped to [0, N - 1]; rounding and clipping keep it
   non-decreasing.

Construction (:func:`chung_lu_pairs`, post-processing, no privacy cost): the released sorted
degrees are given to a uniformly random permutation of the nodes (never matched to the nodes'
true degree ranks, which would read the data), and a graph is drawn with those expected degrees.
"""

from __future__ import annotations

import numpy as np
from dp_accounting import dp_event
from sklearn.isotonic import IsotonicRegression

from graphpriv.data.graph import decode_pairs, pair_codes
from graphpriv.privacy.accountant import check_epsilon

__all__ = [
    "SORTED_DEGREE_SENSITIVITY",
    "chung_lu_pairs",
    "constrained_inference",
    "degrees",
    "release_degree_sequence",
    "sorted_degrees",
]

#: L1 sensitivity of the sorted degree sequence under one undirected edge added or removed.
SORTED_DEGREE_SENSITIVITY = 2.0


def degrees(pairs: np.ndarray, num_nodes: int) -> np.ndarray:
    """Node degrees ``[N]`` int64 of the undirected graph whose edges are ``pairs`` ``[2, m]``
    (each edge once, no self-loop)."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(2, -1)
    return np.bincount(pairs.ravel(), minlength=num_nodes).astype(np.int64)


def sorted_degrees(pairs: np.ndarray, num_nodes: int) -> np.ndarray:
    """The degree sequence sorted ascending, ``[N]`` int64: Hay et al.'s query S.

    Sensitivity (L1 = 2, attained by every neighbouring pair). Adding the edge {u, v} (u != v)
    raises d_u and d_v by 1 each; do it one endpoint at a time. Raising one entry of value x by 1
    changes the sorted vector in exactly one position: the last position j holding x becomes x + 1,
    and the vector stays sorted (the entry after j, if any, is > x, so >= x + 1) and is the sorted
    vector of the new multiset. So each endpoint moves one position by +1 (L1 change 1), and by the
    triangle inequality the whole edge moves s by at most 2 in L1. The sum of s grows by exactly 2
    and every change is an increase, so the L1 change is exactly 2 (removing an edge is the
    reverse). ``tests/synthesis/test_degree_sequence.py`` checks this on every graph on 5 nodes and
    every added edge.

    Args:
        pairs: ``[2, m]`` int64 undirected edges, each once, no self-loop. num_nodes: N.

    Returns:
        ``[N]`` int64, non-decreasing.
    """
    return np.sort(degrees(pairs, num_nodes))


def constrained_inference(noisy: np.ndarray, num_nodes: int) -> np.ndarray:
    """Hay et al.'s constrained inference of a noisy sorted degree sequence (post-processing).

    The least-squares non-decreasing fit of ``noisy`` (isotonic regression by
    ``sklearn.isotonic.IsotonicRegression``, pool-adjacent-violators, O(N)), rounded to the
    nearest integer and clipped to [0, N - 1] (both monotone maps, so the result stays
    non-decreasing).

    Args:
        noisy: ``[N]`` float, the noisy sorted sequence s~. num_nodes: N (the upper clip N - 1).

    Returns:
        ``[N]`` int64, non-decreasing, in [0, N - 1].
    """
    noisy = np.asarray(noisy, dtype=np.float64)
    if noisy.size == 0:
        return np.empty(0, dtype=np.int64)
    fit = IsotonicRegression(increasing=True).fit_transform(np.arange(noisy.size, dtype=np.float64), noisy)
    return np.clip(np.rint(fit), 0, max(num_nodes - 1, 0)).astype(np.int64)


def release_degree_sequence(pairs: np.ndarray, num_nodes: int, *, epsilon: float,
                            rng: np.random.Generator) -> tuple[np.ndarray, dp_event.DpEvent]:
    """DP-1K's release: the sorted degree sequence with Lap(2/epsilon) noise, constrained inference.

    Args:
        pairs: ``[2, m]`` int64 undirected edges, each once with u < v, no self-loop (e.g.
            :func:`graphpriv.data.graph.undirected_pairs` of a checked graph).
        num_nodes: N >= 1 (public). epsilon: > 0. rng: numpy Generator (N Laplace draws).

    Returns:
        ``(released, LaplaceDpEvent(1/epsilon))``: ``released`` ``[N]`` int64 non-decreasing in
        [0, N - 1] (the expected degrees, in degrees, of a node chosen by rank); pure epsilon-DP
        under one undirected edge added or removed.

    Raises:
        ValueError: epsilon not a finite number > 0, or pairs outside ``[0, N)``.
    """
    check_epsilon(epsilon)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(2, -1)
    if pairs.size and (pairs.min() < 0 or pairs.max() >= num_nodes):
        raise ValueError(f"'pairs' must hold node ids in [0, {num_nodes})")
    scale = SORTED_DEGREE_SENSITIVITY / epsilon
    noisy = sorted_degrees(pairs, num_nodes) + rng.laplace(0.0, scale, size=num_nodes)
    return constrained_inference(noisy, num_nodes), dp_event.LaplaceDpEvent(1.0 / epsilon)


def chung_lu_pairs(weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A Chung–Lu graph with expected degrees ``weights``, erased Poisson form, in O(S log N).

    Exactly: with S = sum(w), draw L ~ Poisson(S / 2) edges, each endpoint independently with
    P(node i) = w_i / S (an integer in [0, S) located in the cumulative weights, exact for integer
    weights); drop self-loops and merge duplicate pairs. By Poisson splitting the multiplicities of
    the pairs {u, v} are independent Poisson(w_u w_v / S), so the result has each pair
    independently with probability p_uv = 1 - exp(-w_u w_v / S) (Norros & Reittu 2006; Chung–Lu's
    min(1, w_u w_v / S) to first order). Preserved in expectation: the multigraph before erasure
    has degree w_u at every node (self-loops counted twice) and S / 2 edges; after erasure node u
    keeps E[d_u] = sum_{v != u} (1 - exp(-w_u w_v / S)) <= w_u (1 - w_u / S), so hubs lose the
    most (when w_u^2 is not small against S).

    Args:
        weights: ``[N]`` non-negative integers (the expected degrees, node by node).
        rng: numpy Generator.

    Returns:
        ``[2, E']`` int64 pairs u < v, distinct, sorted by pair code; ``[2, 0]`` when S = 0.

    Raises:
        ValueError: negative or non-integer weights.
    """
    w = np.asarray(weights)
    if w.ndim != 1 or not np.issubdtype(w.dtype, np.integer) or (w.size and int(w.min()) < 0):
        raise ValueError("'weights' must be a 1-D array of non-negative integers")
    n = int(w.size)
    cumulative = np.cumsum(w.astype(np.int64))
    total = int(cumulative[-1]) if n else 0
    if total == 0 or n < 2:
        return np.empty((2, 0), dtype=np.int64)
    draws = int(rng.poisson(total / 2.0))
    ends = np.searchsorted(cumulative, rng.integers(0, total, size=(2, draws), dtype=np.int64), side="right")
    ends = ends[:, ends[0] != ends[1]]
    return decode_pairs(np.unique(pair_codes(ends, n)), n)
