"""SEAL attack: a subgraph GNN trained on the published graph (PPGSL Sec. V-A.2; Zhang & Chen,
"Link prediction based on graph neural networks", NeurIPS 2018).

As in PPGSL: 2-hop enclosing subgraphs, node attributes disregarded (DRNL labels only), trained on
the published edges (each with itself removed from its subgraph) against equally many uniformly
drawn non-edges of the published graph; a pair's score is the model's logit on its subgraph in
the published graph. The network is graphpriv's :class:`~graphpriv.nn.subgraph_gnn.SubgraphGNN`
(DGCNN backbone, SEAL's default).
"""

from __future__ import annotations

import numpy as np
import torch

from graphpriv.attacks.base import LinkAttack
from graphpriv.attacks.graph import PublishedGraph
from graphpriv.data.splits import sample_non_edges
from graphpriv.linkpred.drnl import max_drnl_label
from graphpriv.linkpred.subgraphs import (
    Extractor,
    SubgraphSet,
    collate_dense,
    extract_subgraphs,
)
from graphpriv.nn.subgraph_gnn import SubgraphGNN, bce_loss

__all__ = ["SEALAttack", "size_batches"]


def size_batches(sizes: np.ndarray, batch_size: int, rng: np.random.Generator | None = None) -> list[np.ndarray]:
    """Split example ids into batches of similar subgraph size (less padding in dense batches).

    With ``rng`` (training): ids are shuffled, grouped by size, cut into batches, and the batch
    order is shuffled. Without (scoring): sorted by size.
    """
    ids = np.arange(sizes.size) if rng is None else rng.permutation(sizes.size)
    ids = ids[np.argsort(sizes[ids], kind="stable")]
    batches = [ids[i:i + batch_size] for i in range(0, ids.size, batch_size)]
    if rng is not None:
        batches = [batches[i] for i in rng.permutation(len(batches))]
    return batches


class SEALAttack(LinkAttack):
    """SEAL on h-hop enclosing subgraphs of the published graph, without node attributes.

    Args:
        seed: Seed of the negatives, the training subset, initialisation and batches.
        h: Hops (2, as in PPGSL). backbone: ``dgcnn`` (SEAL), or ``gcn``/``sage``/``gin``.
        hidden: Width. epochs, lr, batch_size: Adam training (10 epochs, 1e-3, 32).
        max_train_edges: Cap on the published edges used as positives (uniform subset; 2,000 by
            default, so training costs the same on every dataset; ``None`` = all).
        max_nodes: Largest subgraph kept (the targets and the nodes with the smallest DRNL labels,
            :func:`~graphpriv.linkpred.subgraphs.cap_subgraph_size`); 200 by default, so dense
            released graphs (EdgeRand at small epsilon) stay tractable. ``None`` = no cap.

    Attributes (after fit):
        model_: the trained network. num_train_: training examples (positives + negatives).
    """

    name = "seal"

    def __init__(self, *, seed: int = 0, h: int = 2, backbone: str = "dgcnn", hidden: int = 32,
                 epochs: int = 10, lr: float = 1e-3, batch_size: int = 32,
                 max_train_edges: int | None = 2000, max_nodes: int | None = 200) -> None:
        super().__init__(seed=seed)
        if h < 1:
            raise ValueError(f"'h' must be >= 1 (got {h})")
        self.h, self.backbone, self.hidden = h, backbone, hidden
        self.epochs, self.lr, self.batch_size = epochs, lr, batch_size
        self.max_train_edges, self.max_nodes = max_train_edges, max_nodes
        self.label_cap = max_drnl_label(4 * h)

    def _subgraphs(self, pairs: np.ndarray, labels: np.ndarray) -> SubgraphSet:
        """The h-hop subgraphs of ``pairs`` in the published graph, cut to ``max_nodes`` (ties drawn
        from ``default_rng([seed, 29])``) as they are extracted: a dense release's 2-hop subgraphs
        are the whole graph, and are never listed whole."""
        if self.max_nodes is None:
            return extract_subgraphs(self.graph_.adjacency, pairs, labels, extractor=Extractor.NEIGHBOURHOOD, h=self.h)
        return extract_subgraphs(self.graph_.adjacency, pairs, labels, extractor=Extractor.NEIGHBOURHOOD, h=self.h,
                                 max_nodes=self.max_nodes, rng=np.random.default_rng([self.seed, 29]))

    def _fit(self, graph: PublishedGraph) -> None:
        rng = np.random.default_rng([self.seed, 23])
        pos = graph.pairs
        if self.max_train_edges is not None and pos.shape[1] > self.max_train_edges:
            pos = pos[:, np.sort(rng.choice(pos.shape[1], self.max_train_edges, replace=False))]
        neg = sample_non_edges(graph.num_nodes, pos.shape[1], forbidden=graph.pairs, rng=rng)
        train = self._subgraphs(np.concatenate([pos, neg], axis=1),
                                np.r_[np.ones(pos.shape[1]), np.zeros(neg.shape[1])])
        self.num_train_ = len(train)
        with torch.random.fork_rng():
            torch.manual_seed(self.seed)
            self.model_ = SubgraphGNN(self.label_cap + 1, backbone=self.backbone, hidden=self.hidden,
                                      num_layers=3 if self.backbone == "dgcnn" else self.h, dropout=0.5,
                                      sort_k=30 if self.backbone == "dgcnn" else 10)
            optimizer = torch.optim.Adam(self.model_.parameters(), lr=self.lr)
            sizes = train.num_nodes_per_subgraph
            for _ in range(self.epochs):
                self.model_.train()
                for batch in size_batches(sizes, self.batch_size, rng):
                    inputs, y = collate_dense(train, batch, max_label=self.label_cap)
                    optimizer.zero_grad()
                    bce_loss(self.model_(*inputs), y).backward()
                    optimizer.step()

    def _score(self, pairs: np.ndarray) -> np.ndarray:
        subgraphs = self._subgraphs(pairs, np.zeros(pairs.shape[1]))
        scores = np.empty(pairs.shape[1])
        self.model_.eval()
        with torch.no_grad():
            for batch in size_batches(subgraphs.num_nodes_per_subgraph, 4 * self.batch_size):
                inputs, _ = collate_dense(subgraphs, batch, max_label=self.label_cap)
                scores[batch] = self.model_(*inputs).double().numpy()
        return scores
