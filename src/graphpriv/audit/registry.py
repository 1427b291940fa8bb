"""Which canary audit covers which estimator: :func:`audit`, the entry point of ``graphpriv audit``
and of the audit tables, keyed on estimator classes (a method id is the experiments layer's
business: :func:`graphpriv.experiments.auditing.run_audit` turns one into an estimator).

Every audit drives the estimator's own ``fit`` (or ``publish``) with canaries
(:mod:`graphpriv.audit.fitting`); the statistics are :mod:`graphpriv.audit.statistics`.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from torch_geometric.data import Data

from graphpriv.audit.statistics import AuditReport
from graphpriv.errors import ConfigError
from graphpriv.methods.dp_1k import DP1K
from graphpriv.methods.dpar import DPARClassifier
from graphpriv.methods.dplp_rank import DPLPRanker
from graphpriv.methods.dplp_subgraph import DPLPLinkPredictor
from graphpriv.methods.estimator import Estimator
from graphpriv.methods.gae_link import GAELinkPredictor
from graphpriv.methods.gap import GAPClassifier, GAPNodeClassifier
from graphpriv.methods.heuristic_mix import HeuristicMixLinkPredictor
from graphpriv.methods.lapgraph_sgnn import LapGraphLinkPredictor
from graphpriv.methods.mlp import MLPClassifier
from graphpriv.methods.privdpr import PrivDPR
from graphpriv.methods.privgraph import PrivGraph
from graphpriv.methods.progap import ProGAPNodeClassifier
from graphpriv.methods.publishing import EdgeRand, LapGraph, RandomPerturb
from graphpriv.methods.tmf import TmF

__all__ = ["AUDITS", "Audit", "audit", "audit_for"]


@dataclass(frozen=True)
class Audit:
    """One family's audit.

    Attributes:
        function: ``"module:function"`` of ``function(estimator, data, **options)``, which returns
            the reports (imported on first use; see :meth:`run`).
        unit: the privacy unit the canaries stand for (``edge``, ``node`` or ``protected_pair``).
        canaries: what the canaries are and how they are scored (one line).
        preset: hyperparameters a front door applies under the user's own (shorter training, the
            calibration delta of the runs the docs report); ``audit`` itself never changes an
            estimator's hyperparameters.
        options: the audit's own options (beside ``canaries``, ``seed``, ``noise_scale``,
            ``confidence``, ``name``).
    """

    function: str
    unit: str
    canaries: str
    preset: dict[str, Any] = field(default_factory=dict)
    options: tuple[str, ...] = ()

    def run(self, estimator: Estimator, data: Data, **options: Any) -> list[AuditReport]:
        """Call the audit function; one report per attack, as a list."""
        module, _, name = self.function.partition(":")
        reports = getattr(importlib.import_module(module), name)(estimator, data, **options)
        return reports if isinstance(reports, list) else [reports]


#: The delta the node-level front door calibrates runs at (DPAR's paper setting on Cora-ML; the
#: claim audited is the same noise at the audit's smaller delta). Equal to graphpriv.audit.node's.
CALIBRATION_DELTA = 2e-3

_EDGE = Audit("graphpriv.audit.edge:audit_edge_release", "edge", "canary non-edges, presence in the released graph")
_GENERATED = Audit("graphpriv.audit.edge:audit_edge_release", "edge",
                   "canary non-edges, presence in one graph generated from the release")

#: estimator class -> its audit (exact classes: SEALLinkPredictor, a non-private subclass of
#: DPLPLinkPredictor, has none).
AUDITS: dict[type[Estimator], Audit] = {
    EdgeRand: _EDGE,
    LapGraph: _EDGE,
    RandomPerturb: _EDGE,
    TmF: _GENERATED,
    DP1K: _GENERATED,
    PrivGraph: _GENERATED,
    LapGraphLinkPredictor: Audit("graphpriv.audit.edge:audit_edge_release", "edge",
                                 "canary non-edges, presence in the LapGraph release the SGNN trains on",
                                 preset={"epochs": 1}),
    GAELinkPredictor: Audit("graphpriv.audit.edge:audit_edge_release", "edge",
                            "canary non-edges, presence in the EdgeRand or LapGraph release the GAE trains on",
                            preset={"epochs": 1}),
    DPLPLinkPredictor: Audit("graphpriv.audit.dplp:audit_dplp", "edge",
                             "gradient canaries (white box) and distance-2 canary edges (model score)",
                             preset={"epochs": 5}, options=("edge_canaries",)),
    HeuristicMixLinkPredictor: Audit("graphpriv.audit.heuristic_mix:audit_heuristic_mix", "edge",
                                     "utility canaries (white box: one direction raised by the sensitivity, one draw "
                                     "each) and, on request, canary edges (black box)", options=("edge_canaries",)),
    MLPClassifier: Audit("graphpriv.audit.node:audit_node_classifier", "node", "canary nodes, loss of their label",
                         preset={"delta": CALIBRATION_DELTA},
                         options=("guesses", "one_sided", "audit_delta")),
    DPARClassifier: Audit("graphpriv.audit.node:audit_node_classifier", "node",
                          "canary nodes through the q' sample, APPR rows and DP-SGD; loss of their label",
                          preset={"delta": CALIBRATION_DELTA},
                          options=("guesses", "one_sided", "canary_edges", "audit_delta")),
    DPLPRanker: Audit("graphpriv.audit.ranking:audit_ranker", "protected_pair",
                      "canary nodes joined to an audited query's neighbours by protected edges; presence in its "
                      "top-k list", preset={"top_k": 1}, options=("guesses",)),
    GAPClassifier: Audit("graphpriv.audit.gap:audit_gap", "edge",
                         "canary edges between fresh node pairs; alignment of a first-hop aggregate with the "
                         "partner's embedding", preset={"encoder_epochs": 20, "epochs": 20}, options=("guesses",)),
    GAPNodeClassifier: Audit("graphpriv.audit.gap_node:audit_gap_node", "node",
                             "canary nodes among the training nodes; loss of their label under the encoder",
                             preset={"encoder_epochs": 20, "epochs": 5}, options=("guesses", "audit_delta")),
    ProGAPNodeClassifier: Audit("graphpriv.audit.gap_node:audit_gap_node", "node",
                                "canary nodes among the training nodes; loss of their label under stage 0",
                                preset={"epochs": 20, "depth": 1}, options=("guesses", "audit_delta")),
    PrivDPR: Audit("graphpriv.audit.privdpr:audit_privdpr", "node",
                   "gradient canaries in extra rows of V (white box), or canary nodes (black box)",
                   preset={"epochs": 1}, options=("attack", "partners", "guesses", "audit_delta")),
}


def audit_for(estimator: Estimator | type[Estimator]) -> Audit:
    """The :class:`Audit` of an estimator (or estimator class).

    Raises:
        ConfigError: a class no audit covers (the message lists the audited ones).
    """
    cls = estimator if isinstance(estimator, type) else type(estimator)
    try:
        return AUDITS[cls]
    except KeyError:
        raise ConfigError(f"no audit covers {cls.__name__}; audited: "
                          f"{', '.join(c.__name__ for c in AUDITS)}") from None


def audit(estimator: Estimator, data: Data, **options: Any) -> list[AuditReport]:
    """Audit ``estimator`` on ``data`` with its family's canary audit; one report per attack.

    Args:
        estimator: a graphpriv estimator whose class :data:`AUDITS` covers; its hyperparameters
            define the run (a copy is fitted with ``random_state = seed``).
        data: the graph (with features and labels for node classifiers).
        **options: ``canaries``, ``seed``, ``noise_scale`` (a deliberate fault, for testing the
            audit), ``confidence``, ``name``, ``progress`` (a :class:`~graphpriv.progress.Progress`
            the audited fit reports to, its phases prefixed ``audited``) and the family's own
            (:attr:`Audit.options`).

    Returns:
        ``[AuditReport, ...]``: a run passes when every report does.

    Raises:
        ConfigError: an estimator no audit covers, an option its audit does not take, bad options.
        DatasetError: a graph the audit cannot use. PrivacyError: a bad delta.
    """
    entry = audit_for(estimator)
    known = {"canaries", "seed", "noise_scale", "confidence", "name", "progress", *entry.options}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ConfigError(f"the audit of {type(estimator).__name__} takes no option {', '.join(unknown)}; its "
                          f"options: {', '.join(sorted(known))}")
    return entry.run(estimator, data, **options)
