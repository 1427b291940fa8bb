"""The base of node classifiers fitted on one whole graph (transductive): GAP and the GCN ceiling.

A fitted estimator predicts the graph it was fitted on (``data=None``) or any graph whose node
features have the fitted width; subclasses say what that costs (GAP releases the other graph
afresh) and implement :meth:`TransductiveClassifier._logits_of`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F
from pydantic import Field, model_validator
from torch_geometric.data import Data

from graphpriv.data.validation import check_data, check_node_ids
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.methods.base import MethodConfig, Progress
from graphpriv.methods.best_epoch import BestEpoch
from graphpriv.methods.estimator import Estimator
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.calibration import quiet_absl
from graphpriv.privacy.report import PrivacyReport
from graphpriv.privacy.units import PrivacyUnit
from graphpriv.propagation.aggregation_perturbation import (
    calibrate_aggregation_noise,
    edge_sensitivity,
    epsilon_under_relation,
)

__all__ = ["AggregationPerturbationConfig", "EdgeBudget", "EdgeLevelAggregation", "TransductiveClassifier",
           "TransductiveConfig", "accuracy_of", "aggregation_budget", "aggregation_report", "train_full_batch"]


class TransductiveConfig(MethodConfig):
    """The transductive protocol's split (:mod:`graphpriv.evaluation.transductive`: 75/10/15) and
    which epoch a fit keeps (``model_selection``), shared by the configs of the classifiers it runs.
    ``best_val`` reads the validation nodes' labels every epoch: free where labels are public (edge
    level, no DP); the node-level configs refuse it."""

    val_ratio: float = Field(0.10, ge=0, lt=1, description="protocol: validation share, held out")
    test_ratio: float = Field(0.15, gt=0, lt=1, description="protocol: test share (the rest trains)")
    model_selection: Literal["last", "best_val"] = Field(
        "last", description="last: each trained module as after its last epoch; best_val: each restored to its first "
        "epoch of best validation accuracy (GAP's and ProGAP's released code; fit needs val_nodes; edge level and "
        "no-DP only)")

    @model_validator(mode="after")
    def _split_leaves_training(self) -> TransductiveConfig:
        if self.val_ratio + self.test_ratio >= 1:
            raise ValueError(f"val_ratio + test_ratio must be < 1 (got {self.val_ratio} + {self.test_ratio})")
        return self


class AggregationPerturbationConfig(TransductiveConfig):
    """What GAP and ProGAP share: the budget, the MLPs' shape and the training (the paper's code's
    defaults: hidden 16, 1-layer bases and heads, SELU with batch normalisation, no dropout, 100
    epochs, Adam at lr 0.01)."""

    epsilon: float = Field(8.0, gt=0, description="edge-level epsilon (undirected edges)")
    delta: float = Field(1e-5, gt=0, lt=1, description="below 1 / |E| up to 100,000 edges")
    private: bool = True
    hidden: int = Field(16, ge=1)
    base_layers: int = Field(1, ge=1)
    head_layers: int = Field(1, ge=1)
    dropout: float = Field(0.0, ge=0, lt=1)
    batch_norm: bool = True
    epochs: int = Field(100, ge=1, description="epochs of the classifier (GAP) or of each stage (ProGAP)")
    lr: float = Field(0.01, gt=0)
    weight_decay: float = Field(0.0, ge=0)


@dataclass(frozen=True)
class EdgeBudget:
    """An edge-level fit's budget: the ledger its aggregations are spent on (None: not private) and
    their noise multiplier z (0.0: no noise)."""

    ledger: Ledger | None
    noise_multiplier: float


def aggregation_budget(config: AggregationPerturbationConfig, count: int, info: dict) -> tuple[Ledger | None, float]:
    """``(ledger, z)`` of an aggregation-perturbation fit: for a private config, z calibrated so that
    ``count`` Gaussian aggregations spend ``config.epsilon`` at ``config.delta`` and an edge-level
    ledger they are spent on (``info`` gains ``noise_multiplier`` and ``noise_std`` = z sqrt 2);
    ``(None, 0.0)`` otherwise.

    Raises:
        BudgetExceededError: no noise meets the budget.
    """
    if not config.private:
        return None, 0.0
    with quiet_absl():
        z = calibrate_aggregation_noise(epsilon=config.epsilon, delta=config.delta, hops=count)
    info.update(noise_multiplier=z, noise_std=z * edge_sensitivity("undirected"))
    return Ledger(PrivacyUnit.EDGE, delta=config.delta), z


def aggregation_report(ledger: Ledger, config: AggregationPerturbationConfig, noise_multiplier: float, count: int, *,
                       where: str, rest: str) -> tuple[PrivacyReport, float]:
    """The privacy report of an aggregation-perturbation fit (GAP, ProGAP) and the epsilon of the
    same noise under the directed relation (one direction of an edge as the unit, sensitivity 1:
    the public code's), at the fit's delta.

    Args:
        ledger: the fit's (the ``count`` aggregations spent). config: its budget. noise_multiplier:
            z. count: the aggregations. where: which step reads the edges (for the note). rest:
            why the other steps add nothing (for the note).

    Returns:
        ``(report, epsilon_directed)``.
    """
    with quiet_absl():
        directed = epsilon_under_relation(noise_multiplier, count, config.delta, calibrated_for="undirected",
                                          relation="directed")
        relation = (f"edge-level add/remove of one undirected edge: only {where} read edges, each of the {count} a "
                    f"Gaussian mechanism at sensitivity sqrt(2) (two rows move by a unit row each); {rest}")
        directed_note = ("the same noise under the directed relation (one direction of an edge, sensitivity 1, the "
                         f"public code's): epsilon {directed:.4f}")
        return ledger.report(target_epsilon=config.epsilon, notes=[relation, directed_note]), directed


class EdgeLevelAggregation:
    """The steps GAP-EDP and ProGAP-EDP take alike (a node-level subclass overrides them): the
    aggregations' noise calibrated to the budget, every edge aggregated, the undirected edge
    relation's sensitivity, the edge-level report with the directed reading. A subclass says how
    many noisy aggregations it runs (``_aggregation_count``) and, for the report, which step reads
    edges and why the others add nothing (``_aggregation_words``)."""

    def _aggregation_count(self) -> int:
        raise NotImplementedError

    def _aggregation_words(self) -> tuple[str, str]:
        raise NotImplementedError

    def _budget(self, num_train: int, info: dict) -> EdgeBudget:
        """The aggregations' noise calibrated to the budget (nothing when not private)."""
        return EdgeBudget(*aggregation_budget(self._config, self._aggregation_count(), info))

    def _edges(self, edge_index: torch.Tensor, num_nodes: int, info: dict | None) -> torch.Tensor:
        """The edges the aggregations read: all of them."""
        return edge_index

    def _sensitivity(self) -> float | None:
        """One aggregation's sensitivity (None: the undirected edge relation's, sqrt 2)."""
        return None

    def _report(self, budget: EdgeBudget, info: dict) -> PrivacyReport | None:
        """The fit's report (``info`` gains ``epsilon_directed``); None when not private."""
        if budget.ledger is None:
            return None
        where, rest = self._aggregation_words()
        privacy, directed = aggregation_report(budget.ledger, self._config, budget.noise_multiplier,
                                               self._aggregation_count(), where=where, rest=rest)
        info["epsilon_directed"] = directed
        return privacy


def train_full_batch(module: torch.nn.Module, logits: Callable[[], torch.Tensor], y: torch.Tensor, *, epochs: int,
                     lr: float, weight_decay: float, progress: Progress,
                     parameters: list[torch.nn.Parameter] | None = None,
                     validation: Callable[[], float] | None = None) -> int:
    """Full-batch Adam on the cross-entropy of ``logits()`` (``[T, C]``, recomputed each epoch)
    against ``y [T]``: ``module`` in training mode while it trains, in eval mode after.

    With ``validation``, the score it returns (validation accuracy) is read after every epoch's step
    with ``module`` in eval mode and without gradients, and ``module`` ends restored to the first
    epoch of highest score (its whole ``state_dict``, batch-norm statistics included): the
    checkpointing of GAP's and ProGAP's released trainers (monitor ``val/acc``, mode max).

    Args:
        module: what ``logits`` runs. logits: the forward pass. y: the labels. epochs, lr,
            weight_decay: Adam's schedule. progress: ``progress(epoch, epochs, loss=...)``.
        parameters: what Adam updates (default: all of ``module``'s).
        validation: the score of ``module`` as it stands (None: keep the last epoch).

    Returns:
        The epoch ``module`` ends at (1-based): ``epochs``, or the best epoch under ``validation``.
    """
    optimizer = torch.optim.Adam(module.parameters() if parameters is None else parameters, lr=lr,
                                 weight_decay=weight_decay)
    best = BestEpoch(module, validation) if validation is not None else None
    module.train()
    for epoch in range(1, epochs + 1):
        optimizer.zero_grad()
        loss = F.cross_entropy(logits(), y)
        loss.backward()
        optimizer.step()
        if best is not None:
            best.offer(epoch)
        progress(epoch, epochs, loss=float(loss.detach()))
    selected = best.restore() if best is not None else None
    module.eval()
    return epochs if selected is None else selected


def accuracy_of(logits: Callable[[], torch.Tensor], y: torch.Tensor) -> Callable[[], float]:
    """The score :func:`train_full_batch` reads: the accuracy of ``logits() [V, C]`` against ``y [V]``."""
    return lambda: float((logits().argmax(1) == y).float().mean())


class TransductiveClassifier(Estimator):
    """Prediction for node classifiers fitted on a whole graph (``n_features_in_`` set by ``fit``);
    the fitted facts every subclass saves (:meth:`_facts`, :meth:`_set_facts`)."""

    def _facts(self) -> dict[str, Any]:
        """``n_features_in``, ``n_classes``, ``info`` and ``timings`` for :meth:`_get_state`."""
        return {"n_features_in": self.n_features_in_, "n_classes": self.n_classes_, "info": json.dumps(self.info_),
                "timings": json.dumps(self.timings_)}

    def _set_facts(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`_facts` saved."""
        self.n_features_in_, self.n_classes_ = int(state["n_features_in"]), int(state["n_classes"])
        self.info_ = json.loads(state["info"])
        self.timings_ = json.loads(state["timings"])

    def _fit_inputs(self, data: Data, train_nodes: object,
                    num_classes: int | None) -> tuple[Data, torch.Tensor, torch.Tensor, np.ndarray, int]:
        """Check what ``fit`` was given: ``(data, x [N, F] float32, y [N] long, train [T] sorted
        labelled ids, C)``.

        Raises:
            DatasetError: missing features or labels; training nodes out of range or unlabelled,
                fewer than two; ``num_classes`` not above every training label; a class without a
                training node when ``num_classes`` is not given.
        """
        data = check_data(data, needs_features=True, needs_labels=True, method=type(self).__name__,
                          allow_no_edges=True)
        x = torch.as_tensor(data.x, dtype=torch.float32)
        y = torch.as_tensor(data.y, dtype=torch.long)
        if train_nodes is None:
            train = np.flatnonzero(y.numpy() >= 0)
        else:
            train = np.unique(check_node_ids(train_nodes, int(x.shape[0]), name="train_nodes"))
            if (y.numpy()[train] < 0).any():
                raise DatasetError(f"train_nodes includes unlabelled node {int(train[y.numpy()[train] < 0][0])} "
                                   "(label -1); pass labelled nodes only")
        if train.size < 2:
            raise DatasetError(f"{type(self).__name__} needs at least 2 labelled training nodes (got {train.size})")
        classes = int(y.max()) + 1 if num_classes is None else num_classes
        present = np.unique(y.numpy()[train])
        if isinstance(classes, bool) or not isinstance(classes, (int, np.integer)) or classes <= int(present.max()):
            raise DatasetError(f"num_classes must be an integer above every training label (they go up to "
                               f"{int(present.max())}), got {num_classes!r}")
        missing = sorted(set(range(int(classes))) - set(present.tolist()))
        if missing and num_classes is None:
            raise DatasetError(f"class {missing[0]} has no training node ({len(missing)} classes without one): the "
                               "classifier cannot learn it; use a split with every class in training, or pass "
                               "num_classes to keep it anyway")
        return data, x, y, train, int(classes)

    def _validation_nodes(self, val_nodes: object, y: torch.Tensor, train: np.ndarray) -> torch.Tensor | None:
        """Check ``fit``'s ``val_nodes`` (whenever given): ``[V]`` sorted labelled ids held out of
        ``train`` under ``model_selection="best_val"``; None when not given, and under ``"last"``,
        which uses none.

        Raises:
            ConfigError: ``best_val`` without ``val_nodes``. DatasetError: ids out of range,
                unlabelled, in ``train``, or none at all.
        """
        best_val = getattr(self._config, "model_selection", "last") == "best_val"
        if val_nodes is None:
            if best_val:
                raise ConfigError(f"model_selection='best_val' picks each module's epoch on validation accuracy: pass "
                                  f"val_nodes to {type(self).__name__}.fit (labelled nodes held out of train_nodes), or "
                                  "set model_selection='last'")
            return None
        val = np.unique(check_node_ids(val_nodes, int(y.shape[0]), name="val_nodes"))
        if not val.size:
            raise DatasetError("val_nodes is empty: pass at least one labelled validation node, or leave val_nodes out")
        labels = y.numpy()[val]
        if (labels < 0).any():
            raise DatasetError(f"val_nodes includes unlabelled node {int(val[labels < 0][0])} (label -1); pass labelled "
                               "nodes only")
        shared = np.intersect1d(val, train)
        if shared.size:
            raise DatasetError(f"val_nodes and train_nodes share node {int(shared[0])} ({shared.size} nodes): validation "
                               "nodes must be held out of training; pass train_nodes without them (when not given, "
                               "train_nodes is every labelled node)")
        return torch.from_numpy(val) if best_val else None

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
