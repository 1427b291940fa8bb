"""Basic DP mechanisms. Each returns its output and the DpEvent that describes it; the noisy
rankings of DPLP-rank (at the end) return noise and orders, their events spent by the ranker.

Randomness always comes from an explicit ``torch.Generator`` (``numpy.random.Generator`` for the
graph-sized randomized response and the rankings), never from global state.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from dp_accounting import dp_event, get_sigma_gaussian
from torch import Tensor

from graphpriv.data.graph import decode_pairs, pair_codes
from graphpriv.privacy.accountant import check_delta, check_epsilon
from graphpriv.privacy.events import PureDpEvent


def _check_sensitivity(sensitivity: float) -> float:
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise ValueError(f"'sensitivity' must be a finite number > 0 (got {sensitivity!r})")
    return float(sensitivity)


def laplace_mechanism(
    values: Tensor, *, sensitivity: float, epsilon: float, generator: torch.Generator
) -> tuple[Tensor, dp_event.DpEvent]:
    """Add Laplace(sensitivity / epsilon) noise to every entry.

    Privacy: pure epsilon-DP when ``sensitivity`` bounds the L1 change of ``values`` under the
    caller's neighbouring relation. Event: ``LaplaceDpEvent(noise_multiplier=1/epsilon)``.

    Args:
        values: Any shape, float. sensitivity: L1 sensitivity, > 0. epsilon: > 0.
        generator: Randomness.

    Returns:
        ``(noisy values of the same shape, event)``; the input is not modified.

    Raises:
        ValueError: epsilon <= 0 or sensitivity <= 0.

    References:
        Dwork, McSherry, Nissim, Smith, TCC 2006.
    """
    check_epsilon(epsilon)
    scale = _check_sensitivity(sensitivity) / epsilon
    u = torch.rand(values.shape, generator=generator, dtype=torch.float64) - 0.5
    noise = -scale * torch.sign(u) * torch.log1p(-2 * u.abs())
    return values + noise.to(values.dtype), dp_event.LaplaceDpEvent(1.0 / epsilon)


def gaussian_noise(shape: Sequence[int], std: float, *, generator: torch.Generator,
                   dtype: torch.dtype = torch.float32, out: Tensor | None = None) -> Tensor:
    """Entries i.i.d. N(0, ``std``^2): graphpriv's one Gaussian draw (gradient noise, and
    :func:`gaussian_mechanism`'s).

    Two forms of the same draw: without ``out``, ``torch.randn(shape, generator=generator,
    dtype=dtype) * std`` (a new tensor); with ``out``, ``out.normal_(0, std, generator=generator)``
    in place (no allocation: PrivDPR's persistent ``[N, r]`` buffer). Both consume the generator
    alike, but PyTorch draws tensors of fewer than 16 entries by a scalar path, where the two forms
    may round differently in the last bit (they are equal from 16 entries on): each caller keeps its
    form, so a fit's noise is the same stream, bit for bit, as before this function existed (tested).

    Args:
        shape: the noise's shape (ignored with ``out``: ``out``'s). std: >= 0 and finite.
        generator: the noise's randomness. dtype: without ``out`` (default float32).
        out: a tensor to draw into, or None.

    Returns:
        The noise, ``shape`` (or ``out`` itself, filled).

    Raises:
        ValueError: ``std`` negative or not finite.

    References:
        Abadi et al., "Deep learning with differential privacy" (CCS 2016), Alg. 1 (the noise step).
    """
    if not (math.isfinite(std) and std >= 0):
        raise ValueError(f"'std' must be a finite number >= 0 (got {std})")
    if out is not None:
        return out.normal_(0.0, std, generator=generator)
    return torch.randn(tuple(shape), generator=generator, dtype=dtype) * std


def gaussian_mechanism(
    values: Tensor, *, sensitivity: float, noise_multiplier: float, generator: torch.Generator
) -> tuple[Tensor, dp_event.DpEvent]:
    """Add N(0, (noise_multiplier * sensitivity)^2) noise to every entry.

    Privacy: event ``GaussianDpEvent(noise_multiplier)`` when ``sensitivity`` bounds the L2 change.
    Use :func:`gaussian_noise_multiplier` for a single (epsilon, delta) release.

    Args:
        values: Any shape, float. sensitivity: L2 sensitivity, > 0. noise_multiplier: > 0.
        generator: Randomness.

    Returns:
        ``(noisy values, event)``.

    Raises:
        ValueError: non-positive sensitivity or noise multiplier.
    """
    _check_sensitivity(sensitivity)
    if not noise_multiplier > 0:
        raise ValueError(f"'noise_multiplier' must be > 0 (got {noise_multiplier})")
    noise = gaussian_noise(values.shape, noise_multiplier * sensitivity, generator=generator, dtype=values.dtype)
    return values + noise, dp_event.GaussianDpEvent(noise_multiplier)


def gaussian_noise_multiplier(*, epsilon: float, delta: float) -> float:
    """Noise multiplier of a single Gaussian release meeting (epsilon, delta) exactly.

    Uses the analytic Gaussian mechanism (Balle & Wang, ICML 2018) through dp-accounting, valid
    for every epsilon > 0 (the classic sqrt(2 ln(1.25/delta))/epsilon is valid only for eps < 1).

    Raises:
        PrivacyError: bad epsilon or delta.
    """
    return float(get_sigma_gaussian(check_epsilon(epsilon), check_delta(delta)))


def gumbel_top_k(
    scores: Tensor, *, k: int, epsilon: float, sensitivity: float, generator: torch.Generator,
    monotonic: bool = False, noise_scale: float = 1.0,
) -> tuple[Tensor, dp_event.DpEvent]:
    """Pick k items by the exponential mechanism, k times without replacement, via Gumbel noise.

    Adding Gumbel(2 * sensitivity * k / epsilon) noise (``sensitivity * k / epsilon`` when the
    scores are monotonic in the data) and taking the top k is distributed exactly as k rounds of
    the exponential mechanism with epsilon / k each (Durfee & Rogers, NeurIPS 2019).

    Privacy: pure epsilon-DP; event = k-fold composition of ``PureDpEvent(epsilon / k)``.

    Args:
        scores: Utilities, shape ``[num_items]``. k: 1 <= k <= num_items. epsilon: total, > 0.
        sensitivity: Max change of any one score, > 0. generator: Randomness.
        monotonic: All scores move in the same direction under a neighbour change.
        noise_scale: factor on the Gumbel scale, for a privacy audit only
            (:class:`~graphpriv.privacy.hooks.AuditHook`: 0.01 is the deliberate fault of noise 100x
            too small); the event still claims ``epsilon``. 1.0: the mechanism.

    Returns:
        ``(indices [k] in selection order, event)``.

    Raises:
        ValueError: bad k, epsilon or sensitivity, or scores not one-dimensional.
    """
    check_epsilon(epsilon)
    _check_sensitivity(sensitivity)
    if scores.dim() != 1:
        raise ValueError(f"'scores' must be one-dimensional (got shape {tuple(scores.shape)})")
    if not 1 <= k <= scores.numel():
        raise ValueError(f"'k' must be in [1, {scores.numel()}] (got {k})")
    per_round = epsilon / k
    scale = (1.0 if monotonic else 2.0) * sensitivity / per_round * noise_scale
    u = torch.rand(scores.shape, generator=generator, dtype=torch.float64).clamp_min(1e-300)
    noisy = scores.to(torch.float64) - scale * torch.log(-torch.log(u))
    event = dp_event.SelfComposedDpEvent(PureDpEvent(per_round), k)
    return torch.topk(noisy, k).indices, event


def non_edge_offsets(edge_offsets: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Positions of the non-edges of given ranks in a block whose edges sit at ``edge_offsets``.

    The r-th free slot (0-based) of a block whose occupied slots are the sorted distinct
    ``edge_offsets`` e_0 < e_1 < ... is ``r + #{i : e_i - i <= r}``.

    Args:
        edge_offsets: ``[m]`` sorted distinct int64 occupied positions. ranks: ``[k]`` int64 ranks.

    Returns:
        ``[k]`` int64 positions (sorted when ``ranks`` is).
    """
    shifted = edge_offsets - np.arange(edge_offsets.size)
    return ranks + np.searchsorted(shifted, ranks, side="right")


