"""Which canary audit covers which method: the entry point of ``graphpriv audit`` and the audit table.

Source: issue 10. Each audit lives beside what it audits' privacy argument:
:mod:`graphpriv.privacy.audit` (edge releases, dp-mlp, the bounds), :mod:`graphpriv.privacy.audit_dplp`,
:mod:`graphpriv.privacy.audit_dpar`, :mod:`graphpriv.privacy.audit_privdpr`.
"""

from __future__ import annotations

from torch_geometric.data import Data

from graphpriv.data.validation import check_seed
from graphpriv.errors import ConfigError, PrivacyError
from graphpriv.privacy.accountant import MAX_EPSILON, check_epsilon
from graphpriv.privacy.audit import EDGE_AUDITABLE, AuditReport

__all__ = ["AUDITABLE", "run_audit"]

#: method -> (unit, what the canaries are)
AUDITABLE: dict[str, tuple[str, str]] = {
    **{m: ("edge", "canary non-edges, presence in the released graph") for m in EDGE_AUDITABLE},
    "dplp-ps": ("edge", "gradient canaries (white box) and distance-2 canary edges (model score)"),
    "dplp-ns": ("edge", "gradient canaries (white box) and distance-2 canary edges (model score)"),
    "dp-mlp": ("node", "canary nodes, loss of their label"),
    **{m: ("node", "canary nodes through the q' sample, APPR rows and DP-SGD; loss of their label")
       for m in ("dpar-em0", "dpar-em1", "dpar-gm", "dpar-nodp")},
    "privdpr": ("node", "gradient canaries in extra rows of V (white box), or canary nodes (black box)"),
    "dpr": ("node", "as privdpr, without noise"),
}


def check_audit_options(method: str, *, epsilon: float, canaries: int | None, seed: int, epochs: int | None,
                        ratio: float, attack: str | None) -> None:
    """Check an audit's options before any data is loaded (see :func:`run_audit` for their meaning).

    Raises:
        ConfigError: a method no audit covers, ``attack`` for a method other than PrivDPR, fewer
            than 2 canaries, epochs < 1, ratio outside [0, 1), a seed outside [0, 2^32 - 1].
        PrivacyError: epsilon not a finite number in (0, MAX_EPSILON].
    """
    if method not in AUDITABLE:
        raise ConfigError(f"no audit covers {method!r}; audited: {', '.join(AUDITABLE)}")
    if attack is not None and method not in ("privdpr", "dpr"):
        raise ConfigError("--attack chooses among PrivDPR's attacks only")
    if canaries is not None and canaries < 2:
        raise ConfigError(f"--canaries must be at least 2 (got {canaries}); an audit compares inserted and "
                          "left-out canaries")
    if epochs is not None and epochs < 1:
        raise ConfigError(f"--epochs must be at least 1 (got {epochs})")
    if not 0 <= ratio < 1:
        raise ConfigError(f"--ratio must be in [0, 1) (got {ratio})")
    if check_epsilon(epsilon) > MAX_EPSILON:
        raise PrivacyError(f"--epsilon {epsilon:g} is above graphpriv's maximum {MAX_EPSILON:g}; audit a smaller one")
    check_seed(seed)


def run_audit(method: str, data: Data, *, epsilon: float = 1.0, canaries: int | None = None, seed: int = 0,
              epochs: int | None = None, ratio: float = 0.0, private: bool = True,
              attack: str | None = None) -> list[AuditReport]:
    """Audit ``method`` on ``data`` with its canary audit; one report per attack.

    Args:
        method: a key of :data:`AUDITABLE`. epsilon: the target the method is calibrated to.
        canaries: m (None: the audit's default). epochs: training epochs (None: the audit's
            default, shortened for speed where documented). ratio: ``random-perturb`` only.
        private: False audits the same training without noise (DP-SGD link predictors, DPAR as
            ``dpar-nodp``, PrivDPR as ``dpr``): the claim is inf. attack: PrivDPR only
            (``gradient``, ``node-embedding``, ``node-graph``).

    Returns:
        ``[AuditReport, ...]``: a run passes when every report does.

    Raises:
        ConfigError, PrivacyError: bad options (:func:`check_audit_options`).
    """
    check_audit_options(method, epsilon=epsilon, canaries=canaries, seed=seed, epochs=epochs, ratio=ratio,
                        attack=attack)
    extra = {} if canaries is None else {"canaries": canaries}
    if method in EDGE_AUDITABLE:
        from graphpriv.privacy.audit import audit_edge_release

        return [audit_edge_release(method, data, epsilon=epsilon, seed=seed, ratio=ratio, **extra)]
    if method in ("dplp-ps", "dplp-ns"):
        from graphpriv.privacy.audit_dplp import audit_dplp

        if canaries is not None:
            extra = {"gradient_canaries": canaries}
        return audit_dplp(method, data, epsilon=epsilon, seed=seed, private=private,
                          **({} if epochs is None else {"epochs": epochs}), **extra)
    if method == "dp-mlp":
        from graphpriv.privacy.audit import audit_dp_mlp

        return [audit_dp_mlp(data, epsilon=epsilon, seed=seed, **({} if epochs is None else {"epochs": epochs}),
                             **extra)]
    if method.startswith("dpar-"):
        from graphpriv.privacy.audit_dpar import audit_dpar

        return [audit_dpar(method if private else "dpar-nodp", data, epsilon=epsilon, seed=seed, epochs=epochs,
                           **extra)]
    from graphpriv.privacy.audit_privdpr import audit_privdpr

    return [audit_privdpr(data, epsilon=epsilon, seed=seed, private=private and method == "privdpr",
                          **({} if epochs is None else {"epochs": epochs}),
                          **({} if attack is None else {"attack": attack}), **extra)]
