"""Multi-term RDP bound for group changes under sampling without replacement.

Source: Daigavane, Madan, Sinha, Thakurta, Aggarwal, Jain, "Node-level differentially private
graph neural networks" (2021), Theorem 1; DPLP-subgraph's rigorous accounting (docs/privacy-dplp.md,
step 6).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import logsumexp
from scipy.stats import hypergeom


def hypergeometric_log_pmf(dataset_size: int, group_size: int, batch_size: int) -> np.ndarray:
    """log P[r] for r = 0..min(group_size, batch_size) of Hypergeometric(N, K, m).

    Args:
        dataset_size: N, number of examples (>= 1).
        group_size: K, examples one privacy unit changes (1 <= K <= N).
        batch_size: m, examples drawn uniformly without replacement (1 <= m <= N).

    Returns:
        Array of shape ``[min(K, m) + 1]`` (entries may be -inf where P[r] = 0).

    Raises:
        ValueError: if the sizes are out of range.
    """
    _check_sizes(dataset_size, group_size, batch_size)
    r = np.arange(min(group_size, batch_size) + 1)
    return hypergeom.logpmf(r, dataset_size, group_size, batch_size)


def hypergeometric_group_gaussian_rdp(
    orders: Sequence[float],
    *,
    noise_multiplier: float,
    dataset_size: int,
    batch_size: int,
    group_size: int,
) -> np.ndarray:
    r"""RDP of one step of the multi-term bound, at each order.

    .. math::
        \varepsilon(\alpha) = \frac{1}{\alpha-1}\log\sum_{r=0}^{K_b} P[r]\,
        \exp\Big(\frac{\alpha(\alpha-1)}{2z^2}\big(\tfrac{r}{K_b}\big)^2\Big),
        \quad K_b = \min(K, m).

    The noise standard deviation is ``z * 2C * K_b``; r changed examples move the clipped sum by at
    most ``2C r``. Valid for every real order alpha > 1 (joint convexity of the Rényi integral over
    the mixture of batches).

    Args:
        orders: RDP orders alpha > 1, shape ``[num_orders]``.
        noise_multiplier: z > 0 (noise std divided by the group sensitivity 2C K_b).
        dataset_size: N. batch_size: m. group_size: K (see :func:`hypergeometric_log_pmf`).

    Returns:
        RDP values, shape ``[num_orders]``, in nats.

    Raises:
        ValueError: non-positive noise multiplier, orders <= 1, or bad sizes.
    """
    return multi_term_rdp(orders, noise_multiplier, hypergeometric_log_pmf(dataset_size, group_size, batch_size))


def multi_term_rdp(orders: Sequence[float], noise_multiplier: float, log_p: np.ndarray) -> np.ndarray:
    r"""The multi-term bound for any law of the number r of changed examples in a batch.

    .. math::
        \varepsilon(\alpha) = \frac{1}{\alpha-1}\log\sum_{r=0}^{K_b} P[r]\,
        \exp\Big(\frac{\alpha(\alpha-1)}{2z^2}\big(\tfrac{r}{K_b}\big)^2\Big)

    with K_b = ``len(log_p) - 1`` and noise std ``z * 2C * K_b``. Both directions of the Rényi
    divergence are bounded by it: the two output laws are mixtures over the same batch
    distribution, and exp((alpha - 1) D_alpha(P || Q)) is jointly convex in (P, Q) for alpha > 1.

    Args:
        orders: RDP orders alpha > 1, ``[num_orders]``. noise_multiplier: z > 0.
        log_p: ``[K_b + 1]`` log P[r] for r = 0..K_b (K_b >= 1; -inf allowed).

    Returns:
        RDP values ``[num_orders]`` in nats.

    Raises:
        ValueError: z <= 0, an order <= 1, or K_b < 1.
    """
    if not noise_multiplier > 0:
        raise ValueError(f"'noise_multiplier' must be > 0 (got {noise_multiplier})")
    alphas = np.asarray(orders, dtype=np.float64)
    if np.any(alphas <= 1):
        raise ValueError(f"RDP orders must be > 1 (got min {alphas.min()})")
    kb = len(log_p) - 1
    if kb < 1:
        raise ValueError("log_p must cover r = 0..K_b with K_b >= 1")
    ratio_sq = (np.arange(kb + 1) / kb) ** 2
    finite_alpha = np.where(np.isinf(alphas), 2.0, alphas)
    expo = (finite_alpha * (finite_alpha - 1) / (2 * noise_multiplier**2))[:, None] * ratio_sq
    rdp = logsumexp(log_p[None, :] + expo, axis=1) / (finite_alpha - 1)
    return np.where(np.isinf(alphas), np.inf, np.maximum(rdp, 0.0))


def _check_sizes(dataset_size: int, group_size: int, batch_size: int) -> None:
    if dataset_size < 1:
        raise ValueError(f"'dataset_size' must be >= 1 (got {dataset_size})")
    if not 1 <= group_size <= dataset_size:
        raise ValueError(f"'group_size' must be in [1, dataset_size={dataset_size}] (got {group_size})")
    if not 1 <= batch_size <= dataset_size:
        raise ValueError(
            f"'batch_size' must be in [1, dataset_size={dataset_size}] (got {batch_size}); "
            "use a smaller batch or more training examples"
        )