def randomized_response_edges(
    edge_index: np.ndarray, num_nodes: int, *, epsilon: float, rng: np.random.Generator,
    block_entries: int = 1 << 24, noise_scale: float = 1.0,
) -> tuple[np.ndarray, dp_event.DpEvent]:
    """EdgeRand: flip every upper-triangular adjacency bit with probability 1 / (1 + e^epsilon).

    Equivalently, with probability s = 2 / (1 + e^epsilon) a bit is replaced by a fair coin
    (LinkTeller's EdgeRand). Sparse and blocked: each existing edge survives with probability
    e^eps / (1 + e^eps); the upper triangle is cut into blocks of ``block_entries`` pair codes, and
    in each block a Binomial(#non-edges, flip) number of its non-edges, chosen uniformly without
    replacement, is switched on. Memory is O(block_entries + output), never N x N. The expected
    output size, ``|E| e^eps/(1+e^eps) + (N(N-1)/2 - |E|) / (1+e^eps)``, is large for small
    epsilon (about N^2 / 2e for epsilon = 1).

    Privacy: edge-level. The input is the bit vector of the upper triangle; adding or removing one
    edge replaces one bit, and each bit goes through binary randomized response, so the release is
    epsilon-DP. Event ``RandomizedResponseDpEvent(noise_parameter=2/(1+e^eps), num_buckets=2)``,
    to be composed under dp-accounting's ``REPLACE_ONE`` relation over the bits.

    Args:
        edge_index: Undirected edges, shape ``[2, E]`` (any order; duplicates are merged), int.
        num_nodes: N. epsilon: > 0. rng: numpy Generator. block_entries: pair codes per block.
        noise_scale: the flip probability times this factor (1.0; other values only from a
            privacy audit's fault test, :class:`graphpriv.privacy.hooks.AuditHook`: the event
            still claims epsilon).

    Returns:
        ``(noisy edges [2, E'] with u < v, event)``.

    Raises:
        ValueError: bad epsilon, or ids out of [0, num_nodes).

    References:
        Warner, JASA 1965; Wu, Long, Gunter, Gong, "LinkTeller" (IEEE S&P 2022), EdgeRand.
    """
    check_epsilon(epsilon)
    edge_index = np.asarray(edge_index, dtype=np.int64).reshape(2, -1)
    if edge_index.size and (edge_index.min() < 0 or edge_index.max() >= num_nodes):
        raise ValueError(f"edge ids must lie in [0, {num_nodes}) (got max {edge_index.max()})")
    flip = noise_scale / (1.0 + math.exp(epsilon))
    edge_index = edge_index[:, edge_index[0] != edge_index[1]]
    codes = np.unique(pair_codes(edge_index, num_nodes))
    out = [codes[rng.random(codes.size) >= flip]]
    num_pairs = num_nodes * (num_nodes - 1) // 2
    for start in range(0, num_pairs, block_entries):
        stop = min(start + block_entries, num_pairs)
        lo, hi = np.searchsorted(codes, [start, stop])
        free = (stop - start) - (hi - lo)
        count = rng.binomial(free, flip)
        if count:
            ranks = np.sort(rng.choice(free, size=count, replace=False))
            out.append(start + non_edge_offsets(codes[lo:hi] - start, ranks))
    event = dp_event.RandomizedResponseDpEvent(noise_parameter=2 / (1.0 + math.exp(epsilon)), num_buckets=2)
    return decode_pairs(np.concatenate(out), num_nodes), event


