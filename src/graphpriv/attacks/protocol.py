"""The sensitive-link evaluation protocol.

Source: Wu, Yang, Han, Wang, Wu, "Learning-based Privacy-Preserving Graph Publishing Against
Sensitive Link Inference Attacks" (IEEE TKDE 2025), Sec. V-A.1 (sensitive links) and V-A.3 (utility tasks).

10% of the edges are the sensitive links E_s and a disjoint 10% the link-prediction test edges;
both are removed from the graph a publisher starts from. A published graph G' is then judged by

- privacy: the ROC-AUC of each attack (fit on G' only) on E_s against as many non-edges;
- link-prediction utility: a GAE (2-layer GCN) trained on G' scores the LP test pairs by inner
  product -> ROC-AUC;
- node-classification utility: a 2-layer GCN trained on G' with 30% of the nodes labelled ->
  micro-F1 on the other 70%.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import numpy as np
import torch
from pydantic import BaseModel, Field
from sklearn.metrics import f1_score, roc_auc_score
from torch_geometric.data import Data

from graphpriv.attacks.embedding import EmbeddingAttack
from graphpriv.attacks.graph import PublishedGraph
from graphpriv.attacks.suite import attack_auc, make_attack, resolve_attacks
from graphpriv.data.splits import node_split, sensitive_link_split
from graphpriv.nn.gae import gae_embeddings
from graphpriv.nn.gcn import train_node_classifier
from graphpriv.progress import Progress, phase_progress

__all__ = ["ProtocolReport", "SensitiveLinkProtocol"]


class ProtocolReport(BaseModel):
    """What the protocol measured on one published graph.

    Attributes:
        attack_auc: attack id -> ROC-AUC on E_s vs non-edges (0.5 = guessing).
        attack_seconds: attack id -> fit + score time. lp_auc: GAE link-prediction AUC (None when
            not measured). nc_f1: GCN micro-F1 (None without labels or when not measured).
        input_edges / published_edges: |E| the publisher started from and |E'| it released.
        sensitive_published / test_published: E_s and LP test pairs that are edges of G' (a
            random perturbation may add a few back; a graph that leaks E_s shows it here).
    """

    dataset: str
    seed: int
    attack_auc: dict[str, float] = Field(default_factory=dict)
    attack_seconds: dict[str, float] = Field(default_factory=dict)
    lp_auc: float | None = None
    nc_f1: float | None = None
    input_edges: int
    published_edges: int
    sensitive_published: int
    test_published: int

    def metrics(self) -> dict[str, float]:
        """Flat metrics for a :class:`~graphpriv.methods.base.Result`: ``attack_auc_<id>``,
        ``lp_auc``, ``nc_f1``, ``published_edges``."""
        out = {f"attack_auc_{k}": v for k, v in self.attack_auc.items()}
        if self.lp_auc is not None:
            out["lp_auc"] = self.lp_auc
        if self.nc_f1 is not None:
            out["nc_f1"] = self.nc_f1
        out["published_edges"] = float(self.published_edges)
        return out


class SensitiveLinkProtocol:
    """Split a dataset for graph publishing and evaluate any published graph on it.

    Args:
        data: Cleaned graph (``x`` and ``y`` optional). seed: Seeds the split; the same seed gives
            the same E_s, LP test pairs, negatives and node split for every method.
        sensitive_ratio, test_ratio: Shares of the edges hidden as E_s and as LP test (0.1, 0.1).
        nc_train_ratio: Labelled share of nodes for node classification (0.3).
        use_features: Release X with the graph (attacks and utility GNNs see it).

    Attributes:
        split: :class:`~graphpriv.data.splits.SensitiveLinkSplit`. input_graph: the graph the
            publisher perturbs (G minus E_s and the LP test edges), a :class:`PublishedGraph`.
        sensitive_links: ``[2, |E_s|]``, what the publisher protects.

    Raises:
        ValueError: ratios outside [0, 1). DatasetError: too few edges.
    """

    def __init__(self, data: Data, *, seed: int, sensitive_ratio: float = 0.10, test_ratio: float = 0.10,
                 nc_train_ratio: float = 0.30, use_features: bool = True) -> None:
        self.data, self.seed = data, seed
        self.split = sensitive_link_split(data, sensitive_ratio=sensitive_ratio, test_ratio=test_ratio,
                                          seed=seed)
        self.x = data.x.numpy() if use_features and getattr(data, "x", None) is not None else None
        self.input_graph = PublishedGraph(self.split.published_edge_index, data.num_nodes, self.x)
        self.sensitive_links = self.split.sensitive_pos
        y = getattr(data, "y", None)
        self.labels = y if y is not None and y.numel() == data.num_nodes else None
        self.nodes = node_split(data, train_ratio=nc_train_ratio, seed=seed) if self.labels is not None else None
        if self.nodes is not None:  # unlabelled nodes (label -1, e.g. CiteSeer's) are in neither side
            labelled = self.labels.numpy() >= 0
            self.nc_train_idx = self.nodes.train_idx[labelled[self.nodes.train_idx]]
            self.nc_test_idx = self.nodes.test_idx[labelled[self.nodes.test_idx]]
        self._shared: dict[int, dict[str, np.ndarray]] = {}  # graph id -> embedder -> embeddings

    @property
    def num_nodes(self) -> int:
        return int(self.data.num_nodes)

    def published(self, pairs: np.ndarray) -> PublishedGraph:
        """Wrap released ``[2, E']`` pairs (node ids of this dataset) with the released features."""
        return PublishedGraph(pairs, self.num_nodes, self.x)

    def attack(self, graph: PublishedGraph, attacks: str | Iterable[str] = "all", *,
               attack_kwargs: dict[str, dict] | None = None,
               progress: Progress | None = None) -> tuple[dict[str, float], dict[str, float]]:
        """Run attacks on ``graph``; returns ``(auc per id, seconds per id)``.

        node2vec / GAE embeddings are computed once and shared by the ``sim`` and ``ml`` heads.
        ``progress(done, total, phase="attacks", attack=<id>)`` is called before each attack and
        after the last.
        """
        aucs, seconds = {}, {}
        shared = self._shared.get(id(graph), {})  # shared across calls only inside evaluate()
        names = resolve_attacks(attacks)
        report = phase_progress(progress, "attacks")
        for i, name in enumerate(names):
            report(i, len(names), attack=name)
            attack = make_attack(name, seed=self.seed, **(attack_kwargs or {}).get(name, {}))
            key = getattr(attack, "embedder", None)
            if isinstance(attack, EmbeddingAttack) and key in shared:
                attack.use_embeddings(shared[key])
            aucs[name], seconds[name] = attack_auc(attack, graph, self.split.sensitive_pos,
                                                   self.split.sensitive_neg)
            if isinstance(attack, EmbeddingAttack) and not attack.embed_kwargs:
                shared.setdefault(key, attack.embeddings_)
        if names:
            report(len(names), len(names), attack="done")
        return aucs, seconds

    def link_prediction_utility(self, graph: PublishedGraph) -> float:
        """GAE on ``graph``, inner-product scores of the LP test pairs -> ROC-AUC.

        The GAE is the one the GAE attacks train (same graph, features, widths and seed); within
        one :meth:`evaluate` it is trained once and shared.
        """
        z = self._shared.get(id(graph), {}).get("gae")
        if z is None:
            z = gae_embeddings(graph.edge_index, graph.num_nodes, graph.features, seed=self.seed).numpy()
        z = np.asarray(z, dtype=np.float64)
        pairs = np.concatenate([self.split.test_pos, self.split.test_neg], axis=1)
        scores = np.einsum("pd,pd->p", z[pairs[0]], z[pairs[1]])
        labels = np.r_[np.ones(self.split.test_pos.shape[1]), np.zeros(self.split.test_neg.shape[1])]
        return float(roc_auc_score(labels, scores))

    def node_classification_utility(self, graph: PublishedGraph, *, epochs: int = 200) -> float | None:
        """2-layer GCN on ``graph`` (30% of the nodes for training) -> micro-F1 on the rest; nodes
        without a label (-1) are left out of both; None for a graph without labels."""
        if self.labels is None:
            return None
        mask = torch.zeros(self.num_nodes, dtype=torch.bool)
        mask[torch.from_numpy(self.nc_train_idx)] = True
        pred = train_node_classifier(graph.edge_index, graph.num_nodes, graph.features, self.labels, mask,
                                     epochs=epochs, seed=self.seed)
        test = torch.from_numpy(self.nc_test_idx)
        return float(f1_score(self.labels[test].numpy(), pred[test].numpy(), average="micro"))

    def evaluate(self, published: PublishedGraph | np.ndarray, *, attacks: str | Iterable[str] = "all",
                 utility: bool = True, attack_kwargs: dict[str, dict] | None = None,
                 progress: Progress | None = None) -> ProtocolReport:
        """Attack and (optionally) measure the utility of a published graph.

        Args:
            published: A :class:`PublishedGraph` or ``[2, E']`` pairs over this dataset's node ids.
            attacks: ``"all"``, ids, or ``[]`` for none. utility: also measure LP AUC and NC F1.
            attack_kwargs: Per-attack constructor overrides, e.g. ``{"seal": {"epochs": 5}}``.
            progress: told of each attack (phase ``attacks``) and of the utility tasks (phase
                ``utility``: 0, 1, 2 of 2), :class:`~graphpriv.methods.base.Progress`.

        Returns:
            :class:`ProtocolReport`.

        Raises:
            ValueError: the graph's node count differs from the dataset's.
        """
        graph = published if isinstance(published, PublishedGraph) else self.published(published)
        if graph.num_nodes != self.num_nodes:
            raise ValueError(f"the published graph has {graph.num_nodes} nodes; {self.data.name} has "
                             f"{self.num_nodes} (published graphs keep the dataset's node ids)")
        self._shared[id(graph)] = {}
        try:
            return self._evaluate(graph, attacks, utility, attack_kwargs, progress)
        finally:
            self._shared.pop(id(graph), None)

    def _evaluate(self, graph, attacks, utility, attack_kwargs, progress) -> ProtocolReport:
        aucs, seconds = (self.attack(graph, attacks, attack_kwargs=attack_kwargs, progress=progress) if attacks
                         else ({}, {}))
        report = ProtocolReport(
            dataset=str(self.data.name), seed=self.seed, attack_auc=aucs, attack_seconds=seconds,
            input_edges=self.input_graph.num_edges, published_edges=graph.num_edges,
            sensitive_published=int(graph.contains(self.split.sensitive_pos).sum()),
            test_published=int(graph.contains(self.split.test_pos).sum()))
        if utility:
            start = time.perf_counter()
            step = phase_progress(progress, "utility")
            step(0, 2, task="link prediction (GAE)")
            report.lp_auc = self.link_prediction_utility(graph)
            step(1, 2, task="node classification (GCN)")
            report.nc_f1 = self.node_classification_utility(graph)
            step(2, 2, task="done")
            report.attack_seconds["utility"] = time.perf_counter() - start
        return report
