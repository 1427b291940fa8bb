"""The sensitive-link protocol for graph publishers: split -> publish -> attacks and utility.

Protocol (PPGSL: Wu, Yang, Han, Wang, Wu, "Learning-based Privacy-Preserving Graph Publishing
Against Sensitive Link Inference Attacks", IEEE TKDE 2025, Sec. V-A):
:class:`~graphpriv.attacks.protocol.SensitiveLinkProtocol` hides 10% of the edges as the
sensitive links E_s and holds out a disjoint 10% as link-prediction test edges; the publisher's
graph is G minus both. A publisher (:mod:`graphpriv.methods.publishing`,
:class:`graphpriv.methods.ppgsl.PPGSL`) releases a graph from it, seeded by the run's seed, and
the release is attacked on E_s and its utility measured (GAE link-prediction AUC, GCN
node-classification micro-F1) with the same split for every method.

``run_random_perturb``, ``run_dice``, ``run_edgerand``, ``run_lapgraph`` and ``run_ppgsl`` are the
registry's run functions of ``random-perturb``, ``dice``, ``edgerand``, ``lapgraph`` and
``ppgsl``: ``(config, data, *, seed, method, progress) -> Result`` with the release attached
(``Result.release``, which ``graphpriv run ... --out`` writes).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from torch_geometric.data import Data

from graphpriv.attacks.protocol import SensitiveLinkProtocol
from graphpriv.attacks.suite import resolve_attacks
from graphpriv.data.validation import IF_PRESENT, check_data, check_seed
from graphpriv.evaluation.baselines import input_graph_release
from graphpriv.memo import Memo, array_digest
from graphpriv.methods.base import Progress, Result, Timer, no_progress
from graphpriv.methods.ppgsl import PPGSL, PPGSLConfig
from graphpriv.methods.publishing import (
    DICE,
    DiceConfig,
    EdgeRand,
    EdgeRandConfig,
    GraphPublisher,
    LapGraph,
    LapGraphPublishConfig,
    PublishConfig,
    RandomPerturb,
    RandomPerturbConfig,
    expected_edgerand_edges,
)
from graphpriv.progress import prefixed_progress

__all__ = [
    "evaluate_release",
    "input_graph_metrics",
    "publish_on_protocol",
    "run_dice",
    "run_edgerand",
    "run_lapgraph",
    "run_ppgsl",
    "run_random_perturb",
    "sensitive_protocol",
]


def sensitive_protocol(config: PublishConfig, data: Data, seed: int, timer: Timer) -> SensitiveLinkProtocol:
    """The run's :class:`~graphpriv.attacks.protocol.SensitiveLinkProtocol` (timed as the
    ``split`` phase).

    Args:
        config: the run's settings (``sensitive_ratio``, ``test_ratio``, ``use_features``).
        data: the checked dataset. seed: seeds the split. timer: the run's :class:`Timer`.

    Raises:
        DatasetError: too few edges to split.
    """
    with timer.phase("split"):
        return SensitiveLinkProtocol(data, seed=seed, sensitive_ratio=config.sensitive_ratio,
                                     test_ratio=config.test_ratio, use_features=config.use_features)


def publish_on_protocol(estimator: GraphPublisher, protocol: SensitiveLinkProtocol, *,
                        progress: Progress | None = None) -> GraphPublisher:
    """Fit ``estimator`` on the protocol's publisher graph (G minus E_s and the LP test edges, with
    the released features) and the sensitive links E_s it protects; returns the estimator.

    Raises:
        What the estimator's ``fit`` raises (e.g. ConfigError for EdgeRand above ``max_edges``).
    """
    graph = protocol.input_graph.to_data()
    graph.name = str(protocol.data.name)
    return estimator.fit(graph, sensitive_links=protocol.sensitive_links, progress=progress)


def evaluate_release(config: PublishConfig, protocol: SensitiveLinkProtocol, estimator: GraphPublisher, *,
                     method: str, seed: int, timer: Timer, info: dict[str, Any] | None = None,
                     progress: Progress = no_progress) -> Result:
    """Attack and measure a fitted publisher's release under ``protocol``.

    Args:
        config: the run's settings (``attacks``: ids, ``'all'`` or ``'none'``; ``utility``: also
            LP AUC and NC F1). protocol: the run's split. estimator: a fitted publisher
            (``released_``, ``privacy_report_``). method, seed: the run's id and seed.
        timer: the run's :class:`Timer` (``evaluation`` phase added). info: method facts to keep
            (the protocol's counts are added after them). progress: told of the attacks and the
            utility tasks on the release, then on the input graph (phases ``attacks``,
            ``utility``, ``baseline attacks``, ``baseline utility``).

    Returns:
        :class:`~graphpriv.methods.base.Result`: metrics ``attack_auc_<id>``, ``lp_auc``,
        ``nc_f1``, ``published_edges``; the baselines: the same attacks and utility on the input
        graph released unchanged (:func:`~graphpriv.evaluation.baselines.input_graph_release`,
        phase ``baseline``); ``privacy`` = the estimator's report (None for an empirical method); info ``input_edges``, ``published_edges``, ``kept_input_edges``,
        ``sensitive_published``, ``test_published``, ``attack_seconds``; the release attached
        (:meth:`~graphpriv.methods.base.Result.with_release`).
    """
    graph = estimator.released_
    info = dict(info or {})
    with timer.phase("evaluation"):
        attacks = [] if config.attacks.strip() == "none" else config.attacks
        report = protocol.evaluate(graph, attacks=attacks, utility=config.utility, progress=progress)
    with timer.phase("baseline"):  # the same attacks and utility on the input graph, released unchanged
        unchanged = input_graph_metrics(protocol, attacks, utility=config.utility,
                                        progress=prefixed_progress(progress, "baseline"),
                                        known=report.metrics() if graph.equals(protocol.input_graph) else None)
    kept = int(protocol.input_graph.contains(graph.pairs).sum())
    info.update(input_edges=report.input_edges, published_edges=report.published_edges,
                kept_input_edges=kept, sensitive_published=report.sensitive_published,
                test_published=report.test_published, attack_seconds=report.attack_seconds)
    return Result(method=method, dataset=str(protocol.data.name), seed=seed,
                  config=config.model_dump(mode="json"), metrics=report.metrics(),
                  privacy=estimator.privacy_report_, timings=timer.finish(), info=info,
                  baselines=input_graph_release(unchanged)).with_release(graph).with_estimator(estimator)


#: The input graph's attacks and utility per protocol (graph, split, seed) and attack list: every
#: publisher and setting of a table on that graph and seed asks for the same (ppgsl-tradeoff: 20).
_INPUT_METRICS = Memo(32)


def input_graph_metrics(protocol: SensitiveLinkProtocol, attacks: str | list[str], *, utility: bool = True,
                        progress: Progress | None = None, known: dict[str, float] | None = None) -> dict[str, float]:
    """``protocol.evaluate(protocol.input_graph, ...).metrics()``, memoised in this process: the
    trivial baseline of a publishing run (the input graph released unchanged) is the same for
    every publisher and setting on the same split, and costs as much as the run's own evaluation
    (every attack and both utility models are seeded by the protocol's seed). The key is a
    SHA-256 of the input graph (pairs, features), the split (sensitive, test and node-classification
    parts) and the labels, with N, the seed, the resolved attack ids and ``utility``; a hit
    returns a copy of the first result (``progress`` is then not called).

    Args:
        protocol: the run's protocol. attacks: ``'all'``, ids, or ``[]`` for none. utility: also
            LP AUC and NC F1. progress: as :meth:`SensitiveLinkProtocol.evaluate`. known: the
            metrics already measured on a release equal to the input graph (a publisher that
            changed nothing: they are the baseline), kept instead of evaluating again.

    Returns:
        :meth:`~graphpriv.attacks.protocol.ProtocolReport.metrics` of the input graph.
    """
    graph, split = protocol.input_graph, protocol.split
    names = tuple(resolve_attacks(attacks)) if attacks else ()
    key = (array_digest(graph.pairs, graph.x, split.sensitive_pos, split.sensitive_neg, split.test_pos,
                        split.test_neg, protocol.labels, getattr(protocol, "nc_train_idx", None),
                        getattr(protocol, "nc_test_idx", None)),
           int(graph.num_nodes), int(protocol.seed), names, bool(utility))
    return dict(_INPUT_METRICS.get(key, lambda: dict(known) if known is not None else protocol.evaluate(
        graph, attacks=list(names), utility=utility, progress=progress).metrics()))


def _run(estimator_cls: type[GraphPublisher], config: PublishConfig, data: Data, *, seed: int, method: str,
         progress: Progress, phase: str = "perturbation") -> tuple[GraphPublisher, SensitiveLinkProtocol, Timer]:
    """Check the data and seed, split, publish with ``estimator_cls(random_state=seed, **config)``."""
    data = check_data(data, needs_features=config.use_features and IF_PRESENT, needs_labels=IF_PRESENT,
                      method=method)
    seed = check_seed(seed)
    timer = Timer()
    protocol = sensitive_protocol(config, data, seed, timer)
    estimator = estimator_cls(random_state=seed, **config.model_dump())
    with timer.phase(phase):
        publish_on_protocol(estimator, protocol, progress=progress if phase == "learning" else None)
    if phase != "learning":
        progress(1, 1)
    return estimator, protocol, timer


def run_random_perturb(config: RandomPerturbConfig, data: Data, *, seed: int, method: str = "random-perturb",
                       progress: Progress = no_progress) -> Result:
    """Publish with :class:`~graphpriv.methods.publishing.RandomPerturb` and evaluate; no DP guarantee.

    Args:
        config: :class:`~graphpriv.methods.publishing.RandomPerturbConfig`. data: the dataset
            (``x``, ``y`` optional). seed: the split's and the mechanism's seed. method: the id
            recorded. progress: called once, ``(1, 1)``, after the release.

    Returns:
        The :class:`~graphpriv.methods.base.Result` of :func:`evaluate_release` (privacy None).

    Raises:
        DatasetError: an invalid graph or too few edges. ConfigError: a bad seed.
    """
    est, protocol, timer = _run(RandomPerturb, config, data, seed=seed, method=method, progress=progress)
    return evaluate_release(config, protocol, est, method=method, seed=est.random_state, timer=timer,
                            progress=progress)


def run_dice(config: DiceConfig, data: Data, *, seed: int, method: str = "dice",
             progress: Progress = no_progress) -> Result:
    """Publish with :class:`~graphpriv.methods.publishing.DICE` (protecting the protocol's E_s)
    and evaluate; no DP guarantee.

    Args, Returns, Raises: as :func:`run_random_perturb` (``config``: a ``DiceConfig``).
    """
    est, protocol, timer = _run(DICE, config, data, seed=seed, method=method, progress=progress)
    return evaluate_release(config, protocol, est, method=method, seed=est.random_state, timer=timer,
                            progress=progress)


def run_edgerand(config: EdgeRandConfig, data: Data, *, seed: int, method: str = "edgerand",
                 progress: Progress = no_progress) -> Result:
    """Publish with :class:`~graphpriv.methods.publishing.EdgeRand` and evaluate.

    Privacy: edge-level epsilon-DP (one edge added or removed = one adjacency bit replaced),
    PLD accounting under REPLACE_ONE over the bits; the evaluation is post-processing. The info
    adds ``expected_published_edges``.

    Raises:
        ConfigError: the expected release exceeds ``max_edges`` (raise epsilon or the cap), or a
            bad seed. DatasetError: an invalid graph or too few edges.
    """
    est, protocol, timer = _run(EdgeRand, config, data, seed=seed, method=method, progress=progress)
    expected = expected_edgerand_edges(protocol.input_graph.num_edges, protocol.num_nodes, config.epsilon)
    return evaluate_release(config, protocol, est, method=method, seed=est.random_state, timer=timer,
                            info={"expected_published_edges": expected}, progress=progress)


def run_lapgraph(config: LapGraphPublishConfig, data: Data, *, seed: int, method: str = "lapgraph",
                 progress: Progress = no_progress) -> Result:
    """Publish with :class:`~graphpriv.methods.publishing.LapGraph` and evaluate.

    Privacy: edge-level epsilon-DP (one edge added or removed), a Laplace edge count and Laplace
    noise on every adjacency bit composed by the PLD accountant; the evaluation is
    post-processing.

    Raises:
        DatasetError: an invalid graph or too few edges. ConfigError: a bad seed.
    """
    est, protocol, timer = _run(LapGraph, config, data, seed=seed, method=method, progress=progress)
    return evaluate_release(config, protocol, est, method=method, seed=est.random_state, timer=timer,
                            progress=progress)


def run_ppgsl(config: PPGSLConfig, data: Data, *, seed: int, method: str = "ppgsl",
              progress: Progress = no_progress) -> Result:
    """Learn and sample a release with :class:`~graphpriv.methods.ppgsl.PPGSL` (protecting the
    protocol's E_s) and evaluate it; no DP guarantee (empirical).

    Args:
        progress: called after every learner step, ``(step, learner_steps, priv=, util=)``.

    Returns:
        The :class:`~graphpriv.methods.base.Result` of :func:`evaluate_release`, with info
        ``num_parameters``, ``learned_positive_pairs``, ``learned_weight_sum``,
        ``final_priv_loss``, ``final_util_loss``, ``surrogate_losses`` before the protocol's counts.

    Raises:
        DatasetError: no sensitive links, or sensitive links still edges of the input.
        ConfigError: FGP beyond ``fgp_max_gib``, or a bad seed.
    """
    est, protocol, timer = _run(PPGSL, config, data, seed=seed, method=method, progress=progress, phase="learning")
    steps = [h for h in est.history_ if "loss" in h]
    info = {"num_parameters": est.num_parameters_, "learned_positive_pairs": int(est.weights_[1].size),
            "learned_weight_sum": float(np.sum(est.weights_[1])),
            "final_priv_loss": steps[-1]["priv"] if steps else None,
            "final_util_loss": steps[-1]["util"] if steps else None,
            "surrogate_losses": [h["surrogate_loss"] for h in est.history_ if "surrogate_loss" in h]}
    return evaluate_release(config, protocol, est, method=method, seed=est.random_state, timer=timer, info=info,
                            progress=progress)
