"""Basic DP mechanisms. Each returns its output and the DpEvent that describes it.

Randomness always comes from an explicit ``torch.Generator`` (``numpy.random.Generator`` for the
graph-sized randomized response), never from global state.
"""

from __future__ import annotations

import math

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
    noise = torch.randn(values.shape, generator=generator, dtype=values.dtype)
    return values + noise * (noise_multiplier * sensitivity), dp_event.GaussianDpEvent(noise_multiplier)


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
    monotonic: bool = False,
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
    scale = (1.0 if monotonic else 2.0) * sensitivity / per_round
    u = torch.rand(scores.shape, generator=generator, dtype=torch.float64).clamp_min(1e-300)
    noisy = scores.to(torch.float64) - scale * torch.log(-torch.log(u))
    event = dp_event.SelfComposedDpEvent(PureDpEvent(per_round), k)
    return torch.topk(noisy, k).indices, event


def randomized_response_edges(
    edge_index: np.ndarray, num_nodes: int, *, epsilon: float, rng: np.random.Generator
) -> tuple[np.ndarray, dp_event.DpEvent]:
    """Flip every upper-triangular adjacency bit with probability 1 / (1 + e^epsilon).

    Sparse: existing edges survive with probability e^eps / (1 + e^eps); a Binomial number of
    non-edges, chosen uniformly, is switched on. Expected output size is
    ``|E| e^eps/(1+e^eps) + (N(N-1)/2 - |E|) / (1+e^eps)``, which is large for small epsilon.

    Privacy: edge-level; one edge change flips one bit, so relation REPLACE_ONE over the bits.
    Event ``RandomizedResponseDpEvent(noise_parameter=2/(1+e^eps), num_buckets=2)``; pure eps-DP.

    Args:
        edge_index: Undirected edges, shape ``[2, E]`` with each pair once (u < v), int.
        num_nodes: N. epsilon: > 0. rng: numpy Generator.

    Returns:
        ``(noisy edges [2, E'] with u < v, event)``.

    Raises:
        ValueError: bad epsilon, or ids out of [0, num_nodes).

    References:
        Warner, JASA 1965; Mülle et al., "Privacy-integrated graph clustering through
        differential privacy" (EDBT/ICDT workshops 2015).
    """
    check_epsilon(epsilon)
    edge_index = np.asarray(edge_index, dtype=np.int64)
    if edge_index.size and (edge_index.min() < 0 or edge_index.max() >= num_nodes):
        raise ValueError(f"edge ids must lie in [0, {num_nodes}) (got max {edge_index.max()})")
    flip = 1.0 / (1.0 + math.exp(epsilon))
    keep = edge_index[:, rng.random(edge_index.shape[1]) >= flip]
    num_pairs = num_nodes * (num_nodes - 1) // 2
    existing = set(pair_codes(edge_index, num_nodes).tolist())
    num_new = rng.binomial(num_pairs - len(existing), flip)
    codes: set[int] = set()
    while len(codes) < num_new:
        draw = rng.integers(0, num_pairs, size=2 * (num_new - len(codes)) + 16)
        codes.update(c for c in draw.tolist() if c not in existing)
    new = decode_pairs(np.fromiter(codes, np.int64, len(codes))[:num_new], num_nodes)
    event = dp_event.RandomizedResponseDpEvent(noise_parameter=2 * flip, num_buckets=2)
    return np.concatenate([keep, new], axis=1), event
