"""The bounds every user-given epsilon and delta must meet: :data:`MAX_EPSILON`, :func:`check_epsilon`,
:func:`check_delta`.

A module of its own, importing neither dp-accounting nor torch, so that the front doors (the
method registry, the command line) check a setting without loading the accountant;
:mod:`graphpriv.privacy.accountant` re-exports the three names.
"""

from __future__ import annotations

import numpy as np

from graphpriv.errors import PrivacyError

__all__ = ["MAX_EPSILON", "check_delta", "check_epsilon"]

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
