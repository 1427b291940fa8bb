"""The transductive node-classification protocol (GAP's): one graph, a random 75/10/15 node split,
fit on the whole graph with the training nodes' labels, test accuracy on the test nodes.

Every edge and every node's features take part in the fit (the aggregation reads the whole graph),
only the training nodes' labels are read; the validation nodes are held out from both sides, and
their accuracy (``val_accuracy``) is what a hyperparameter search reads; the metric is the
accuracy over the labelled test nodes (= micro-F1), beside the majority class of the training
labels on the same test nodes. Source: Sajadmanesh,
Shamsabadi, Bellet, Gatica-Perez, "GAP: Differentially Private Graph Neural Networks with
Aggregation Perturbation" (USENIX Security 2023), Sec. 6.1 ("we randomly split the nodes into
training, validation and test sets with 75/10/15% ratio").

The registry's ``gap-edp``, ``progap-edp`` (edge-level DP), ``gap-ndp``, ``progap-ndp`` (node-level
DP), ``gap-inf`` and ``progap-inf`` (no DP) run through :func:`run_gap`; ``sage-ndp`` and the
feature-only baselines on this split, ``dp-mlp-transductive`` and ``mlp-transductive``, through
:func:`run_sage`;
``gcn`` (Kipf & Welling's GCN, no DP: the ceiling) through :func:`run_gcn`.
"""

from __future__ import annotations

import numpy as np
import torch
from torch_geometric.data import Data

from graphpriv.data.splits import node_split
from graphpriv.data.validation import check_data, check_seed
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.evaluation.baselines import majority_class
from graphpriv.methods.base import Baseline, Progress, Result, Timer, no_progress
from graphpriv.methods.gap import GAPClassifier, GAPConfig, GAPNodeClassifier
from graphpriv.methods.gcn import GCNClassifier, GCNConfig
from graphpriv.methods.progap import ProGAPClassifier, ProGAPConfig, ProGAPNodeClassifier
from graphpriv.methods.sage import SAGEClassifier, SAGEConfig

__all__ = ["GAP_ESTIMATORS", "GAP_PRIVATE", "SAGE_IDS", "fit_transductive", "run_gap", "run_gcn", "run_sage"]

#: GAP's and ProGAP's method ids -> their estimator class.
GAP_ESTIMATORS: dict[str, type[GAPClassifier | ProGAPClassifier]] = {
    "gap-edp": GAPClassifier, "gap-inf": GAPClassifier, "gap-ndp": GAPNodeClassifier,
    "progap-edp": ProGAPClassifier, "progap-inf": ProGAPClassifier, "progap-ndp": ProGAPNodeClassifier}
#: GAP's and ProGAP's method ids -> whether the fit is private.
GAP_PRIVATE: dict[str, bool] = {method: not method.endswith("-inf") for method in GAP_ESTIMATORS}


