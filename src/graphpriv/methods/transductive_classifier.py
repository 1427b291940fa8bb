"""The base of node classifiers fitted on one whole graph (transductive): GAP and the GCN ceiling.

A fitted estimator predicts the graph it was fitted on (``data=None``) or any graph whose node
features have the fitted width; subclasses say what that costs (GAP releases the other graph
afresh) and implement :meth:`TransductiveClassifier._logits_of`.
"""

from __future__ import annotations

import torch
from pydantic import Field, model_validator
from torch_geometric.data import Data

from graphpriv.data.validation import check_data, check_node_ids
from graphpriv.errors import DatasetError
from graphpriv.methods.base import MethodConfig
from graphpriv.methods.estimator import Estimator

__all__ = ["TransductiveClassifier", "TransductiveConfig"]


class TransductiveConfig(MethodConfig):
    """The transductive protocol's split (:mod:`graphpriv.evaluation.transductive`: 75/10/15),
    shared by the configs of the classifiers it runs."""

    val_ratio: float = Field(0.10, ge=0, lt=1, description="protocol: validation share, held out")
    test_ratio: float = Field(0.15, gt=0, lt=1, description="protocol: test share (the rest trains)")

    @model_validator(mode="after")
    def _split_leaves_training(self) -> TransductiveConfig:
        if self.val_ratio + self.test_ratio >= 1:
            raise ValueError(f"val_ratio + test_ratio must be < 1 (got {self.val_ratio} + {self.test_ratio})")
        return self


class TransductiveClassifier(Estimator):
    """Prediction for node classifiers fitted on a whole graph (``n_features_in_`` set by ``fit``)."""

    def predict_proba(self, data: Data | None = None, nodes: object = None) -> torch.Tensor:
        """Class probabilities ``[K, C]`` of ``nodes`` (default: all) of the fitted graph
        (``data=None``) or of another graph ``data`` (``x`` of width ``n_features_in_``,
        ``edge_index``; what that costs is the subclass's to say).

        Raises:
            NotFittedError: before ``fit``. DatasetError: a malformed graph, another feature width,
                a node id out of range.
        """
        return torch.softmax(self._logits(data, nodes), dim=1)

    def predict(self, data: Data | None = None, nodes: object = None) -> torch.Tensor:
        """The most likely class ``[K]`` of ``nodes`` (arguments and errors as :meth:`predict_proba`)."""
        return self._logits(data, nodes).argmax(1)

    def _logits(self, data: Data | None, nodes: object) -> torch.Tensor:
        self._check_fitted()
        if data is not None:
            data = check_data(data, needs_features=True, method=type(self).__name__, allow_no_edges=True)
            width = int(torch.as_tensor(data.x).shape[1])
            if width != self.n_features_in_:
                raise DatasetError(f"data.x has {width} features per node, but this {type(self).__name__} was "
                                   f"fitted on {self.n_features_in_}; pass a graph with the same features")
        return self._logits_of(data, lambda count: torch.from_numpy(check_node_ids(nodes, count, name="nodes")))

    def _logits_of(self, data: Data | None, index_of) -> torch.Tensor:
        """``[K, C]`` logits of the fitted graph (``data=None``) or of the checked ``data``;
        ``index_of(N)`` gives the ``[K]`` node ids, checked against N."""
        raise NotImplementedError
