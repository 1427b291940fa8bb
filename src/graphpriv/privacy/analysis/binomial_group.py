"""Multi-term RDP bound for group changes under Poisson sampling.

One privacy unit (a node) changes up to K examples (the training rows that read its features);
each example joins a batch independently with probability q, so the number of changed examples in
a batch is Binomial(K, q). With each changed example moving the clipped sum by at most 2C and the
noise std z 2C K, one step's RDP is the multi-term bound of
:func:`graphpriv.privacy.analysis.hypergeometric.multi_term_rdp` with P[r] = Binomial(K, q).
Source: the argument of Daigavane et al., "Node-level differentially private graph neural
networks" (2021), Theorem 1, with Poisson instead of without-replacement batches; used for DPAR's
DP-SGD (docs/dpar.md, "Privacy": DP-SGD sensitivity).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import binom

from graphpriv.privacy.analysis.hypergeometric import multi_term_rdp

__all__ = ["binomial_group_gaussian_rdp"]


def binomial_group_gaussian_rdp(orders: Sequence[float], *, noise_multiplier: float, sample_rate: float,
                                group_size: int) -> np.ndarray:
    """RDP ``[num_orders]`` (nats) of one Poisson-sampled step where one unit changes ``group_size``
    examples, noise std ``noise_multiplier * 2C * group_size``.

    Raises:
        ValueError: sample_rate outside (0, 1], group_size < 1, noise_multiplier <= 0, orders <= 1.
    """
    if not 0 < sample_rate <= 1:
        raise ValueError(f"'sample_rate' must be in (0, 1] (got {sample_rate})")
    if group_size < 1:
        raise ValueError(f"'group_size' must be >= 1 (got {group_size})")
    log_p = binom.logpmf(np.arange(group_size + 1), group_size, sample_rate)
    return multi_term_rdp(orders, noise_multiplier, log_p)
