"""The non-private 2-layer GCN node classifier: :class:`GCNClassifier` (method id ``gcn``), the ceiling
a private node classifier is set beside.

Source: Kipf & Welling, "Semi-Supervised Classification with Graph Convolutional Networks" (ICLR
2017), Sec. 3 and 5 (two layers, hidden 64 here, dropout 0.5, Adam at lr 0.01 with weight decay
5e-4, 200 epochs, full batch). PyG's ``GCNConv`` layers (:class:`graphpriv.nn.gcn.GCN`). No
differential privacy: the result says "non-private".
"""

from __future__ import annotations

from typing import Any

import torch
from pydantic import Field
from torch_geometric.data import Data

from graphpriv.methods.base import Progress, Timer, no_progress
from graphpriv.methods.transductive_classifier import (
    TransductiveClassifier,
    TransductiveConfig,
    accuracy_of,
    train_full_batch,
)
from graphpriv.nn.gcn import GCN, sparse_adjacency

__all__ = ["GCNClassifier", "GCNConfig"]


class GCNConfig(TransductiveConfig):
    """Kipf & Welling's settings (hidden 64); ``val_ratio`` and ``test_ratio`` are the transductive
    protocol's split (:mod:`graphpriv.evaluation.transductive`: 75/10/15)."""

    hidden: int = Field(64, ge=1)
    dropout: float = Field(0.5, ge=0, lt=1)
    epochs: int = Field(200, ge=1)
    lr: float = Field(0.01, gt=0)
    weight_decay: float = Field(5e-4, ge=0)


def _forget_graph(model: GCN) -> None:
    """Drop the normalised adjacency the layers cached (``cached=True``), before another graph."""
    for conv in (model.conv1, model.conv2):
        conv._cached_edge_index = None
        conv._cached_adj_t = None


class GCNClassifier(TransductiveClassifier):
    """A 2-layer GCN (Kipf & Welling, ICLR 2017) as an estimator; no differential privacy.

    ``fit`` trains on the whole graph with the training nodes' labels (transductive); prediction
    reads the fitted graph (``data=None``) or any graph with the same feature width. The saved
    file holds the fitted graph's features and edges (what ``data=None`` predicts on): it is as
    private as the data.

    Args:
        random_state: seed of the initialisation and the dropout.
        **params: :class:`GCNConfig` fields.

    Attributes:
        model_: the trained :class:`~graphpriv.nn.gcn.GCN` (eval mode). n_features_in_: F.
        n_classes_: C. info_: ``train_nodes`` (and ``selected_epochs`` under ``best_val``).
        timings_: seconds per phase.

    Raises:
        ConfigError: an unknown hyperparameter or an invalid value.
    """

    config_cls = GCNConfig
    _fitted_private = ("_graph",)

    def fit(self, data: Data, train_nodes: object = None, *, val_nodes: object = None, num_classes: int | None = None,
            progress: Progress | None = no_progress) -> GCNClassifier:
        """Train on ``data`` with the labels of ``train_nodes`` (default: every labelled node).

        Args:
            data: a ``Data`` with ``x [N, F]``, ``y [N]`` (-1: unlabelled) and ``edge_index``.
            train_nodes: ``[T]`` labelled node ids. val_nodes: ``[V]`` labelled node ids held out
                of them, whose accuracy picks the epoch under ``model_selection="best_val"``
                (checked but not used under ``"last"``). num_classes: C (default: the largest
                label + 1). progress: called ``progress(epoch, epochs, loss=...)``.

        Returns:
            ``self``, fitted.

        Raises:
            DatasetError: missing features or labels, unlabelled or out-of-range training or
                validation nodes. ConfigError: ``best_val`` without ``val_nodes``.
        """
        progress = progress or no_progress
        config = self._config
        data, x, y, train, classes = self._fit_inputs(data, train_nodes, num_classes)
        val = self._validation_nodes(val_nodes, y, train)
        info: dict = {"train_nodes": int(train.size)}
        timer = Timer()
        adj = sparse_adjacency(data.edge_index.long(), int(x.shape[0]))
        index = torch.from_numpy(train)
        with timer.phase("training"), torch.random.fork_rng():
            torch.manual_seed(self.random_state)
            model = GCN(x.shape[1], config.hidden, classes, dropout=config.dropout)
            validation = None if val is None else accuracy_of(lambda: model(x, adj)[val], y[val])
            epoch = train_full_batch(model, lambda: model(x, adj)[index], y[index], epochs=config.epochs,
                                     lr=config.lr, weight_decay=config.weight_decay, progress=progress,
                                     validation=validation)
        if validation is not None:
            info["selected_epochs"] = {"training": epoch}
        self.model_ = model
        self.n_features_in_, self.n_classes_ = int(x.shape[1]), classes
        self.info_, self.timings_ = info, dict(timer.timings)
        self._graph = (x, data.edge_index.long())
        return self._fitted(None)

    def _logits_of(self, data: Data | None, index_of) -> torch.Tensor:
        """The GCN on the fitted graph (``data=None``) or on ``data``."""
        if data is None:
            x, edge_index = self._graph
        else:
            x, edge_index = torch.as_tensor(data.x, dtype=torch.float32), data.edge_index.long()
        index = index_of(int(x.shape[0]))
        _forget_graph(self.model_)
        with torch.no_grad():
            out = self.model_(x, sparse_adjacency(edge_index, int(x.shape[0])))[index]
        _forget_graph(self.model_)
        return out

    def _get_state(self) -> dict[str, Any]:
        x, edge_index = self._graph
        return {"model": self._weights(self.model_), "x": x.clone(), "edge_index": edge_index.clone(),
                **self._facts()}

    def _set_state(self, state: dict[str, Any]) -> None:
        model = GCN(int(state["n_features_in"]), self._config.hidden, int(state["n_classes"]),
                    dropout=self._config.dropout)
        self.model_ = self._load_weights(model, state["model"])
        self._graph = (state["x"], state["edge_index"])
        self._set_facts(state)
