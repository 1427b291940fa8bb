"""The synthesis protocol of the edge-level DP generators: split -> fit -> generate -> queries, utility, attacks.

Protocol (the evaluation of PrivDPR's, :mod:`graphpriv.evaluation.synthesis`, with PGB's queries
added: Liu et al., "PGB: Benchmarking Differentially Private Synthetic Graph Generation
Algorithms", 2024, the utility metrics Q1-Q15): the undirected edges are split 80/20
(``test_ratio``) by :func:`~graphpriv.data.splits.link_split` seeded with the run's seed; the
generator (``random_state`` = the seed) is fitted on the 80% graph and draws one synthetic graph
with that seed. Evaluation (``evaluate``): PGB's fifteen query errors of the synthetic graph
against the 80% graph the generator saw (:func:`~graphpriv.metrics.graph_queries.compare_queries`),
link-prediction AUC of a GAE trained on the synthetic graph on the held-out edges against as many
non-edges, and for labelled graphs node-classification micro-F1 on its embeddings
(:func:`~graphpriv.evaluation.synthesis.graph_utility`). With ``attacks``, link inference from the
synthetic graph: training edges against non-edges (0.5 is guessing). Everything after ``fit`` is
post-processing of the release (the guarantee is edge level, about the 80% graph).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from torch_geometric.data import Data

from graphpriv.attacks.suite import AttackSelection
from graphpriv.data.release import PublishedGraph
from graphpriv.data.splits import link_split
from graphpriv.data.validation import IF_PRESENT, check_data, check_seed
from graphpriv.evaluation.link import training_graph
from graphpriv.evaluation.synthesis import graph_utility, judge_synthetic, query_errors
from graphpriv.methods.base import MethodConfig, Progress, Result, Timer, no_progress, phase_progress
from graphpriv.methods.dp_1k import DP1K, DP1KConfig
from graphpriv.methods.generator import GeneratorConfig, GraphGenerator
from graphpriv.methods.privgraph import PrivGraph, PrivGraphConfig
from graphpriv.methods.publisher import GraphPublisher
from graphpriv.methods.publishing import EdgeRand, LapGraph
from graphpriv.methods.tmf import TmF, TmFConfig
from graphpriv.privacy.limits import MAX_EPSILON

__all__ = ["EdgeRandSynthesisConfig", "LapGraphSynthesisConfig", "PublisherSynthesisConfig", "evaluate_generated",
           "run_dp_1k", "run_edgerand_synthesis", "run_generator", "run_lapgraph_synthesis", "run_privgraph", "run_tmf"]


class PublisherSynthesisConfig(MethodConfig):
    """An edge-level DP publisher on the synthesis protocol: its epsilon and delta, and the
    protocol's settings under the publishers' names (``utility`` is the generators' ``evaluate``).
    Every field is one the publisher's own config has, so the run fits exactly the estimator
    ``make_estimator`` builds; features are not released (``use_features`` False)."""

    epsilon: float = Field(4.0, gt=0, le=MAX_EPSILON, allow_inf_nan=False, description="edge-level epsilon")
    delta: float = Field(1e-5, gt=0, lt=1, description="the delta the report is stated at (the mechanism is pure DP)")
    test_ratio: float = Field(0.2, gt=0, lt=1, description="real edges held out for link prediction (protocol)")
    utility: bool = Field(True, description="PGB's queries, LP AUC and (labels) NC micro-F1 of the synthetic graph")
    attacks: AttackSelection = Field("gae-sim", description="link-inference attacks on the synthetic graph: 'none', 'all' or ids")
    use_features: Literal[False] = Field(False, description="structure only: the synthesis protocol releases no x")


class EdgeRandSynthesisConfig(PublisherSynthesisConfig):
    """EdgeRand (:class:`~graphpriv.methods.publishing.EdgeRand`) on the synthesis protocol."""

    max_edges: int = Field(200_000_000, ge=1, description="refuse releases expected to be larger")


class LapGraphSynthesisConfig(PublisherSynthesisConfig):
    """LapGraph (:class:`~graphpriv.methods.publishing.LapGraph`) on the synthesis protocol."""

    count_fraction: float = Field(0.01, gt=0, lt=1, description="share of epsilon for the edge count")


def evaluate_generated(synthetic: PublishedGraph, train: PublishedGraph, split, labels=None, *,
                       seed: int) -> tuple[dict[str, float], dict[str, object]]:
    """PGB's query errors, LP AUC and (labels) NC micro-F1 of a synthetic graph.

    Args:
        synthetic: the generated graph (N nodes). train: the graph the generator was fitted on
            (the split's 80%, N nodes). split: the run's
            :class:`~graphpriv.data.splits.LinkSplit` (``test_pos`` / ``test_neg``, ``[2, P]``).
        labels: ``[N]`` integer class ids (-1: unlabelled) or None. seed: the queries' (Louvain,
            sampled path sources), the GAE's and the node split's seed.

    Returns:
        ``(metrics, info)``: metrics are the defined values of
        :func:`~graphpriv.metrics.graph_queries.compare_queries` (``num_edges_re``,
        ``degree_distribution_kl``, ``community_nmi``, ...) plus ``lp_auc`` and ``nc_f1``
        (labels; both absent for an edgeless graph); info names the queries that were undefined
        (``undefined_queries``: nan or inf, e.g. the modularity of a graph without edges, or a
        relative error whose original value is 0, e.g. triangles of a triangle-free graph) and
        the ones estimated from sampled sources (``estimated_queries``).
    """
    metrics, info = query_errors(synthetic, train, seed=seed)
    if synthetic.num_edges:
        metrics.update(graph_utility(synthetic, split, labels, seed=seed))
    return metrics, info


def run_generator(estimator_cls: type[GraphGenerator | GraphPublisher], config: GeneratorConfig, data: Data, *,
                  seed: int, method: str, progress: Progress = no_progress) -> Result:
    """One run of an edge-level generator by the synthesis protocol: split, fit, generate, evaluate.

    Args:
        estimator_cls: the generator (:class:`~graphpriv.methods.tmf.TmF`, ...), or an edge-level
            DP publisher (:class:`~graphpriv.methods.publishing.EdgeRand`, ``LapGraph``: its
            release is the synthetic graph, structure only). config: a
            :class:`~graphpriv.methods.generator.GeneratorConfig`, or for a publisher a
            :class:`PublisherSynthesisConfig` (``utility`` in place of ``evaluate``). data: the whole graph
            (``edge_index``, ``num_nodes``; ``y [N]`` optional, for NC F1). seed: seeds the split,
            the release (``random_state``), the generation and the evaluation. method: the id
            recorded. progress: called for the phases ``release``, ``generation``,
            ``evaluation`` and ``attacks``.

    Returns:
        :class:`Result` with the metrics of :func:`evaluate_generated` and, with ``attacks``,
        ``attack_auc_<id>``; baselines: chance for ``lp_auc`` and (``evaluate``) the input
        (training) graph's own ``lp_auc`` / ``nc_f1`` as the ceiling; the edge-level privacy
        report; info: the release's facts (the estimator's ``info_``), ``synthetic_edges`` and
        the queries' notes; the synthetic graph as the release and the fitted estimator.

    Raises:
        DatasetError: an invalid graph, too few edges to split. ConfigError: a bad seed, or what
            the generator's ``fit`` raises.
    """
    data = check_data(data, needs_labels=IF_PRESENT, method=method)
    seed = check_seed(seed)
    timer = Timer()
    with timer.phase("split"):
        split = link_split(data, val_ratio=0.0, test_ratio=config.test_ratio, seed=seed)
        train = PublishedGraph(split.train_edge_index, int(data.num_nodes))
    params = {k: v for k, v in config.model_dump().items() if k in estimator_cls.config_cls.model_fields}
    estimator = estimator_cls(random_state=seed, **params)
    with timer.phase("release"):
        phase_progress(progress, "release")(0, 1)
        estimator.fit(training_graph(data, split))
        phase_progress(progress, "release")(1, 1)
    with timer.phase("generation"):
        if isinstance(estimator, GraphGenerator):
            synthetic = PublishedGraph.from_data(estimator.generate(seed), with_features=False)
        else:  # a publisher: its release is the graph
            synthetic = PublishedGraph(estimator.released_.pairs, estimator.released_.num_nodes)
    info: dict[str, object] = {**getattr(estimator, "info_", {}), "synthetic_edges": synthetic.num_edges}
    metrics, notes, baselines = judge_synthetic(synthetic, train, split, getattr(data, "y", None), seed=seed,
                                                evaluate=getattr(config, "evaluate", getattr(config, "utility", True)),
                                                attacks=config.attacks, timer=timer, progress=progress)
    info.update(notes)
    return Result(method=method, dataset=str(getattr(data, "name", "graph")), seed=seed,
                  config=config.model_dump(mode="json"), metrics=metrics, privacy=estimator.privacy_report_,
                  timings=timer.finish(), info=info,
                  baselines=baselines).with_release(synthetic).with_estimator(estimator)


def run_tmf(config: TmFConfig, data: Data, *, seed: int, method: str = "tmf",
            progress: Progress = no_progress) -> Result:
    """``tmf`` by :func:`run_generator` (:class:`~graphpriv.methods.tmf.TmF`: edge-level pure
    epsilon-DP, two Laplace events; the evaluation is post-processing)."""
    return run_generator(TmF, config, data, seed=seed, method=method, progress=progress)


def run_dp_1k(config: DP1KConfig, data: Data, *, seed: int, method: str = "dp-1k",
              progress: Progress = no_progress) -> Result:
    """``dp-1k`` by :func:`run_generator` (:class:`~graphpriv.methods.dp_1k.DP1K`: edge-level pure
    epsilon-DP, one Laplace event on the sorted degree sequence; generation and evaluation are
    post-processing)."""
    return run_generator(DP1K, config, data, seed=seed, method=method, progress=progress)


def run_privgraph(config: PrivGraphConfig, data: Data, *, seed: int, method: str = "privgraph",
                  progress: Progress = no_progress) -> Result:
    """``privgraph`` by :func:`run_generator` (:class:`~graphpriv.methods.privgraph.PrivGraph`:
    edge-level pure epsilon-DP in three phases, a Laplace super-graph, exponential-mechanism
    community adjustment, Laplace community statistics; reconstruction and evaluation are
    post-processing)."""
    return run_generator(PrivGraph, config, data, seed=seed, method=method, progress=progress)


def run_edgerand_synthesis(config: EdgeRandSynthesisConfig, data: Data, *, seed: int,
                           method: str = "edgerand-synthesis", progress: Progress = no_progress) -> Result:
    """EdgeRand's release judged as a synthetic graph by :func:`run_generator` (edge-level pure
    epsilon-DP, randomized response on every adjacency bit of the 80% graph)."""
    return run_generator(EdgeRand, config, data, seed=seed, method=method, progress=progress)


def run_lapgraph_synthesis(config: LapGraphSynthesisConfig, data: Data, *, seed: int,
                           method: str = "lapgraph-synthesis", progress: Progress = no_progress) -> Result:
    """LapGraph's release judged as a synthetic graph by :func:`run_generator` (edge-level pure
    epsilon-DP, a Laplace edge count and Laplace on every adjacency bit, the top noisy cells kept)."""
    return run_generator(LapGraph, config, data, seed=seed, method=method, progress=progress)
