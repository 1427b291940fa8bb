"""Empirical privacy audits with canaries: a lower bound on epsilon against what an estimator claims.

``audit(estimator, data, canaries=..., seed=...)`` runs the canary audit of the estimator's
family (:mod:`graphpriv.audit.registry`, keyed on estimator classes) through the estimator's own
``fit``; :class:`AuditReport` is what it measured (:mod:`graphpriv.audit.statistics`). One module
per audited family: :mod:`~graphpriv.audit.edge` (EdgeRand, LapGraph, RandomPerturb),
:mod:`~graphpriv.audit.dplp` (DPLP's DP-SGD link predictor), :mod:`~graphpriv.audit.node` (DPAR and
the DP-SGD MLP), :mod:`~graphpriv.audit.privdpr` (PrivDPR), :mod:`~graphpriv.audit.ranking`
(DPLP-rank's protected-pair top-k lists). Names are loaded on first use.
"""

from __future__ import annotations

from graphpriv.lazy import lazy_exports

_EXPORTS = {
    "AUDITS": "graphpriv.audit.registry",
    "audit": "graphpriv.audit.registry",
    "audit_for": "graphpriv.audit.registry",
    "AuditReport": "graphpriv.audit.statistics",
}

__all__ = list(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
