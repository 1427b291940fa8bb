"""The trivial baseline of each task, measured on a run's own split.

A private result means little until it is set beside what a trivial method gets on the same data:

- node classification: the majority class of the training labels, predicted for every test node;
- link prediction: common neighbours on the training graph (Liben-Nowell & Kleinberg, "The
  link-prediction problem for social networks", JASIST 2007). It reads the training edges in the
  clear, so it is not private itself: an edge-level DP model that does not beat it gives its user
  nothing a one-line heuristic would not;
- ranking: a uniformly random ranking (the chance level of AUC@K and precision@K);
- publishing: the input graph released unchanged (the attacks' AUC on it is what an unprotected
  release gives away; its utility is the ceiling a release gives up) and chance for utility;
- synthesis: chance for the synthetic graph's link-prediction AUC, the input graph's utility as
  the ceiling.

Each function returns :class:`~graphpriv.methods.base.Baseline` entries for
:meth:`Result.with_baselines <graphpriv.methods.base.Result.with_baselines>`; the command line
prints them beside the run's metrics and warns when the run does not beat one.
"""

from __future__ import annotations

import itertools

import numpy as np
import torch
from torch_geometric.data import Data

from graphpriv.data.splits import LinkSplit
from graphpriv.methods.base import Baseline
from graphpriv.methods.heuristic import CommonNeighbours
from graphpriv.ranking.metrics import chance_auc_at_k

__all__ = ["CN_NOTE", "chance_link_prediction", "common_neighbours", "input_graph_release", "majority_class",
           "ranking_chance"]

#: The caveat printed with the common-neighbour baseline.
CN_NOTE = "common neighbours reads the training edges in the clear (not private)"


def majority_class(train_y: torch.Tensor | np.ndarray, test_y: torch.Tensor | np.ndarray, *,
                   metric: str = "accuracy") -> Baseline:
    """Accuracy of predicting the most frequent training label for every labelled test node.

    Args:
        train_y: ``[T]`` integer labels of the training nodes (-1: unlabelled, ignored).
        test_y: ``[M]`` labels of the test nodes (-1: unlabelled, not scored). metric: the run's
            metric it stands beside.

    Returns:
        ``Baseline("majority class", metric, accuracy)`` (ties between classes: the smallest
        label; NaN when either side has no labelled node).
    """
    train = np.asarray(train_y).astype(np.int64)
    test = np.asarray(test_y).astype(np.int64)
    train, test = train[train >= 0], test[test >= 0]
    if not train.size or not test.size:
        return Baseline(name="majority class", metric=metric, value=float("nan"))
    majority = int(np.bincount(train).argmax())
    return Baseline(name="majority class", metric=metric, value=float(np.mean(test == majority)))


def common_neighbours(train: Data, split: LinkSplit, *, metric: str = "test_auc", private: bool = True) -> Baseline:
    """Common-neighbour AUC of the split's test pairs on the training graph.

    Args:
        train: the training graph the run's estimator was fitted on (``edge_index [2, 2E]``,
            ``num_nodes`` N). split: the run's split (``test_pos [2, P]``, ``test_neg [2, Q]``).
        metric: the run's metric it stands beside. private: whether the run is private (the note
            then says that the heuristic is not).

    Returns:
        ``Baseline("common neighbours", metric, AUC)`` (a fraction; ties count one half).
    """
    auc = CommonNeighbours().fit(train, progress=None).score(split.test_pos, split.test_neg)
    return Baseline(name="common neighbours", metric=metric, value=auc, note=CN_NOTE if private else "")


def chance_link_prediction(metric: str = "test_auc") -> Baseline:
    """The chance level of a link-prediction AUC (0.5): the baseline of common neighbours itself,
    and of a synthetic graph's link-prediction utility."""
    return Baseline(name="chance", metric=metric, value=0.5)


def ranking_chance(test_ptr: np.ndarray, test_labels: np.ndarray, top_k: int) -> list[Baseline]:
    """The chance levels of the ranking metrics on the split's queries (means over the queries,
    as the protocol averages the run's).

    Args:
        test_ptr: ``[Q + 1]`` offsets of each query's candidates. test_labels: ``[T]`` 1 for a
            held-out neighbour. top_k: K (``min(K, candidates)`` per query).

    Returns:
        Chance for ``auc_at_k`` (:func:`~graphpriv.ranking.metrics.chance_auc_at_k`) and for
        ``precision_at_k`` (the share of positives among a query's candidates).
    """
    at_k, precision = [], []
    for lo, hi in itertools.pairwise(test_ptr):
        labels = np.asarray(test_labels[lo:hi])
        positives = int(labels.sum())
        at_k.append(chance_auc_at_k(positives, labels.size, top_k))
        precision.append(positives / labels.size)
    return [Baseline(name="chance", metric="auc_at_k", value=float(np.mean(at_k))),
            Baseline(name="chance", metric="precision_at_k", value=float(np.mean(precision)))]


def input_graph_release(input_metrics: dict[str, float]) -> list[Baseline]:
    """The baselines of a publishing run: its metrics on the input graph released unchanged.

    Args:
        input_metrics: the protocol's metrics of the input graph (``attack_auc_<id>``, ``lp_auc``,
            ``nc_f1``), measured with the run's attacks and utility on the run's split.

    Returns:
        Per attack, ``Baseline("input graph", "attack_auc_<id>", AUC, better="lower")`` (a release
        that does not lower it protects nothing against that attack); ``lp_auc`` and ``nc_f1`` on
        the input as references (the ceiling), and chance for ``lp_auc``.
    """
    out = [Baseline(name="input graph", metric=name, value=value, better="lower",
                    note="the release is no harder to attack than the input graph")
           for name, value in input_metrics.items() if name.startswith("attack_auc_")]
    for name in ("lp_auc", "nc_f1"):
        if name in input_metrics:
            out.append(Baseline(name="input graph", metric=name, value=input_metrics[name], better="reference"))
    if "lp_auc" in input_metrics:
        out.append(chance_link_prediction("lp_auc"))
    return out
