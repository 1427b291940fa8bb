"""Graph-publishing baselines of PPGSL (specs/ppgsl.md "Baselines"): ``random-perturb``, ``dice``,
``edgerand`` (edge-level DP) and ``lapgraph`` (edge-level DP).

Every run follows the sensitive-link protocol (:class:`~graphpriv.attacks.protocol.SensitiveLinkProtocol`):
the publisher starts from G minus the sensitive links E_s and the LP test edges, releases a graph,
and the release is attacked and its utility measured with the same split for every method.
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting.privacy_accountant import NeighboringRelation
from pydantic import Field, field_validator
from torch_geometric.data import Data

from graphpriv.attacks.protocol import SensitiveLinkProtocol
from graphpriv.attacks.suite import resolve_attacks
from graphpriv.data.validation import IF_PRESENT, check_data, check_seed
from graphpriv.errors import ConfigError
from graphpriv.methods.base import MethodConfig, Progress, Result, Timer, no_progress
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.lapgraph import lapgraph
from graphpriv.privacy.mechanisms import randomized_response_edges
from graphpriv.privacy.units import PrivacyUnit
from graphpriv.publishing.perturbation import dice, random_perturb

__all__ = [
    "DiceConfig",
    "EdgeRandConfig",
    "LapGraphPublishConfig",
    "PublishConfig",
    "RandomPerturbConfig",
    "run_dice",
    "run_edgerand",
    "run_lapgraph",
    "run_random_perturb",
]


class PublishConfig(MethodConfig):
    """The protocol and the evaluation every publishing method shares."""

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


def evaluate_release(config: PublishConfig, protocol: SensitiveLinkProtocol, released: np.ndarray, *,
                     method: str, seed: int, timer: Timer, ledger: Ledger | None, info: dict,
                     notes: list[str] | None = None, epsilon: float | None = None) -> Result:
    """Attack and measure ``released`` ([2, E''] pairs) under ``protocol``; the :class:`Result`
    with the release attached (``privacy`` from ``ledger``, None for empirical methods)."""
    graph = protocol.published(released)
    with timer.phase("evaluation"):
        attacks = [] if config.attacks.strip() == "none" else config.attacks
        report = protocol.evaluate(graph, attacks=attacks, utility=config.utility)
    kept = int(protocol.input_graph.contains(graph.pairs).sum())
    info.update(input_edges=report.input_edges, published_edges=report.published_edges,
                kept_input_edges=kept, sensitive_published=report.sensitive_published,
                test_published=report.test_published, attack_seconds=report.attack_seconds)
    privacy = ledger.report(target_epsilon=epsilon, notes=notes) if ledger is not None else None
    return Result(method=method, dataset=str(protocol.data.name), seed=seed,
                  config=config.model_dump(mode="json"), metrics=report.metrics(), privacy=privacy,
                  timings=timer.finish(), info=info).with_release(graph)


def sensitive_protocol(config: PublishConfig, data: Data, seed: int, timer: Timer) -> SensitiveLinkProtocol:
    """The run's :class:`SensitiveLinkProtocol` (timed as the ``split`` phase)."""
    with timer.phase("split"):
        return SensitiveLinkProtocol(data, seed=seed, sensitive_ratio=config.sensitive_ratio,
                                     test_ratio=config.test_ratio, use_features=config.use_features)


def run_random_perturb(config: RandomPerturbConfig, data: Data, *, seed: int, method: str = "random-perturb",
                       progress: Progress = no_progress) -> Result:
    """Publish with :func:`~graphpriv.publishing.perturbation.random_perturb`; no DP guarantee."""
    data = check_data(data, needs_features=config.use_features and IF_PRESENT, needs_labels=IF_PRESENT,
                      method=method)
    seed = check_seed(seed)
    timer = Timer()
    protocol = sensitive_protocol(config, data, seed, timer)
    with timer.phase("perturbation"):
        released = random_perturb(protocol.input_graph.pairs, protocol.num_nodes, ratio=config.ratio,
                                  rng=np.random.default_rng([seed, 31]))
    progress(1, 1)
    return evaluate_release(config, protocol, released, method=method, seed=seed, timer=timer, ledger=None, info={})


