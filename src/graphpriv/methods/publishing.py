"""Graph publishers: estimators that release a graph from the publisher's graph.

Four baselines of PPGSL (Wu, Yang, Han, Wang, Wu, "Privacy-preserving graph structure learning
against sensitive link inference attacks", IEEE TKDE 2025, Sec. V-A.4):

- :class:`RandomPerturb` (``random-perturb``): remove a fraction of the edges, add as many random
  non-edges; no DP guarantee.
- :class:`DICE` (``dice``): delete edges at the nodes of the sensitive links, add edges between the
  other nodes; no DP guarantee.
- :class:`EdgeRand` (``edgerand``): randomized response on every adjacency bit; edge-level
  epsilon-DP.
- :class:`LapGraph` (``lapgraph``): Laplace noise on the adjacency, the top noisy |E| kept;
  edge-level epsilon-DP.

PPGSL itself is :class:`graphpriv.methods.ppgsl.PPGSL`. Every publisher is used the same way::

    est = EdgeRand(epsilon=2.0, random_state=0)
    released = est.publish(data)        # a PyG Data: the released graph (and X when released)
    est.released_, est.privacy_report_  # the PublishedGraph, the edge-level DP report

``publish`` is the graph-level mechanism only. Judging a release (attacks on the sensitive links,
link-prediction and node-classification utility on a held-out split) is the sensitive-link
protocol's work: :mod:`graphpriv.evaluation.publishing`. The hyperparameters are the method's run
configuration (:class:`PublishConfig` and its subclasses); its protocol fields
(``sensitive_ratio``, ``test_ratio``, ``attacks``, ``utility``) are read by that protocol only,
and ``publish`` ignores them.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import torch
from dp_accounting.privacy_accountant import NeighboringRelation
from pydantic import Field, field_validator
from torch_geometric.data import Data

from graphpriv.attacks.suite import resolve_attacks
from graphpriv.data.release import PublishedGraph
from graphpriv.data.validation import IF_PRESENT, check_data, check_node_pairs
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.methods.base import MethodConfig, Progress
from graphpriv.methods.estimator import Estimator
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.lapgraph import lapgraph
from graphpriv.privacy.mechanisms import randomized_response_edges
from graphpriv.privacy.report import PrivacyReport
from graphpriv.privacy.units import PrivacyUnit
from graphpriv.publishing.perturbation import dice, random_perturb

__all__ = [
    "DICE",
    "DiceConfig",
    "EdgeRand",
    "EdgeRandConfig",
    "GraphPublisher",
    "LapGraph",
    "LapGraphPublishConfig",
    "PublishConfig",
    "RandomPerturb",
    "RandomPerturbConfig",
    "expected_edgerand_edges",
]


class PublishConfig(MethodConfig):
    """What every publishing method shares: the released features, and the protocol's settings
    (``sensitive_ratio``, ``test_ratio``, ``attacks``, ``utility``: read by the sensitive-link
    protocol of :mod:`graphpriv.evaluation.publishing`, not by ``publish``)."""

    sensitive_ratio: float = Field(0.10, gt=0, lt=1, description="share of edges hidden as E_s")
    test_ratio: float = Field(0.10, gt=0, lt=1, description="share of edges held out for LP utility")
    attacks: str = Field("gae-sim", description="attacks to run: 'all', 'none' or ids (comma-separated)")
    utility: bool = Field(True, description="measure LP AUC (GAE) and NC micro-F1 (GCN)")
    use_features: bool = Field(True, description="release the node features with the graph")

    @field_validator("attacks")
    @classmethod
    def _known_attacks(cls, value: str) -> str:
        if value.strip() != "none":
            resolve_attacks(value)  # raises ConfigError with the known ids
        return value


class RandomPerturbConfig(PublishConfig):
    """Random: remove a fraction ``ratio`` of the edges, add as many random non-edges."""

    ratio: float = Field(0.2, ge=0, le=1, description="perturbation ratio p")


class DiceConfig(PublishConfig):
    """DICE: delete ``ratio |E|`` edges at sensitive nodes, add as many between the other nodes."""

    ratio: float = Field(0.2, ge=0, le=1, description="perturbation ratio p")


class EdgeRandConfig(PublishConfig):
    """EdgeRand: randomized response on every adjacency bit (edge-level epsilon-DP)."""

    epsilon: float = Field(4.0, gt=0, description="edge-level epsilon")
    delta: float = Field(1e-5, gt=0, lt=1, description="reported delta (the mechanism is pure DP)")
    max_edges: int = Field(200_000_000, ge=1, description="refuse releases expected to be larger")


class LapGraphPublishConfig(PublishConfig):
    """LapGraph: Laplace noise on the adjacency, keep the top noisy |E| (edge-level epsilon-DP)."""

    epsilon: float = Field(4.0, gt=0, description="edge-level epsilon")
    delta: float = Field(1e-5, gt=0, lt=1, description="reported delta (the mechanism is pure DP)")
    count_fraction: float = Field(0.01, gt=0, lt=1, description="share of epsilon for the edge count")


def _rng(seed: int, stream: int) -> np.random.Generator:
    """The mechanism's numpy generator: ``default_rng([seed, stream])``, one stream per method
    (so that two methods run with one seed draw independently of each other)."""
    return np.random.default_rng([seed, stream])


class GraphPublisher(Estimator):
    """Base of the graph publishers: ``fit`` releases a graph, ``publish`` returns it as ``Data``.

    Subclasses set ``config_cls`` (a :class:`PublishConfig`), ``needs_sensitive_links`` and
    implement :meth:`_release`. The fitted state is the release itself (``released_``); a file
    written by :meth:`save` holds the released edges, N and the released features (never the
    input graph nor the sensitive links).

    Args:
        random_state: seed of the mechanism's random draws (the same seed on the same graph
            gives the same release).
        **params: the hyperparameters of ``config_cls``.

    Attributes:
        released_: the release, a :class:`~graphpriv.data.release.PublishedGraph` over the input's
            node ids (the input's ``x`` as float32 when ``use_features``, else None).
        privacy_report_: the edge-level :class:`~graphpriv.privacy.report.PrivacyReport` of a DP
            publisher, None for an empirical one.

    Raises:
        ConfigError: an unknown hyperparameter or an invalid value.
    """

    config_cls: ClassVar[type[PublishConfig]] = PublishConfig
    #: Whether the mechanism reads the sensitive links (DICE, PPGSL) or treats every edge alike.
    needs_sensitive_links: ClassVar[bool] = False

    def fit(self, data: Data, *, sensitive_links: Any = None, progress: Progress | None = None) -> GraphPublisher:
        """Release a graph from ``data`` (the publisher's graph); returns ``self``.

        Args:
            data: PyG ``Data`` with ``edge_index [2, E]`` (either or both directions), ``num_nodes``
                N and optional ``x [N, F]`` (released when ``use_features``); labels are not read.
            sensitive_links: ``[2, S]`` integer node pairs (numpy or torch) the publisher protects;
                required by publishers with ``needs_sensitive_links`` (DICE, PPGSL), ignored by the
                others (checked when given). Not kept on the estimator.
            progress: optional ``progress(done, total, **info)`` callback (PPGSL's learner steps).

        Returns:
            ``self``, fitted (``released_``, ``privacy_report_``).

        Raises:
            DatasetError: ``data`` is not a valid graph (see
                :func:`~graphpriv.data.validation.check_data`: no edges, ids out of range,
                non-finite features, ...), or sensitive links missing, malformed or out of range.
            ConfigError: a release the hyperparameters refuse (e.g. EdgeRand above ``max_edges``).
        """
        who = type(self).__name__
        data = check_data(data, needs_features=self.use_features and IF_PRESENT, method=who)
        graph = PublishedGraph.from_data(data, with_features=self.use_features)
        sensitive = None
        if sensitive_links is None and self.needs_sensitive_links:
            raise DatasetError(f"{who} needs sensitive_links=[2, S] node pairs to protect (e.g. the sensitive "
                               "links of graphpriv.attacks.protocol.SensitiveLinkProtocol); none were given")
        if sensitive_links is not None:
            sensitive = np.ascontiguousarray(check_node_pairs(sensitive_links, graph.num_nodes,
                                                              name="sensitive_links"), dtype=np.int64)
            if self.needs_sensitive_links and sensitive.shape[1] == 0:
                raise DatasetError(f"{who} needs sensitive links to protect; sensitive_links is empty")
        pairs, report = self._release(graph, sensitive, progress)
        self.released_ = PublishedGraph(pairs, graph.num_nodes, graph.x)
        return self._fitted(report)

    def publish(self, data: Data, *, sensitive_links: Any = None, progress: Progress | None = None) -> Data:
        """Fit on ``data`` and return the release as PyG ``Data``.

        Args and Raises: as :meth:`fit`.

        Returns:
            ``Data`` with ``edge_index [2, 2|E'|]`` (both directions), ``num_nodes`` N (the
            input's node ids; isolated nodes kept) and ``x [N, F]`` when features are released
            (see :meth:`~graphpriv.data.release.PublishedGraph.to_data`).
        """
        return self.fit(data, sensitive_links=sensitive_links, progress=progress).released_.to_data()

    def _release(self, graph: PublishedGraph, sensitive: np.ndarray | None,
                 progress: Progress | None) -> tuple[np.ndarray, PrivacyReport | None]:
        """The mechanism: ``(released pairs [2, E'], privacy report or None)`` from the input."""
        raise NotImplementedError

    def _get_state(self) -> dict[str, Any]:
        g = self.released_
        state: dict[str, Any] = {"pairs": torch.from_numpy(g.pairs.copy()), "num_nodes": g.num_nodes}
        if g.x is not None:
            state["x"] = torch.from_numpy(g.x.copy())
        return state

    def _set_state(self, state: dict[str, Any]) -> None:
        x = state.get("x")
        self.released_ = PublishedGraph(state["pairs"].numpy(), int(state["num_nodes"]),
                                        None if x is None else x.numpy())


class RandomPerturb(GraphPublisher):
    """Random perturbation: remove ``round(ratio |E|)`` uniform edges, add as many uniform non-edges.

    Source: PPGSL (Wu et al., IEEE TKDE 2025) Sec. V-A.4 "Random"; the mechanism is
    :func:`~graphpriv.publishing.perturbation.random_perturb`. The edge count is kept. No
    differential-privacy guarantee (``privacy_report_`` is None): the protection is judged
    empirically by the attacks of :mod:`graphpriv.evaluation.publishing`.

    Args:
        ratio: perturbation ratio p in [0, 1] (0.2). use_features: release ``x`` (True).
        random_state: seed. Other fields of :class:`RandomPerturbConfig` are protocol settings.
    """

    config_cls = RandomPerturbConfig

    def _release(self, graph, sensitive, progress):
        return random_perturb(graph.pairs, graph.num_nodes, ratio=self.ratio, rng=_rng(self.random_state, 31)), None


class DICE(GraphPublisher):
    """DICE for sensitive links: delete edges at the sensitive nodes, add edges elsewhere.

    Source: Waniek, Michalak, Wooldridge, Rahwan, "Hiding individuals and communities in a social
    network" (Nature Human Behaviour 2018), "Disconnect Internally, Connect Externally", as PPGSL
    (Wu et al., IEEE TKDE 2025) Sec. V-A.4 adapts it; the mechanism is
    :func:`~graphpriv.publishing.perturbation.dice`: S = the endpoints of the sensitive links;
    ``round(ratio |E|)`` uniform edges touching S are deleted (all of them if fewer) and as many
    uniform non-edges outside S added. No differential-privacy guarantee (``privacy_report_`` is
    None).

    ``fit`` / ``publish`` need ``sensitive_links`` (``[2, S]``, the links to hide; they need not be
    edges of the input: the protocol removes them first).

    Args:
        ratio: perturbation ratio p in [0, 1] (0.2). use_features: release ``x`` (True).
        random_state: seed. Other fields of :class:`DiceConfig` are protocol settings.

    Raises (fit):
        DatasetError: too few non-edges outside S to add as many edges as are deleted (every node
            an endpoint of a sensitive link, or the other nodes already all linked).
    """

    config_cls = DiceConfig
    needs_sensitive_links = True

    def _release(self, graph, sensitive, progress):
        return dice(graph.pairs, graph.num_nodes, sensitive, ratio=self.ratio,
                    rng=_rng(self.random_state, 37)), None


def expected_edgerand_edges(num_edges: int, num_nodes: int, epsilon: float) -> float:
    """Expected |E'| of EdgeRand on a graph with ``num_edges`` edges and ``num_nodes`` nodes:
    the kept edges plus the switched-on non-edges, ``|E| e^eps/(1+e^eps) + (N(N-1)/2 - |E|)/(1+e^eps)``."""
    flip = 1.0 / (1.0 + math.exp(epsilon))
    return num_edges * (1 - flip) + (num_nodes * (num_nodes - 1) / 2 - num_edges) * flip


class EdgeRand(GraphPublisher):
    """EdgeRand: randomized response on every upper-triangular adjacency bit.

    Source: Wu, Long, Gunter, Gong, "LinkTeller: recovering private edges from graph neural
    networks via influence analysis" (IEEE S&P 2022), EdgeRand; Warner (JASA 1965). The mechanism
    is :func:`~graphpriv.privacy.mechanisms.randomized_response_edges`: each bit is flipped with
    probability 1/(1+e^epsilon), so about :func:`expected_edgerand_edges` edges are released.

    Privacy: edge-level epsilon-DP. Neighbouring graphs differ by one edge added or removed, which
    replaces one adjacency bit; accounted by dp-accounting's PLD accountant under ``REPLACE_ONE``
    over the bits (tight for randomized response); the report is stated at ``delta`` (the
    mechanism itself is pure DP). Anything computed from the release is post-processing.

    Args:
        epsilon: edge-level epsilon (4.0). delta: the delta the report is stated at (1e-5).
        max_edges: refuse a release expected to have more edges (2e8). use_features: release
        ``x`` (True; features are not protected). random_state: seed. Other fields of
        :class:`EdgeRandConfig` are protocol settings.

    Raises (fit):
        ConfigError: the expected release exceeds ``max_edges`` (raise epsilon or the cap).
    """

    config_cls = EdgeRandConfig

    def _release(self, graph, sensitive, progress):
        expected = expected_edgerand_edges(graph.num_edges, graph.num_nodes, self.epsilon)
        if expected > self.max_edges:
            raise ConfigError(f"EdgeRand at epsilon={self.epsilon} on {graph.num_nodes} nodes releases about "
                              f"{expected:,.0f} edges (> max_edges={self.max_edges:,}); raise epsilon or max_edges")
        ledger = Ledger(PrivacyUnit.EDGE, delta=self.delta, accountant="pld",
                        neighboring_relation=NeighboringRelation.REPLACE_ONE)
        released, event = randomized_response_edges(graph.pairs, graph.num_nodes, epsilon=self.epsilon,
                                                    rng=_rng(self.random_state, 41))
        ledger.spend(event, phase="randomized response")
        notes = [("one edge added or removed = one adjacency bit replaced (REPLACE_ONE over the bits); "
                  "every bit is flipped with probability 1/(1+e^epsilon); evaluation is post-processing")]
        return released, ledger.report(target_epsilon=self.epsilon, notes=notes)


class LapGraph(GraphPublisher):
    """LapGraph: Laplace noise on the adjacency, the top noisy T edges kept (T a noisy |E|).

    Source: Wu, Long, Gunter, Gong, "LinkTeller: recovering private edges from graph neural
    networks via influence analysis" (IEEE S&P 2022), Algorithm "LapGraph"; the mechanism is
    :func:`~graphpriv.privacy.lapgraph.lapgraph` (blocked top-T, memory O(T), never N x N).

    Privacy: edge-level epsilon-DP. Neighbouring graphs differ by one edge added or removed (one
    adjacency bit). A Laplace edge count (``count_fraction`` of epsilon) and Laplace noise on every
    upper-triangle bit, both of L1 sensitivity 1, composed with the PLD accountant; the report is
    stated at ``delta`` (the mechanism itself is pure DP). The top-T selection and anything
    computed from the release are post-processing.

    Args:
        epsilon: edge-level epsilon (4.0). delta: the delta the report is stated at (1e-5).
        count_fraction: share of epsilon for the edge count (0.01). use_features: release ``x``
        (True; features are not protected). random_state: seed. Other fields of
        :class:`LapGraphPublishConfig` are protocol settings.
    """

    config_cls = LapGraphPublishConfig

    def _release(self, graph, sensitive, progress):
        ledger = Ledger(PrivacyUnit.EDGE, delta=self.delta, accountant="pld")
        released, (count_event, matrix_event) = lapgraph(
            graph.pairs, graph.num_nodes, epsilon=self.epsilon, rng=_rng(self.random_state, 43),
            count_fraction=self.count_fraction)
        ledger.spend(count_event, phase="edge count")
        ledger.spend(matrix_event, phase="perturbation")
        notes = [("Laplace(1/eps1) edge count and Laplace(1/eps2) on every upper-triangle bit; the top-T "
                  "selection and the evaluation are post-processing")]
        return released, ledger.report(target_epsilon=self.epsilon, notes=notes)
