"""The DPAR paper's composition of M released rows (its Theorem 1), used by ``paper`` accounting only.

Source: Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with Node-Level
Differential Privacy" (WWW 2024), Sec. 3.1, Theorem 1: M rows, each (eps_row, delta_row)-DP with
delta_row = delta / (2M), are claimed (eps, delta)-DP when

    eps_row = eps / (2 sqrt(M ln(e + eps / delta))).

graphpriv reproduces the claim to report the paper's own numbers; its rigorous accounting composes
the rows with :func:`graphpriv.privacy.analysis.top_k.compose_approx_dp` or in RDP instead.
"""

from __future__ import annotations

import math

from scipy.optimize import brentq

__all__ = ["paper_row_epsilon", "paper_rows_epsilon"]


def paper_row_epsilon(epsilon: float, delta: float, rows: int) -> float:
    """Theorem 1 inverted: the eps_row each of ``rows`` rows may spend for a total ``epsilon`` at
    ``delta``: epsilon / (2 sqrt(rows ln(e + epsilon / delta))).

    Args:
        epsilon: the total, > 0. delta: the total, in (0, 1). rows: M >= 1.

    Returns:
        eps_row (float, > 0).
    """
    return epsilon / (2 * math.sqrt(rows * math.log(math.e + epsilon / delta)))


def paper_rows_epsilon(row_epsilon: float, rows: int, delta: float) -> float:
    """Theorem 1 forward: the total epsilon of ``rows`` rows of ``row_epsilon`` each at total
    ``delta`` (the inverse of :func:`paper_row_epsilon`, by root finding on [1e-12, 1e6], xtol 1e-12).

    Raises:
        ValueError: no total in [1e-12, 1e6] matches (``row_epsilon`` out of that range's image).
    """
    return brentq(lambda e: paper_row_epsilon(e, delta, rows) - row_epsilon, 1e-12, 1e6, xtol=1e-12)
