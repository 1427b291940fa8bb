"""Noise calibration: the smallest noise multiplier whose accounted epsilon meets a target.

Wraps ``dp_accounting.calibrate_dp_mechanism`` (bisection that never overspends) around
:class:`GraphRdpAccountant`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

from dp_accounting import dp_event, mechanism_calibration
from dp_accounting.privacy_accountant import NeighboringRelation

from graphpriv.errors import BudgetExceededError
from graphpriv.privacy.accountant import GraphRdpAccountant, check_delta, check_epsilon

#: Largest noise multiplier the calibration will return; beyond it training is hopeless.
MAX_NOISE_MULTIPLIER = 1e4
MIN_NOISE_MULTIPLIER = 1e-3


def calibrate_noise_multiplier(
    make_event: Callable[[float], dp_event.DpEvent],
    *,
    target_epsilon: float,
    delta: float,
    neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE,
    max_noise_multiplier: float = MAX_NOISE_MULTIPLIER,
    tol: float = 1e-3,
) -> float:
    """Binary-search the noise multiplier z so that epsilon(make_event(z)) <= target_epsilon.

    Args:
        make_event: Maps a noise multiplier to the whole run's event (all steps composed).
        target_epsilon: Budget, > 0. delta: in (0, 1).
        neighboring_relation: Relation the accountant uses for standard events.
        max_noise_multiplier: Upper end of the search bracket.
        tol: Absolute tolerance on z; the returned value errs on the side of more noise.

    Returns:
        The noise multiplier (float). Compose ``make_event(z)`` to get the epsilon to report.

    Raises:
        PrivacyError: bad epsilon or delta.
        BudgetExceededError: even ``max_noise_multiplier`` overspends (too many steps or too
            small a budget), with a message that says what to change.
    """
    check_epsilon(target_epsilon)
    check_delta(delta)

    def fresh() -> GraphRdpAccountant:
        return GraphRdpAccountant(neighboring_relation=neighboring_relation)

    eps_at_max = fresh().compose(make_event(max_noise_multiplier)).get_epsilon(delta)
    if eps_at_max > target_epsilon:
        raise BudgetExceededError(
            f"epsilon={target_epsilon} cannot be met: even noise_multiplier={max_noise_multiplier:g} "
            f"spends epsilon={eps_at_max:.4g} at delta={delta:g}. Raise epsilon, or lower the number "
            "of steps (epochs), the batch size or the group size (theta, k)."
        )
    if fresh().compose(make_event(MIN_NOISE_MULTIPLIER)).get_epsilon(delta) <= target_epsilon:
        return MIN_NOISE_MULTIPLIER
    bracket = mechanism_calibration.ExplicitBracketInterval(MIN_NOISE_MULTIPLIER, max_noise_multiplier)
    return float(
        mechanism_calibration.calibrate_dp_mechanism(
            fresh, make_event, target_epsilon, delta, bracket_interval=bracket, tol=tol
        )
    )


@contextlib.contextmanager
def quiet_absl():
    """dp-accounting logs a warning for each fractional RDP order it drops at small noise (large
    paper-mode budgets); those orders are excluded correctly, the log only floods the output."""
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