def run_dice(config: DiceConfig, data: Data, *, seed: int, method: str = "dice",
             progress: Progress = no_progress) -> Result:
    """Publish with :func:`~graphpriv.publishing.perturbation.dice`; no DP guarantee."""
    data = check_data(data, needs_features=config.use_features and IF_PRESENT, needs_labels=IF_PRESENT,
                      method=method)
    seed = check_seed(seed)
    timer = Timer()
    protocol = sensitive_protocol(config, data, seed, timer)
    with timer.phase("perturbation"):
        released = dice(protocol.input_graph.pairs, protocol.num_nodes, protocol.sensitive_links,
                        ratio=config.ratio, rng=np.random.default_rng([seed, 37]))
    progress(1, 1)
    return evaluate_release(config, protocol, released, method=method, seed=seed, timer=timer, ledger=None, info={})


def expected_edgerand_edges(num_edges: int, num_nodes: int, epsilon: float) -> float:
    """Expected |E'| of EdgeRand: kept edges plus switched-on non-edges."""
    flip = 1.0 / (1.0 + math.exp(epsilon))
    return num_edges * (1 - flip) + (num_nodes * (num_nodes - 1) / 2 - num_edges) * flip


def run_edgerand(config: EdgeRandConfig, data: Data, *, seed: int, method: str = "edgerand",
                 progress: Progress = no_progress) -> Result:
    """Publish with EdgeRand (:func:`~graphpriv.privacy.mechanisms.randomized_response_edges`).

    Privacy: edge-level epsilon-DP (one edge = one adjacency bit), accounted by dp-accounting's PLD
    accountant under REPLACE_ONE over the bits (tight for randomized response).

    Raises:
        ConfigError: the expected release exceeds ``max_edges`` (raise epsilon or the cap).
    """
    data = check_data(data, needs_features=config.use_features and IF_PRESENT, needs_labels=IF_PRESENT,
                      method=method)
    seed = check_seed(seed)
    timer = Timer()
    protocol = sensitive_protocol(config, data, seed, timer)
    expected = expected_edgerand_edges(protocol.input_graph.num_edges, protocol.num_nodes, config.epsilon)
    if expected > config.max_edges:
        raise ConfigError(f"EdgeRand at epsilon={config.epsilon} on {protocol.num_nodes} nodes releases about "
                          f"{expected:,.0f} edges (> max_edges={config.max_edges:,}); raise epsilon or max_edges")
    ledger = Ledger(PrivacyUnit.EDGE, delta=config.delta, accountant="pld",
                    neighboring_relation=NeighboringRelation.REPLACE_ONE)
    with timer.phase("perturbation"):
        released, event = randomized_response_edges(protocol.input_graph.pairs, protocol.num_nodes,
                                                     epsilon=config.epsilon, rng=np.random.default_rng([seed, 41]))
    ledger.spend(event, phase="randomized response")
    progress(1, 1)
    notes = [("one edge added or removed = one adjacency bit replaced (REPLACE_ONE over the bits); "
             "every bit is flipped with probability 1/(1+e^epsilon); evaluation is post-processing")]
    return evaluate_release(config, protocol, released, method=method, seed=seed, timer=timer, ledger=ledger,
                     info={"expected_published_edges": expected}, notes=notes, epsilon=config.epsilon)


def run_lapgraph(config: LapGraphPublishConfig, data: Data, *, seed: int, method: str = "lapgraph",
                 progress: Progress = no_progress) -> Result:
    """Publish with LapGraph (:func:`~graphpriv.privacy.lapgraph.lapgraph`, blocked top-T).

    Privacy: edge-level epsilon-DP: a Laplace edge count (``count_fraction`` of epsilon) and Laplace
    noise on every adjacency bit, both L1-sensitivity 1; composed with the PLD accountant.
    """
    data = check_data(data, needs_features=config.use_features and IF_PRESENT, needs_labels=IF_PRESENT,
                      method=method)
    seed = check_seed(seed)
    timer = Timer()
    protocol = sensitive_protocol(config, data, seed, timer)
    ledger = Ledger(PrivacyUnit.EDGE, delta=config.delta, accountant="pld")
    with timer.phase("perturbation"):
        released, (count_event, matrix_event) = lapgraph(
            protocol.input_graph.pairs, protocol.num_nodes, epsilon=config.epsilon,
            rng=np.random.default_rng([seed, 43]), count_fraction=config.count_fraction)
    ledger.spend(count_event, phase="edge count")
    ledger.spend(matrix_event, phase="perturbation")
    progress(1, 1)
    notes = [("Laplace(1/eps1) edge count and Laplace(1/eps2) on every upper-triangle bit; the top-T "
             "selection and the evaluation are post-processing")]
    return evaluate_release(config, protocol, released, method=method, seed=seed, timer=timer, ledger=ledger,
                     info={}, notes=notes, epsilon=config.epsilon)
