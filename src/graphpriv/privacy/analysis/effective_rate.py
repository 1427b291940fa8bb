"""The DPLP paper's effective sampling rate (``paper`` accounting mode only).

Source: Ran, Ye, Hu, Huang, Xu, Fu, "Differentially Private Graph Neural Networks for Link Prediction" (DPLP),
Sec. VI-A, Theorem 2 and Eq. 13.
"""

from __future__ import annotations

import math

from graphpriv.privacy.analysis.hypergeometric import _check_sizes


def effective_sampling_rate(dataset_size: int, group_size: int, batch_size: int) -> float:
    """rho = 1 - C(N - M, m) / C(N, m): the probability a batch holds at least one changed example.

    Args:
        dataset_size: N training examples. group_size: M dependent examples. batch_size: m.

    Returns:
        rho in [0, 1] (1 when N - M < m).

    Raises:
        ValueError: bad sizes.
    """
    _check_sizes(dataset_size, group_size, batch_size)
    if dataset_size - group_size < batch_size:
        return 1.0
    log_ratio = (
        math.lgamma(dataset_size - group_size + 1)
        - math.lgamma(dataset_size - group_size - batch_size + 1)
        - math.lgamma(dataset_size + 1)
        + math.lgamma(dataset_size - batch_size + 1)
    )
    return float(min(1.0, max(0.0, -math.expm1(log_ratio))))
