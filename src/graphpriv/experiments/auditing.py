"""Audits by method id: the front door of ``graphpriv audit`` and of the audit tables.

A method id names an estimator and its preset (:func:`graphpriv.experiments.registry.make_estimator`);
the audit of that estimator's class (:func:`graphpriv.audit.audit`) runs it with canaries. This
module only turns the command line's options into that estimator and those audit options.
"""

from __future__ import annotations

from typing import Any

from torch_geometric.data import Data

from graphpriv.audit.registry import AUDITS
from graphpriv.audit.registry import audit as audit_estimator
from graphpriv.audit.statistics import AuditReport
from graphpriv.data.validation import check_seed
from graphpriv.errors import ConfigError, PrivacyError
from graphpriv.evaluation.ranking import RANK_VARIANTS
from graphpriv.experiments.registry import ESTIMATORS, is_private, make_config, make_estimator, method_spec
from graphpriv.privacy.accountant import MAX_EPSILON, check_epsilon
from graphpriv.progress import Progress, no_progress

__all__ = ["AUDITABLE", "check_audit_options", "run_audit"]

#: Method ids whose estimator class has an audit (in registry order).
AUDITABLE: tuple[str, ...] = tuple(m for m, cls in ESTIMATORS.items() if cls in AUDITS)

#: ``--non-private`` for the methods with a non-private twin of their own (the others run the same
#: steps with the noise scaled to 0).
_NON_PRIVATE_TWIN = {"dpar-em0": "dpar-nodp", "dpar-em1": "dpar-nodp", "dpar-gm": "dpar-nodp", "privdpr": "dpr",
                     "dp-mlp": "mlp", "gap-edp": "gap-inf"}


def _claims_privacy(method: str) -> bool:
    """Whether the preset of ``method`` claims a guarantee (ranking ids: their noise is not ``none``)."""
    if method in RANK_VARIANTS:
        return RANK_VARIANTS[method][1] != "none"
    return is_private(method, make_config(method, {}))


def check_audit_options(method: str, *, epsilon: float, canaries: int | None, seed: int, epochs: int | None,
                        ratio: float | None, attack: str | None, private: bool = True) -> None:
    """Check an audit's options before any data is loaded (see :func:`run_audit` for their meaning).

    Raises:
        ConfigError: a method no audit covers, a non-private method audited as private (there is no
            claim to test: pass ``private=False``, CLI ``--non-private``, to measure its leak),
            ``attack`` for a method other than PrivDPR, ``ratio``
            for a method other than random-perturb or outside [0, 1), fewer than 2 canaries,
            epochs < 1, a seed outside [0, 2^32 - 1].
        PrivacyError: epsilon not a finite number in (0, MAX_EPSILON].
    """
    if method not in AUDITABLE:
        raise ConfigError(f"no audit covers {method!r}; audited: {', '.join(AUDITABLE)}")
    if private and not _claims_privacy(method):
        twins = [m for m, twin in _NON_PRIVATE_TWIN.items() if twin == method]
        raise ConfigError(f"{method} is non-private: it claims no epsilon, so an audit has nothing to test; add "
                          f"--non-private to measure how much it leaks"
                          + (f", or audit its private counterpart ({', '.join(twins)})" if twins else ""))
    if attack is not None and "attack" not in AUDITS[ESTIMATORS[method]].options:
        raise ConfigError("--attack chooses among PrivDPR's attacks only")
    if canaries is not None and canaries < 2:
        raise ConfigError(f"--canaries must be at least 2 (got {canaries}); an audit compares inserted and "
                          "left-out canaries")
    if epochs is not None and epochs < 1:
        raise ConfigError(f"--epochs must be at least 1 (got {epochs})")
    if epochs is not None and "epochs" not in method_spec(method).config_cls.model_fields:
        raise ConfigError(f"--epochs sets a training length {method} does not have (its settings: --set "
                          "lin_epochs=..., umnn_epochs=... for DPLP-rank)")
    if ratio is not None and "ratio" not in method_spec(method).config_cls.model_fields:
        raise ConfigError(f"--ratio is random-perturb's perturbation ratio; {method} has none")
    if ratio is not None and not 0 <= ratio < 1:
        raise ConfigError(f"--ratio must be in [0, 1) (got {ratio})")
    if check_epsilon(epsilon) > MAX_EPSILON:
        raise PrivacyError(f"--epsilon {epsilon:g} is above graphpriv's maximum {MAX_EPSILON:g}; audit a smaller one")
    check_seed(seed)


def run_audit(method: str, data: Data, *, epsilon: float = 1.0, canaries: int | None = None, seed: int = 0,
              epochs: int | None = None, ratio: float | None = None, private: bool = True,
              attack: str | None = None, noise_scale: float = 1.0,
              settings: dict[str, Any] | None = None, progress: Progress = no_progress) -> list[AuditReport]:
    """Audit the estimator of ``method`` on ``data``; one report per attack.

    The estimator is ``make_estimator(method, ...)``: the method's preset, then the audit's preset
    (:attr:`graphpriv.audit.registry.Audit.preset`: shorter training, the calibration delta), then
    ``epsilon`` (private methods), ``epochs``, ``ratio`` and ``settings``.

    Args:
        method: an id of :data:`AUDITABLE`. epsilon: the target the method is calibrated to
            (DPLP-rank: the epsilon of one top-K list, so epsilon_p = epsilon / K).
        canaries: m (None: the audit's default). epochs: training epochs (None: the audit's preset).
        ratio: random-perturb's perturbation ratio (None: the method's). private: False audits
            the method without noise (DPAR as ``dpar-nodp``, PrivDPR as ``dpr``, the others with
            the noise scaled to 0): the claim is inf. attack: PrivDPR only (``gradient``,
            ``node-embedding``, ``node-graph``). noise_scale: a deliberate fault on the mechanism's
            noise (testing the audit; the claim stays the calibrated one). settings: other
            hyperparameters (as ``graphpriv run --set``). progress: reports the audited fit
            (its phases prefixed ``audited``: ``audited training``, ``audited extraction``, ...).

    Returns:
        ``[AuditReport, ...]``: a run passes when every report does.

    Raises:
        ConfigError, PrivacyError: bad options (:func:`check_audit_options`) or settings.
    """
    check_audit_options(method, epsilon=epsilon, canaries=canaries, seed=seed, epochs=epochs, ratio=ratio,
                        attack=attack, private=private)
    run_id = method if private else _NON_PRIVATE_TWIN.get(method, method)
    if not private and run_id == method:
        noise_scale = 0.0
    entry = AUDITS[ESTIMATORS[run_id]]
    fields = method_spec(run_id).config_cls.model_fields
    overrides: dict[str, Any] = {k: v for k, v in entry.preset.items() if k in fields}
    if "epsilon" in fields:  # the rankers' epsilon is a top-K list's: epsilon_p = epsilon / K
        overrides["epsilon"] = epsilon
    if epochs is not None:
        overrides["epochs"] = epochs
    if ratio is not None:
        overrides["ratio"] = ratio
    overrides.update(settings or {})
    estimator = make_estimator(run_id, overrides, random_state=seed)
    options: dict[str, Any] = {"seed": seed, "noise_scale": noise_scale, "name": run_id, "progress": progress}
    if canaries is not None:
        options["canaries"] = canaries
    if attack is not None:
        options["attack"] = attack
    return audit_estimator(estimator, data, **options)
