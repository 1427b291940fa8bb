"""The node-classification protocol: inductive split -> fit a node classifier -> test accuracy.

A graph's nodes are split at random into training (80% by default) and test nodes, and every edge
between the parts is removed (:func:`graphpriv.data.splits.node_split` with ``inductive=True``).
The estimator is fitted on the training side alone (the training nodes' induced graph: its
privacy guarantee is node-level, add/remove one training node with its features, label and edges)
and predicts the test side alone (the test nodes' induced graph, so inference uses no training
edge); the metric is the accuracy over the labelled test nodes (= micro-F1). Source: Zhang, Lee,
Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with Node-Level Differential Privacy"
(WWW 2024), Sec. 4 (the inductive setting, "Setup"; the "Features" baseline, "Our Approach and
Baselines").

The registry's method ids run through :func:`run_dpar` (``dpar-em0``, ``dpar-em1``, ``dpar-gm``,
``dpar-nodp``: :class:`~graphpriv.methods.dpar.DPARClassifier` with ``appr`` from
:data:`DPAR_APPR`) and :func:`run_mlp` (``dp-mlp``, ``mlp``:
:class:`~graphpriv.methods.mlp.MLPClassifier`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch_geometric.data import Data

from graphpriv.data.splits import node_split
from graphpriv.data.validation import check_data, check_seed
from graphpriv.errors import ConfigError
from graphpriv.evaluation.baselines import majority_class
from graphpriv.methods.base import Baseline, Progress, Result, Timer, no_progress
from graphpriv.methods.dpar import DPARClassifier, DPARConfig
from graphpriv.methods.mlp import MLPClassifier, MLPConfig
from graphpriv.methods.node_classifier import NodeClassifier
from graphpriv.methods.variants import DPAR_APPR

__all__ = ["DPAR_APPR", "MLP_PRIVATE", "NodeSides", "accuracy", "fit_and_score", "inductive_sides", "run_dpar",
           "run_mlp"]

#: The feature baseline's method ids -> whether the fit is private.
MLP_PRIVATE: dict[str, bool] = {"dp-mlp": True, "mlp": False}


@dataclass
class NodeSides:
    """The two sides of an inductive node split, each its own graph.

    Attributes:
        train: the training nodes' induced graph (``x``, ``y``, ``edge_index`` in both directions,
            ``num_nodes`` = T); its node i is ``train_idx[i]`` of the input graph.
        test: the test nodes' induced graph, the same way (node i is ``test_idx[i]``).
        train_idx: ``[T]`` and test_idx: ``[N - T]`` sorted node ids of the input graph.
        num_classes: C of the input graph (its largest label + 1), the classifier's output width.
    """

    train: Data
    test: Data
    train_idx: np.ndarray
    test_idx: np.ndarray
    num_classes: int


def _side(data: Data, x: torch.Tensor, y: torch.Tensor, nodes: np.ndarray, pairs: np.ndarray, part: str) -> Data:
    """The induced graph of ``nodes`` (``pairs``: ``[2, E]`` u < v edges, input ids)."""
    local = np.full(int(x.shape[0]), -1)
    local[nodes] = np.arange(nodes.size)
    inside = local[pairs]
    inside = inside[:, (inside >= 0).all(0)]
    edge_index = torch.from_numpy(np.concatenate([inside, inside[::-1]], axis=1)).long()
    name = getattr(data, "name", None)
    return Data(x=x[nodes], y=y[nodes], edge_index=edge_index, num_nodes=int(nodes.size),
                name=f"{name if isinstance(name, str) else 'graph'} ({part} side)")


def inductive_sides(data: Data, *, test_ratio: float, seed: int) -> NodeSides:
    """Split ``data`` into a training and a test graph (see the module docstring).

    Args:
        data: a checked graph with ``x [N, F]`` and ``y [N]``. test_ratio: in (0, 1).
        seed: the split's (``node_split``'s generator).

    Returns:
        The :class:`NodeSides`.

    Raises:
        ConfigError: a ratio out of range. DatasetError: too few nodes for two non-empty parts.
    """
    x = torch.as_tensor(data.x, dtype=torch.float32)
    y = torch.as_tensor(data.y, dtype=torch.long)
    split = node_split(data, train_ratio=1 - test_ratio, seed=seed, inductive=True)
    return NodeSides(train=_side(data, x, y, split.train_idx, split.train_edge_index, "training"),
                     test=_side(data, x, y, split.test_idx, split.test_edge_index, "test"),
                     train_idx=split.train_idx, test_idx=split.test_idx, num_classes=int(y.max()) + 1)


def accuracy(estimator: NodeClassifier, test: Data) -> float:
    """Accuracy of ``estimator.predict`` over the labelled nodes of ``test`` (unlabelled ones,
    label -1, still take part in the propagation).

    Args:
        estimator: a fitted node classifier. test: a graph with ``x``, ``y`` and ``edge_index``.

    Returns:
        The fraction of labelled nodes predicted right (NaN when none is labelled).

    Raises:
        NotFittedError: ``estimator`` is not fitted. DatasetError: see ``predict``.
    """
    y = torch.as_tensor(test.y, dtype=torch.long)
    labelled = y >= 0
    return float((estimator.predict(test) == y)[labelled].float().mean())


def fit_and_score(estimator: NodeClassifier, data: Data, *, test_ratio: float, seed: int, timer: Timer,
                  progress: Progress = no_progress) -> tuple[float, Baseline]:
    """The protocol on one estimator: split ``data`` (phase ``split``), ``fit`` on the training
    side (the estimator's phases added to ``timer``), test accuracy (phase ``inference``) beside
    the majority class's on the same sides.

    Args:
        estimator: an unfitted node classifier (fitted in place). data: a checked graph with
            features and labels. test_ratio: the test share. seed: the split's. timer: collects
            the phases. progress: passed to ``fit``.

    Returns:
        ``(accuracy, baseline)``: the test accuracy and the majority class's
        (:func:`~graphpriv.evaluation.baselines.majority_class` of the training side's labels).

    Raises:
        What :func:`inductive_sides` and the estimator's ``fit`` raise.
    """
    with timer.phase("split"):
        sides = inductive_sides(data, test_ratio=test_ratio, seed=seed)
    estimator.fit(sides.train, num_classes=sides.num_classes, progress=progress)
    timer.merge(estimator.timings_)
    with timer.phase("inference"):
        return accuracy(estimator, sides.test), majority_class(sides.train.y, sides.test.y)


def run_dpar(config: DPARConfig, data: Data, *, seed: int, method: str = "dpar-gm",
             progress: Progress = no_progress) -> Result:
    """One DPAR cell: :class:`~graphpriv.methods.dpar.DPARClassifier` (``appr`` from the method id,
    ``random_state`` = ``seed``) through the protocol.

    Args:
        config: the hyperparameters. data: a graph with features and labels. seed: the split's and
            the fit's, in [0, 2^32 - 1]. method: ``dpar-em0``, ``dpar-em1``, ``dpar-gm`` or
            ``dpar-nodp`` (non-private: ``config.private`` must be False). progress: per step.

    Returns:
        :class:`~graphpriv.methods.base.Result` with ``accuracy`` (test nodes), ``epsilon_rigorous``
        and ``epsilon_paper`` (the same noise under both analyses), ``epsilon_appr`` and
        ``epsilon_sgd`` (private runs); the privacy report (phases ``dp-appr`` and ``dp-sgd`` on the
        node sample, total after sampling; None for ``dpar-nodp``); info on the sample (sizes, m,
        noise).

    Raises:
        ConfigError: another method id, ``dpar-nodp`` with ``private=True``, a bad seed.
        DatasetError: a graph without features or labels. ValueError / BudgetExceededError:
        settings no noise can satisfy (e.g. delta / q' >= 1).
    """
    appr = DPAR_APPR.get(method)
    if appr is None:
        raise ConfigError(f"run_dpar runs {', '.join(DPAR_APPR)} (got {method!r})")
    data = check_data(data, needs_features=True, needs_labels=True, method=method)
    seed = check_seed(seed)
    if appr == "exact" and config.private:
        raise ConfigError(f"{method} trains without differential privacy (exact APPR rows): drop private=true, or "
                          "run dpar-em0, dpar-em1 or dpar-gm")
    estimator = DPARClassifier(appr=appr, random_state=seed, **config.model_dump())
    timer = Timer()
    score, baseline = fit_and_score(estimator, data, test_ratio=config.test_ratio, seed=seed, timer=timer,
                                    progress=progress)
    return Result(method=method, dataset=str(getattr(data, "name", "graph")), seed=seed,
                  config=config.model_dump(mode="json"), metrics={"accuracy": score, **estimator.epsilons_},
                  privacy=estimator.privacy_report_, timings=timer.finish(), info=dict(estimator.info_),
                  baselines=[baseline]).with_estimator(estimator)


def run_mlp(config: MLPConfig, data: Data, *, seed: int, method: str = "dp-mlp",
            progress: Progress = no_progress) -> Result:
    """One feature-baseline cell: :class:`~graphpriv.methods.mlp.MLPClassifier` (``random_state`` =
    ``seed``) through the protocol.

    Args:
        config: the hyperparameters. data: a graph with features and labels. seed: the split's and
            the fit's, in [0, 2^32 - 1]. method: ``dp-mlp`` (DP-SGD, node-level add/remove) or
            ``mlp`` (non-private: ``config.private`` must be False). progress: per step.

    Returns:
        :class:`~graphpriv.methods.base.Result` with ``accuracy`` on the test nodes and, for
        ``dp-mlp``, the privacy report; info: ``train_nodes``, ``steps``, ``noise_multiplier``.

    Raises:
        ConfigError: another method id, ``mlp`` with ``private=True``, a bad seed. DatasetError: no
            features or labels. BudgetExceededError: the budget cannot be met.
    """
    if method not in MLP_PRIVATE:
        raise ConfigError(f"run_mlp runs {', '.join(MLP_PRIVATE)} (got {method!r})")
    data = check_data(data, needs_features=True, needs_labels=True, method=method)
    seed = check_seed(seed)
    if not MLP_PRIVATE[method] and config.private:
        raise ConfigError(f"{method} trains without differential privacy: drop private=true, or run dp-mlp")
    estimator = MLPClassifier(random_state=seed, **config.model_dump())
    timer = Timer()
    score, baseline = fit_and_score(estimator, data, test_ratio=config.test_ratio, seed=seed, timer=timer,
                                    progress=progress)
    return Result(method=method, dataset=str(getattr(data, "name", "graph")), seed=seed,
                  config=config.model_dump(mode="json"), metrics={"accuracy": score},
                  privacy=estimator.privacy_report_, timings=timer.finish(), info=dict(estimator.info_),
                  baselines=[baseline]).with_estimator(estimator)