# -- noisy rankings, for one query at a time, vectorised over many queries ---------------------------
#
# Source: De & Chakrabarti, "Differentially Private Link Prediction With Protected Connections"
# (AAAI 2021), Eq. 3 and Sec. 4.2 (iterated exponential mechanism via Gumbel noise, Durfee & Rogers,
# NeurIPS 2019, Lemma 4.2); App. 14.4 (Laplace and staircase baselines); Geng & Viswanath, "The
# optimal noise-adding mechanism in differential privacy" (IEEE Trans. Inf. Theory 2016),
# Algorithm 1, for staircase noise.
#
# Neighbouring relation: u-neighbouring graphs (paper Def. 1): they differ only in the protected
# pairs of one node w != u, other than (w, u). With utilities in [f(0), f(1)] on every such graph,
# adding Gumbel noise of scale 2 (f(1) - f(0)) / eps_p to every candidate's utility and taking the
# top K is distributed exactly as K rounds of the exponential mechanism with eps_p each: the top-K
# list is K eps_p-protected-pair DP (paper Prop. 4).


def gumbel_noise(size: int, scale: np.ndarray | float, rng: np.random.Generator) -> np.ndarray:
    """``scale * Gumbel(0, 1)``, ``[size]`` float64 (``scale`` broadcasts)."""
    return np.asarray(scale) * rng.gumbel(size=size)