def fit_transductive(estimator: GAPClassifier | ProGAPClassifier | GCNClassifier | SAGEClassifier, data: Data, *, val_ratio: float,
                     test_ratio: float, seed: int, timer: Timer,
                     progress: Progress = no_progress) -> tuple[float, Baseline, float]:
    """The protocol on one estimator: split (phase ``split``), ``fit`` on the whole graph with the
    labelled training nodes (under ``model_selection="best_val"``, GAP and ProGAP also get the
    labelled validation nodes, which pick their epochs; the estimators' phases added to ``timer``),
    accuracy on the labelled test nodes of the fitted graph (phase ``inference``) beside the
    majority class's, and on the labelled validation nodes (what a hyperparameter search reads,
    never the test accuracy; under ``best_val`` it is the best over the epochs, so it reads high
    against the test accuracy).

    Returns:
        ``(accuracy, baseline, val_accuracy)`` (NaN when no node of that part is labelled).

    Raises:
        DatasetError: a labelled class without a training node in the split (before any fit); and
            what :func:`~graphpriv.data.splits.node_split` and the estimator's ``fit`` raise.
        ConfigError: ``model_selection="best_val"`` with no labelled validation node.
    """
    y = np.asarray(data.y)
    with timer.phase("split"):
        split = node_split(data, train_ratio=1.0 - val_ratio - test_ratio, val_ratio=val_ratio, seed=seed)
    train = split.train_idx[y[split.train_idx] >= 0]
    missing = sorted(set(np.unique(y[y >= 0]).tolist()) - set(np.unique(y[train]).tolist()))
    if missing:
        raise DatasetError(f"{getattr(data, 'name', 'the graph')}: class {missing[0]} has no training node in this "
                           f"split ({len(missing)} classes without one; seed {seed}): the classifier could never "
                           "predict it; use another seed or a larger training share (val_ratio, test_ratio), or mark "
                           "the rare classes unlabelled (-1)")
    val = split.val_idx[y[split.val_idx] >= 0]
    selects = getattr(estimator.config, "model_selection", "last") == "best_val"
    if selects and not val.size:
        raise ConfigError(f"model_selection='best_val' picks epochs on the validation nodes, and this split has no "
                          f"labelled one (val_ratio {val_ratio}): raise val_ratio, or set model_selection='last'")
    estimator.fit(data, train, num_classes=int(y.max()) + 1, progress=progress,
                  **({"val_nodes": val} if selects else {}))
    timer.merge(estimator.timings_)
    with timer.phase("inference"):
        test = split.test_idx[y[split.test_idx] >= 0]
        return _accuracy(estimator, y, test), majority_class(y[train], y[test]), _accuracy(estimator, y, val)


def _accuracy(estimator: GAPClassifier | ProGAPClassifier | GCNClassifier, y: np.ndarray, nodes: np.ndarray) -> float:
    """Accuracy of the fitted graph's predictions on ``nodes`` (NaN for none)."""
    if not nodes.size:
        return float("nan")
    return float((estimator.predict(nodes=nodes) == torch.from_numpy(y[nodes])).float().mean())


def _checked(data: Data, method: str, seed: int) -> tuple[Data, int]:
    data = check_data(data, needs_features=True, needs_labels=True, method=method)  # no edges: nothing to aggregate
    return data, check_seed(seed)


def run_gap(config: GAPConfig | ProGAPConfig, data: Data, *, seed: int, method: str = "gap-edp",
            progress: Progress = no_progress) -> Result:
    """One GAP or ProGAP cell: :class:`~graphpriv.methods.gap.GAPClassifier` or
    :class:`~graphpriv.methods.progap.ProGAPClassifier` (``random_state`` = ``seed``) through the
    transductive protocol (:func:`fit_transductive`).

    Args:
        config: the hyperparameters (``val_ratio``, ``test_ratio``: the split). data: a graph with
            features and labels. seed: the split's and the fit's, in [0, 2^32 - 1]. method:
            ``gap-edp``, ``progap-edp`` (edge level), ``gap-ndp``, ``progap-ndp`` (node level, a
            :class:`~graphpriv.methods.gap.GAPNodeConfig` / ``ProGAPNodeConfig``), or ``gap-inf`` /
            ``progap-inf`` (``config.private`` must be False). progress: the fit's phases.

    Returns:
        :class:`~graphpriv.methods.base.Result` with ``accuracy`` on the labelled test nodes,
        ``val_accuracy`` on the validation nodes and, for the private ids, the privacy report (edge
        level, undirected edges, with ``epsilon_directed``; or node level, bounded degree D); the
        majority class as its baseline.

    Raises:
        ConfigError: another method id, a non-private id with ``private=True``, a bad seed.
        DatasetError: no features or labels, no edges, a graph too small to split.
        BudgetExceededError: the budget cannot be met.
    """
    if method not in GAP_PRIVATE:
        raise ConfigError(f"run_gap runs {', '.join(GAP_PRIVATE)} (got {method!r})")
    data, seed = _checked(data, method, seed)
    if not GAP_PRIVATE[method] and config.private:
        twin = method.replace("-inf", "-edp")
        raise ConfigError(f"{method} trains without differential privacy: drop private=true, or run {twin}")
    return _cell(GAP_ESTIMATORS[method](random_state=seed, **config.model_dump()), config, data, method=method,
                 seed=seed, progress=progress)


