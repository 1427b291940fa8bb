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

from dp_accounting.privacy_accountant import NeighboringRelation
from pydantic import Field

from graphpriv.errors import ConfigError
from graphpriv.methods.publisher import GraphPublisher, PublishConfig, publisher_rng
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.lapgraph import lapgraph
from graphpriv.privacy.mechanisms import randomized_response_edges
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

    def _release(self, graph, sensitive, progress, noise_scale=1.0):
        return random_perturb(graph.pairs, graph.num_nodes, ratio=self.ratio, rng=publisher_rng(self.random_state, 31)), None


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

    def _release(self, graph, sensitive, progress, noise_scale=1.0):
        return dice(graph.pairs, graph.num_nodes, sensitive, ratio=self.ratio,
                    rng=publisher_rng(self.random_state, 37)), None


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

    def _release(self, graph, sensitive, progress, noise_scale=1.0):
        expected = expected_edgerand_edges(graph.num_edges, graph.num_nodes, self.epsilon)
        if expected > self.max_edges:
            raise ConfigError(f"EdgeRand at epsilon={self.epsilon} on {graph.num_nodes} nodes releases about "
                              f"{expected:,.0f} edges (> max_edges={self.max_edges:,}); raise epsilon or max_edges")
        ledger = Ledger(PrivacyUnit.EDGE, delta=self.delta, accountant="pld",
                        neighboring_relation=NeighboringRelation.REPLACE_ONE)
        released, event = randomized_response_edges(graph.pairs, graph.num_nodes, epsilon=self.epsilon,
                                                    rng=publisher_rng(self.random_state, 41), noise_scale=noise_scale)
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

    def _release(self, graph, sensitive, progress, noise_scale=1.0):
        ledger = Ledger(PrivacyUnit.EDGE, delta=self.delta, accountant="pld")
        released, (count_event, matrix_event) = lapgraph(
            graph.pairs, graph.num_nodes, epsilon=self.epsilon, rng=publisher_rng(self.random_state, 43),
            count_fraction=self.count_fraction, noise_scale=noise_scale)
        ledger.spend(count_event, phase="edge count")
        ledger.spend(matrix_event, phase="perturbation")
        notes = [("Laplace(1/eps1) edge count and Laplace(1/eps2) on every upper-triangle bit; the top-T "
                  "selection and the evaluation are post-processing")]
        return released, ledger.report(target_epsilon=self.epsilon, notes=notes)