def laplace_noise(size: int, scale: np.ndarray | float, rng: np.random.Generator) -> np.ndarray:
    """``Laplace(0, scale)``, ``[size]`` float64."""
    return rng.laplace(scale=1.0, size=size) * np.asarray(scale)


def staircase_noise(size: int, *, epsilon: float, sensitivity: np.ndarray | float, rng: np.random.Generator,
                    gamma: float | None = None) -> np.ndarray:
    """Staircase noise (Geng & Viswanath 2016, Algorithm 1), ``[size]`` float64.

    The density is a symmetric staircase: a(gamma) e^{-k eps} on [k D, (k + gamma) D) and
    a(gamma) e^{-(k+1) eps} on [(k + gamma) D, (k + 1) D), k = 0, 1, ..., with D the sensitivity.
    Adding it to a numeric query of sensitivity D is eps-DP; gamma defaults to the optimal
    1 / (1 + e^{eps / 2}).

    Raises:
        ValueError: epsilon <= 0, gamma outside [0, 1] or a negative sensitivity.
    """
    if epsilon <= 0:
        raise ValueError(f"'epsilon' must be > 0 (got {epsilon})")
    if gamma is None:
        gamma = 1.0 / (1.0 + np.exp(epsilon / 2.0))
    if not 0 <= gamma <= 1:
        raise ValueError(f"'gamma' must be in [0, 1] (got {gamma})")
    d = np.asarray(sensitivity, dtype=np.float64)
    if (d < 0).any():
        raise ValueError("'sensitivity' must be >= 0")
    b = np.exp(-epsilon)
    sign = rng.choice(np.array([-1.0, 1.0]), size=size)
    geo = rng.geometric(1.0 - b, size=size) - 1.0  # P(G = i) = (1 - b) b^i, i >= 0
    u = rng.random(size)
    upper = rng.random(size) < (1 - gamma) * b / (gamma + (1 - gamma) * b)  # B = 1: the lower step
    x = np.where(upper, geo + gamma + (1 - gamma) * u, geo + gamma * u)
    return sign * x * d


def rank_within_queries(ptr: np.ndarray, scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per query (segment ``ptr[i]:ptr[i+1]``), the positions of its entries sorted by decreasing
    score, ties broken uniformly at random; returns one permutation ``[T]``, query by query.

    Random tie-breaking is part of the mechanism: with a constant utility (a transform whose
    range training collapsed to 0 gives noise scale 0) the exponential mechanism samples
    uniformly, and a deterministic order would instead release the candidates' storage order.
    """
    seg = np.repeat(np.arange(ptr.size - 1), np.diff(ptr))
    return np.lexsort((rng.random(scores.size), -scores, seg))