def _cell(estimator: GAPClassifier | ProGAPClassifier | GCNClassifier | SAGEClassifier,
          config: GAPConfig | ProGAPConfig | GCNConfig | SAGEConfig, data: Data, *, method: str, seed: int,
          progress: Progress) -> Result:
    """One cell: :func:`fit_transductive` on ``estimator``, its ``Result`` (``accuracy``,
    ``val_accuracy`` and, when the fit gives them, ``epsilon_directed`` and ``within_degree_bound``
    (1.0 when the graph's degrees were within D, the node-level relation's condition, else 0.0);
    the privacy report; the majority class as the baseline)."""
    timer = Timer()
    score, baseline, val_score = fit_transductive(estimator, data, val_ratio=config.val_ratio,
                                                  test_ratio=config.test_ratio, seed=seed, timer=timer,
                                                  progress=progress)
    metrics = {"accuracy": score, "val_accuracy": val_score}
    for fact in ("epsilon_directed", "within_degree_bound"):
        if fact in estimator.info_:
            metrics[fact] = float(estimator.info_[fact])
    return Result(method=method, dataset=str(getattr(data, "name", "graph")), seed=seed,
                  config=config.model_dump(mode="json"), metrics=metrics, privacy=estimator.privacy_report_,
                  timings=timer.finish(), info=dict(estimator.info_), baselines=[baseline]).with_estimator(estimator)


#: SAGE's method ids -> (the preset they must keep: D = 0 for the feature-only ids, whether private).
SAGE_IDS: dict[str, tuple[bool, bool]] = {"sage-ndp": (False, True), "dp-mlp-transductive": (True, True),
                                          "mlp-transductive": (True, False)}


def run_sage(config: SAGEConfig, data: Data, *, seed: int, method: str = "sage-ndp",
             progress: Progress = no_progress) -> Result:
    """One ``sage-ndp`` cell (node-level DP-SGD on a one-hop GNN, degree bound D), or one of the
    feature-only baselines on the same split (``dp-mlp-transductive``, ``mlp-transductive``: D = 0):
    :class:`~graphpriv.methods.sage.SAGEClassifier` through the transductive protocol.

    Returns:
        :class:`~graphpriv.methods.base.Result` with ``accuracy`` and ``val_accuracy``, the privacy
        report (node level) when private, the majority class as its baseline.

    Raises:
        ConfigError: another method id; a feature-only id given D > 0, ``mlp-transductive`` given
            ``private=True``; a bad seed. DatasetError: no features or labels, a graph too small to
            split. BudgetExceededError: the budget cannot be met.
    """
    if method not in SAGE_IDS:
        raise ConfigError(f"run_sage runs {', '.join(SAGE_IDS)} (got {method!r})")
    features_only, private = SAGE_IDS[method]
    if features_only and config.max_degree:
        raise ConfigError(f"{method} reads no edge: drop max_degree (it must stay 0), or run sage-ndp")
    if not private and config.private:
        raise ConfigError(f"{method} trains without differential privacy: drop private=true, or run "
                          "dp-mlp-transductive")
    data, seed = _checked(data, method, seed)
    return _cell(SAGEClassifier(random_state=seed, **config.model_dump()), config, data, method=method, seed=seed,
                 progress=progress)


def run_gcn(config: GCNConfig, data: Data, *, seed: int, method: str = "gcn",
            progress: Progress = no_progress) -> Result:
    """One ``gcn`` cell: :class:`~graphpriv.methods.gcn.GCNClassifier` (non-private, ``random_state``
    = ``seed``) through the transductive protocol: the ceiling the private node classifiers are set
    beside.

    Returns:
        :class:`~graphpriv.methods.base.Result` with ``accuracy`` and ``val_accuracy``, no privacy
        report, the majority class as its baseline.

    Raises:
        ConfigError: another method id, a bad seed. DatasetError: no features or labels, no edges,
            a graph too small to split.
    """
    if method != "gcn":
        raise ConfigError(f"run_gcn runs gcn (got {method!r})")
    data, seed = _checked(data, method, seed)
    return _cell(GCNClassifier(random_state=seed, **config.model_dump()), config, data, method=method, seed=seed,
                 progress=progress)
