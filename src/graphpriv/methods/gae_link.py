"""GAE link prediction on the training graph (``gae``) or on an edge-level DP release of it
(``edgerand-gae``, ``lapgraph-gae``).

Sources: Kipf & Welling, "Variational graph auto-encoders" (NeurIPS BDL workshop 2016), the GAE
(:func:`graphpriv.nn.gae.gae_embeddings`: 2-layer GCN encoder, inner-product decoder); EdgeRand
and LapGraph: Wu, Long, Gunter, Gong, "LinkTeller: recovering private edges from graph neural
networks via influence analysis" (IEEE S&P 2022), the release-then-train baselines of private link
prediction (Ran et al., "Differentially private graph neural networks for link prediction",
Table II, with an SGNN: :class:`~graphpriv.methods.lapgraph_sgnn.LapGraphLinkPredictor`).

``fit`` releases the training graph with the publisher (or keeps it, ``publisher='none'``), trains a
GAE on the released graph (with the node features when ``use_features`` and the data has them:
at edge level the features are public) and keeps its node embeddings; a pair's score is
sigmoid(z_u . z_v). Everything after the release is post-processing of it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from pydantic import Field
from torch_geometric.data import Data

from graphpriv.data.graph import undirected_pairs
from graphpriv.data.release import PublishedGraph
from graphpriv.data.validation import IF_PRESENT, check_data, check_node_pairs
from graphpriv.errors import ConfigError
from graphpriv.methods.base import MethodConfig, Progress, no_progress
from graphpriv.methods.estimator import Estimator
from graphpriv.methods.pair_auc import PairAUC
from graphpriv.methods.publishing import EdgeRand, LapGraph
from graphpriv.nn.gae import gae_embeddings
from graphpriv.privacy.hooks import AuditHook

__all__ = ["GAE_PUBLISHERS", "GAELinkConfig", "GAELinkPredictor", "check_publisher"]

#: The publishers a :class:`GAELinkPredictor` can train on (``none``: the training graph itself).
GAE_PUBLISHERS = ("none", "edgerand", "lapgraph")


def check_publisher(publisher: object) -> str:
    """``publisher`` when it is one of :data:`GAE_PUBLISHERS`.

    Raises:
        ConfigError: any other value (the message lists them).
    """
    if not isinstance(publisher, str) or publisher not in GAE_PUBLISHERS:
        raise ConfigError(f"publisher must be one of {', '.join(GAE_PUBLISHERS)} (got {publisher!r})")
    return publisher


class GAELinkConfig(MethodConfig):
    """The release (read when the publisher is not ``none``), the GAE and the link protocol's split."""

    epsilon: float = Field(4.0, gt=0, description="edge-level epsilon of the release")
    delta: float = Field(1e-5, gt=0, lt=1, description="the delta the report is stated at (pure-DP releases)")
    count_fraction: float = Field(0.01, gt=0, lt=1, description="LapGraph: share of epsilon for the edge count")
    max_edges: int = Field(200_000_000, ge=1, description="EdgeRand: refuse releases expected to be larger")
    use_features: bool = Field(True, description="GAE on the node features when the data has them (public at "
                               "edge level)")
    hidden: int = Field(128, ge=1, description="GAE encoder's hidden width")
    out: int = Field(64, ge=1, description="embedding width")
    epochs: int = Field(200, ge=1)
    lr: float = Field(0.001, gt=0, description="Adam's learning rate (PyG's example's 0.01 collapses the GAE on "
                      "dense noisy releases)")
    val_ratio: float = Field(0.05, ge=0, lt=1, description="protocol: share of edges held out for validation")
    test_ratio: float = Field(0.10, gt=0, lt=1, description="protocol: share of edges held out for testing")


