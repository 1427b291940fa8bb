"""How every audit runs the estimator it audits: a fresh copy with the audit's seed, and its claim.

An audit never re-assembles training from a method's internals: it takes an (unfitted) estimator
as the description of the run, fits a copy of it (:func:`audited_copy`) on the graph with the
canaries, through ``fit(..., audit_hook=...)`` where the estimator offers white-box canaries or a
noise fault (:class:`graphpriv.privacy.hooks.AuditHook`), and compares the lower bound with what
the fitted copy claims (:func:`claim`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from torch_geometric.data import Data

from graphpriv.audit.statistics import minimum_guesses
from graphpriv.data.validation import check_seed
from graphpriv.errors import ConfigError
from graphpriv.methods.estimator import Estimator
from graphpriv.privacy.hooks import AuditHook

__all__ = ["audited_copy", "check_audit_args", "check_enough_guesses", "claim", "dataset_name", "describe"]


def audited_copy(estimator: Estimator, seed: int, **params: Any) -> Estimator:
    """An unfitted copy of ``estimator`` (its hyperparameters, ``params`` on top) whose
    ``random_state`` is the audit's ``seed``, so that an audit is reproducible from its seed.

    Raises:
        ConfigError: ``estimator`` is not a graphpriv estimator, a bad seed or a bad ``params`` value.
    """
    if not isinstance(estimator, Estimator):
        raise ConfigError(f"an audit takes a graphpriv estimator (e.g. graphpriv.EdgeRand(epsilon=1.0)), got "
                          f"{type(estimator).__name__}")
    return type(estimator)(**{**estimator.get_params(), **params, "random_state": check_seed(seed)})


def check_audit_args(canaries: int, noise_scale: float, confidence: float) -> AuditHook:
    """The hook of a run with ``noise_scale`` after checking the common audit arguments.

    Raises:
        ConfigError: fewer than 2 canaries, a negative or non-finite noise_scale, confidence
            outside (0, 1).
    """
    if isinstance(canaries, bool) or not isinstance(canaries, int) or canaries < 2:
        raise ConfigError(f"canaries must be an integer of at least 2 (got {canaries!r}); an audit compares "
                          "inserted and left-out canaries")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be in (0, 1) (got {confidence!r})")
    try:
        return AuditHook(noise_scale=noise_scale)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def check_enough_guesses(guesses_of: Callable[[int], int], canaries: int, confidence: float, *,
                         what: str = "") -> None:
    """Refuse, before any fit, an audit whose guesses cannot show any epsilon above 0.

    Args:
        guesses_of: ``m -> r``, the guesses the audit makes with m canaries (non-decreasing in m).
        canaries: m. confidence: the level the bound is taken at. what: which canaries (for the message).

    Raises:
        ConfigError: r < :func:`~graphpriv.audit.statistics.minimum_guesses`, naming the number of
            canaries needed.
    """
    need = minimum_guesses(confidence)
    made = guesses_of(canaries)
    if made >= need:
        return
    enough = canaries
    while guesses_of(enough) < need and enough < 1 << 40:
        enough *= 2
    low = enough // 2
    while low + 1 < enough:  # the smallest m with enough guesses
        mid = (low + enough) // 2
        low, enough = (mid, enough) if guesses_of(mid) < need else (low, mid)
    raise ConfigError(f"{canaries} {what + ' ' if what else ''}canaries give {made} guesses, fewer than the {need} the "
                      f"one-run bound needs to show any epsilon above 0 at {confidence:.3g} confidence; use at least "
                      f"{enough} canaries")


def claim(fitted: Estimator, delta: float | None, noise_scale: float) -> tuple[float, str]:
    """``(claimed epsilon, accounting text)`` of a fitted copy for the audit's verdict.

    The claim is the fit's own: :meth:`~graphpriv.methods.estimator.Estimator.epsilon_at` at
    ``delta`` (None: the report's epsilon, for pure-DP releases), under the report's accounting
    mode. A non-private fit, or one run with ``noise_scale`` 0 (the same steps without noise),
    claims nothing: inf. A faulty ``noise_scale`` in (0, 1) keeps the claim (the ledger still
    claims the calibrated guarantee: that is the bug the audit must catch).
    """
    report = fitted.privacy_report_
    if report is None:
        return math.inf, "non-private"
    if noise_scale == 0:
        return math.inf, "non-private (the same steps without noise)"
    epsilon = report.epsilon if delta is None else fitted.epsilon_at(delta)
    at = f"delta = {report.delta:g}" if delta is None else f"delta = {delta:g}"
    text = f"{report.accounting} ({report.accountant}, {report.unit}-level, at {at}"
    if delta is not None and delta != report.delta:
        text += f"; run calibrated to eps {report.target_epsilon or report.epsilon:g} at delta {report.delta:g}"
    if noise_scale != 1:
        text += f"; NOISE SCALED BY {noise_scale:g} (a deliberate fault)"
    return epsilon, text + ")"


def dataset_name(data: Data) -> str:
    """``data.name`` when it is a string, else ``"graph"``."""
    name = getattr(data, "name", None)
    return name if isinstance(name, str) else "graph"


def describe(estimator: Estimator, name: str | None) -> str:
    """The report's ``method``: ``name`` (e.g. a method id) or the estimator's class name."""
    return name if name is not None else type(estimator).__name__
