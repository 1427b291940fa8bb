"""The bounds every user-given epsilon and delta must meet: :data:`MAX_EPSILON`, :func:`check_epsilon`,
:func:`check_delta`; and the rule of the default delta, :func:`delta_below`.

A module of its own, importing neither dp-accounting nor torch, so that the front doors (the
method registry, the command line) check a setting without loading the accountant;
:mod:`graphpriv.privacy.accountant` re-exports the three names.
"""

from __future__ import annotations

import numpy as np

from graphpriv.errors import PrivacyError

__all__ = ["MAX_EPSILON", "check_delta", "check_epsilon", "delta_below"]

#: The largest epsilon a user may ask for (checked where a user's epsilon enters: method configs and
#: audits; budgets derived from it, e.g. eps / q' of DPAR's paper accounting, may exceed it): e^100
#: bounds nothing a user could want, and the PLD accountant's grid for a Laplace event grows with
#: epsilon (at 1e9 it asked for 1.46 TiB).
MAX_EPSILON = 100.0


def check_epsilon(epsilon: float) -> float:
    """Return ``epsilon`` if it is a finite number > 0, else raise :class:`PrivacyError`."""
    if not (isinstance(epsilon, (int, float)) and np.isfinite(epsilon) and epsilon > 0):
        raise PrivacyError(f"'epsilon' must be a finite number > 0 (got {epsilon!r})")
    return float(epsilon)


def check_delta(delta: float) -> float:
    """Return ``delta`` if it lies in (0, 1), else raise :class:`PrivacyError`."""
    if not (isinstance(delta, (int, float)) and 0 < delta < 1):
        raise PrivacyError(f"'delta' must be in the open interval (0, 1) (got {delta!r})")
    return float(delta)


def delta_below(count: int) -> float:
    """The largest power of ten strictly below ``1 / count``: the default delta of a run over
    ``count`` privacy units (edges under edge-level DP, nodes under node-level DP).

    A delta at or above ``1 / count`` admits a mechanism that publishes one unit's data outright
    with probability delta; hence the rule (Dwork & Roth, "The Algorithmic Foundations of
    Differential Privacy", Sec. 2.3: delta should be less than the inverse of any polynomial in the
    size of the database). Examples: 2,995 nodes -> 1e-4; 10,000 -> 1e-5; 19,717 -> 1e-5.

    Args:
        count: the number of privacy units, >= 1.

    Returns:
        ``10 ** -(floor(log10(count)) + 1)`` (float; ``10 ** -digits of count``).

    Raises:
        PrivacyError: ``count`` < 1.
    """
    if not (isinstance(count, (int, np.integer)) and count >= 1):
        raise PrivacyError(f"the number of privacy units must be an integer >= 1 (got {count!r})")
    return float(f"1e-{len(str(int(count)))}")  # digits = floor(log10(count)) + 1, exactly
