"""Dependency bounds M: how many training subgraphs one edge change can touch.

Source: DPLP (Ran et al.), Lemma 2 (Eq. 4) and Theorem 1 (Eq. 6), with the typo of Theorem 1
fixed as specs/dplp-subgraph.md decides (h = floor((k - 1) / 2), not floor((k + 1) / 2)).
The bounds assume the projected graph has maximum degree theta and at most lam * theta negative
examples touch any node. They are checked against brute force in tests/privacy/test_sensitivity.py.
"""

from __future__ import annotations

import math


def _check(theta: int, lam: float) -> None:
    if theta < 1:
        raise ValueError(f"'theta' must be >= 1 (got {theta})")
    if lam < 0:
        raise ValueError(f"'lam' (negative sampling rate) must be >= 0 (got {lam})")


def neighbourhood_bound(h: int, theta: int, lam: float = 1.0) -> int:
    """M_gn(h, theta, lam) = (1 + lam) (theta^(h+1) + sum_{i=0}^{h-1} 2 theta^(i+1)) (Lemma 2, Eq. 4).

    Raises:
        ValueError: h < 1, theta < 1 or lam < 0.
    """
    _check(theta, lam)
    if h < 1:
        raise ValueError(f"'h' must be >= 1 (got {h})")
    return math.ceil((1 + lam) * (theta ** (h + 1) + sum(2 * theta ** (i + 1) for i in range(h))))


def path_bound(k: int, theta: int, lam: float = 1.0) -> int:
    """M_gp(k, theta, lam) (Theorem 1, Eq. 6, with h = floor((k - 1) / 2)); 2 theta for k = 2.

    For k >= 3: sum_{i=0}^{h-1} 2 lam theta^(i+1) + theta^h min((1+lam) theta, theta^h)
    + 2 sum_{i=1}^{h} min(theta^(h+1), theta^i).

    Raises:
        ValueError: k outside 2..6, theta < 1 or lam < 0.
    """
    _check(theta, lam)
    if not 2 <= k <= 6:
        raise ValueError(f"'k' must be in 2..6 (got {k})")
    if k == 2:
        return 2 * theta
    h = (k - 1) // 2
    value = (sum(2 * lam * theta ** (i + 1) for i in range(h))
             + theta**h * min((1 + lam) * theta, theta**h)
             + 2 * sum(min(theta ** (h + 1), theta**i) for i in range(1, h + 1)))
    return math.ceil(value)


def group_size(bound: int) -> int:
    """K = M + 1: the M dependent examples plus the changed edge's own example."""
    return int(bound) + 1
