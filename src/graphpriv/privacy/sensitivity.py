"""Dependency bounds M: how many training subgraphs one edge change can touch.

Source: DPLP (Ran et al.), Lemma 2 (Eq. 4) and Theorem 1 (Eq. 6). For path subgraphs graphpriv
uses a bound derived per k (:func:`path_bound`): it equals the spec's corrected Eq. 6 for k = 2 and
odd k, and corrects it for even k, where the spec's formula is violated.
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
    """M_gp(k, theta, lam): training links whose k-path subgraph one edge change can alter.

    Derivation (graphpriv; docs/privacy-dplp.md). A link {x, y} is affected by toggling e = (s, q)
    iff e lies on a simple x–y path of length <= k: x ... s q ... y with x at walk distance i from s,
    y at distance j from q, i + j <= k - 1. Let t = min(i, j) (the "near" end, t <= (k-1)/2). At
    most theta^t nodes lie t steps from s (or q), each with at most (1 + lam) theta training links
    (theta edges, lam theta capped negatives) and at most sum_{j=t}^{k-1-t} theta^j far ends, so

        M = sum_{t=0}^{floor((k-1)/2)} c_t,
        c_t = theta^t min((1+lam) theta, theta^t)                         if 2t = k - 1,
        c_t = 2 theta^t min((1+lam) theta, sum_{j=max(t,1)}^{k-1-t} theta^j)  otherwise
        (j >= 1 at t = 0 excludes e's own link, counted separately by :func:`group_size`).

    For k = 2 this is the paper's 2 theta, and for odd k it equals Theorem 1 (Eq. 6) with
    h = (k - 1) / 2, the spec's fix. For even k >= 4 the spec's h = floor((k - 1)/2) is *too small*
    (k = 4 would equal k = 3): a brute-force search finds graphs that exceed it
    (tests/privacy/test_sensitivity.py), so the derivation above is used instead.

    Raises:
        ValueError: k outside 2..6, theta < 1 or lam < 0.
    """
    _check(theta, lam)
    if not 2 <= k <= 6:
        raise ValueError(f"'k' must be in 2..6 (got {k})")
    links = (1 + lam) * theta
    total = 0.0
    for t in range((k - 1) // 2 + 1):
        if 2 * t == k - 1:
            total += theta**t * min(links, theta**t)
        else:
            far = sum(theta**j for j in range(max(t, 1), k - t))
            total += 2 * theta**t * min(links, far)
    return math.ceil(total)


def path_bound_paper(k: int, theta: int, lam: float = 1.0) -> int:
    """Theorem 1 (Eq. 6) exactly as printed, h = floor((k + 1) / 2); ``paper`` accounting only.

    Raises:
        ValueError: k outside 2..6, theta < 1 or lam < 0.
    """
    _check(theta, lam)
    if not 2 <= k <= 6:
        raise ValueError(f"'k' must be in 2..6 (got {k})")
    if k == 2:
        return 2 * theta
    return math.ceil(eq6(theta, lam, h=(k + 1) // 2))


def eq6(theta: int, lam: float, *, h: int) -> float:
    """The right-hand side of Theorem 1 (Eq. 6) for a given h (the paper's and the spec's h differ)."""
    return (sum(2 * lam * theta ** (i + 1) for i in range(h))
            + theta**h * min((1 + lam) * theta, theta**h)
            + 2 * sum(min(theta ** (h + 1), theta**i) for i in range(1, h + 1)))


def group_size(bound: int) -> int:
    """K = M + 1: the M dependent examples plus the changed edge's own example."""
    return int(bound) + 1