class GAELinkPredictor(PairAUC, Estimator):
    """A GAE's inner products as link scores, trained on the training graph or on its release.

    Privacy: with ``publisher='edgerand'`` or ``'lapgraph'``, edge-level epsilon-DP of the release
    (neighbouring training graphs differ by one edge added or removed; the publisher's report,
    stated at ``delta``); the GAE, its embeddings and every score are post-processing of the
    release. ``publisher='none'`` (method ``gae``) is not private: ``privacy_report_`` is None and
    the saved file's embeddings are computed from the training graph in the clear.

    Args:
        publisher: ``none`` (default), ``edgerand`` or ``lapgraph`` (:data:`GAE_PUBLISHERS`); a
            constructor argument beside the hyperparameters, picked by the method id.
        random_state: seed of the release (the publisher's ``random_state``) and of the GAE.
        **params: the fields of :class:`GAELinkConfig` (``val_ratio``, ``test_ratio``: the
            protocol's).

    Attributes:
        embeddings_: ``[N, out]`` float32 node embeddings. graph_: ``[2, E']`` LongTensor, the
            graph the GAE was trained on (the release; the training graph for ``none``).
        num_nodes_: N. info_: ``released_edges``, ``used_features``. privacy_report_: the
            publisher's report (None for ``none``). ledger_: None (the report is the publisher's).

    Raises:
        ConfigError: an unknown ``publisher`` or hyperparameter, an invalid value.
    """

    config_cls = GAELinkConfig
    variant_param = "publisher"

    def __init__(self, publisher: str = "none", random_state: int | None = None, **params: Any) -> None:
        super().__init__(random_state=random_state, **params)
        self.publisher = check_publisher(publisher)

    def _check_variant(self, value: Any, config: GAELinkConfig) -> str:
        return check_publisher(value)

    def fit(self, data: Data, val_pos: Any = None, val_neg: Any = None, progress: Progress | None = no_progress,
            *, audit_hook: AuditHook | None = None) -> GAELinkPredictor:
        """Release the training graph ``data`` (unless ``publisher='none'``) and train the GAE on it.

        Args:
            data: the training graph (PyG ``Data``, ``edge_index [2, 2E]``, ``num_nodes`` N,
                optional ``x [N, F]``).
            val_pos, val_neg: accepted for the link protocol's common call and checked (``[2, P]``
                node ids); the GAE trains a fixed number of epochs, so they are not read.
            progress: called ``progress(1, 2)`` after the release and ``progress(2, 2)`` after the
                GAE (``None``: no progress).
            audit_hook: for a privacy audit only (:mod:`graphpriv.audit.edge`): passed to the
                publisher (its ``noise_scale`` is a deliberate fault on the release's noise);
                ignored for ``publisher='none'``, which noises nothing (its audit measures the
                training graph kept as ``graph_``).

        Returns:
            ``self``, fitted.

        Raises:
            DatasetError: malformed ``data`` or validation pairs. ConfigError: an EdgeRand release
                above ``max_edges``; an ``audit_hook`` that is not an
                :class:`~graphpriv.privacy.hooks.AuditHook` without canaries.
        """
        config = self._config
        who = type(self).__name__
        if audit_hook is not None and (not isinstance(audit_hook, AuditHook) or audit_hook.canaries is not None):
            raise ConfigError(f"audit_hook must be a graphpriv.privacy.hooks.AuditHook without canaries for {who} "
                              "(its release is audited with canary edges in the data)")
        data = check_data(data, needs_features=config.use_features and IF_PRESENT, method=who)
        num_nodes = int(data.num_nodes)
        for name, pairs in (("val_pos", val_pos), ("val_neg", val_neg)):
            if pairs is not None:
                check_node_pairs(pairs, num_nodes, name=name)
        progress = progress or no_progress
        report = None
        if self.publisher == "none":
            released = PublishedGraph(undirected_pairs(data.edge_index), num_nodes)
        else:
            common = {"epsilon": config.epsilon, "delta": config.delta, "use_features": False, "utility": False,
                      "attacks": "none", "random_state": self.random_state}
            publisher = (EdgeRand(max_edges=config.max_edges, **common) if self.publisher == "edgerand"
                         else LapGraph(count_fraction=config.count_fraction, **common))
            publisher.fit(Data(edge_index=data.edge_index, num_nodes=num_nodes), audit_hook=audit_hook)
            released, report = publisher.released_, publisher.privacy_report_
        progress(1, 2)
        features = data.x.float() if config.use_features and getattr(data, "x", None) is not None else None
        if released.num_edges:
            z = gae_embeddings(released.edge_index, num_nodes, features, hidden=config.hidden, out=config.out,
                               epochs=config.epochs, lr=config.lr, seed=self.random_state)
        else:  # nothing released to reconstruct: every pair scores alike (chance)
            z = torch.zeros(num_nodes, config.out)
        progress(2, 2)
        self.embeddings_ = z.float()
        self.graph_ = torch.from_numpy(np.ascontiguousarray(released.pairs))
        self.num_nodes_ = num_nodes
        self.info_ = {"released_edges": int(released.num_edges), "used_features": features is not None}
        self.ledger_ = None
        return self._fitted(report)

    def predict_proba(self, pairs: Any) -> torch.Tensor:
        """sigmoid(z_u . z_v) of node pairs.

        Args:
            pairs: ``[2, P]`` integer node ids in ``[0, num_nodes_)`` (LongTensor or numpy).

        Returns:
            ``[P]`` float32 tensor in (0, 1).

        Raises:
            NotFittedError: before ``fit``. DatasetError: a shape other than ``[2, P]``, a
                non-integer array or an id out of range.
        """
        self._check_fitted()
        pairs = torch.from_numpy(np.asarray(check_node_pairs(pairs, self.num_nodes_, name="pairs"), dtype=np.int64))
        z = self.embeddings_
        return torch.sigmoid((z[pairs[0]] * z[pairs[1]]).sum(dim=1))

    def _get_state(self) -> dict[str, Any]:
        return {"embeddings": self.embeddings_.clone(), "graph": self.graph_.clone(), "num_nodes": self.num_nodes_,
                "released_edges": self.info_["released_edges"], "used_features": self.info_["used_features"]}

    def _set_state(self, state: dict[str, Any]) -> None:
        z, graph, n = state["embeddings"], state["graph"], int(state["num_nodes"])
        if not isinstance(z, torch.Tensor) or z.ndim != 2 or z.shape[0] != n:
            raise ValueError("embeddings must be a [N, out] tensor")
        if not isinstance(graph, torch.Tensor) or graph.ndim != 2 or graph.shape[0] != 2:
            raise ValueError("graph must be a [2, E] tensor")
        self.embeddings_, self.graph_, self.num_nodes_ = z.float(), graph.long(), n
        self.info_ = {"released_edges": int(state["released_edges"]), "used_features": bool(state["used_features"])}
        self.ledger_ = None
