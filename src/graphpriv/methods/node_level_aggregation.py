"""Node-level aggregation perturbation (GAP-NDP, ProGAP-NDP): the budget over DP-SGD and the hops,
DP-SGD of the transductive modules, the degree-bounded hops and the report.

Sources: Sajadmanesh, Shamsabadi, Bellet, Gatica-Perez, "GAP: Differentially Private Graph Neural
Networks with Aggregation Perturbation" (USENIX Security 2023), Sec. 5.2 (node level: the degree
bounded by D, the encoder and the classification module trained by DP-SGD with per-node clipping,
the hops' noise at sensitivity sqrt(D), one noise multiplier for all calibrated to the budget: the
public code's choice, ``sgd_noise_ratio`` = 1 here);
Sajadmanesh and Gatica-Perez, "ProGAP" (WSDM 2024), Sec. 5 (the same for every stage).

Privacy (node level; the relation and the proof are in docs/privacy.md): neighbouring graphs
differ by one node v added or removed with its features, label and edges, both with every degree
at most D (the bounded-degree relation; the degree cut is the identity on such graphs). The fit
is, in order: DP-SGD steps on the training nodes' own examples (one node is one example:
``PoissonSampledDpEvent(q, GaussianDpEvent(r z))`` per step, each example's gradient clipped to C,
noise std r z C, r = ``sgd_noise_ratio``); K Gaussian hops, each ``GaussianDpEvent(z)`` at
sensitivity sqrt(D) over the rows of the nodes other than v (noise std z sqrt(D)); more DP-SGD
steps whose examples are the nodes' noisy aggregates. v's own aggregate row is read only by v's
own example, which the DP-SGD bound covers whatever it holds (for every value of that row, hence
for its mixture: Renyi divergence is jointly quasi-convex). The steps compose adaptively in RDP on one node-level
:class:`~graphpriv.privacy.accountant.Ledger`. The training-node count (q = B / T) is treated as
public, as for dp-mlp.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import torch
from dp_accounting import dp_event
from pydantic import Field, model_validator
from torch import Tensor

from graphpriv.methods.base import Progress
from graphpriv.methods.node_classifier import steps_and_rate
from graphpriv.methods.transductive_classifier import AggregationPerturbationConfig
from graphpriv.privacy.accountant import Ledger, check_delta
from graphpriv.privacy.calibration import calibrate_noise_multiplier, quiet_absl
from graphpriv.privacy.engine import DPSGD
from graphpriv.privacy.ghost_clipping import linear_clipped_sum
from graphpriv.privacy.hooks import AuditHook
from graphpriv.privacy.report import PrivacyReport
from graphpriv.privacy.sampling import PoissonSampler
from graphpriv.privacy.units import PrivacyUnit
from graphpriv.propagation.aggregation_perturbation import node_sensitivity
from graphpriv.propagation.degree_bound import bound_degree, max_degree_of

__all__ = ["PUBLIC_COUNTS_NOTE", "NodeBudget", "NodeLevelAggregation", "NodeLevelConfig", "above_bound_notes",
           "bounded_edges", "node_budget", "node_report", "stream_seed", "train_dp_sgd"]


def stream_seed(random_state: int, purpose: str) -> int:
    """A seed of its own for each random stream of a node-level fit (the degree cut, each DP-SGD
    phase's batches and noise, a prediction's hops), derived from ``random_state`` and the stream's
    name by :class:`numpy.random.SeedSequence`: no two streams share their draws (two noisy
    releases whose noise coincided would not compose as the accountant assumes).

    Returns:
        An integer in [0, 2^32 - 1].
    """
    return int(np.random.SeedSequence([int(random_state), zlib.crc32(purpose.encode())]).generate_state(1)[0])


class NodeLevelConfig(AggregationPerturbationConfig):
    """What GAP-NDP and ProGAP-NDP add to the shared hyperparameters: the degree bound D and the
    DP-SGD schedule (the public GAP code's defaults: D = 100, C = 1, batches of 256 expected by
    Poisson sampling; no batch normalisation, whose batch statistics would mix nodes' examples)."""

    epsilon: float = Field(8.0, gt=0, description="node-level epsilon")
    delta: float = Field(1e-5, gt=0, lt=1, description="below 1 / N up to 100,000 nodes")
    batch_norm: bool = Field(False, description="must stay False: DP-SGD clips each node's gradient alone")
    max_degree: int = Field(100, ge=1, description="D, the degree bound (hop sensitivity sqrt(D))")
    max_grad_norm: float = Field(1.0, gt=0, description="C, each node's gradient clipped to it")
    batch_size: int = Field(256, ge=1, description="expected Poisson batch (q = batch_size / training nodes)")
    sgd_noise_ratio: float = Field(1.0, gt=0, description="r: DP-SGD's noise multiplier over the hops' (r z against z; "
                                   "1: one multiplier for all, the public code's; r > 1 moves budget to the hops)")

    @model_validator(mode="after")
    def _node_level_is_private(self) -> NodeLevelConfig:
        if not self.private:
            raise ValueError("a node-level GAP / ProGAP is private by definition: drop private=false, or run gap-inf "
                             "/ progap-inf for the model without noise")
        if self.batch_norm:
            raise ValueError("batch_norm=true mixes the nodes of a batch, which per-node DP-SGD clipping cannot bound: "
                             "drop batch_norm for the node-level methods")
        if self.model_selection != "last":
            raise ValueError("model_selection='best_val' reads the validation nodes' labels at every epoch, which "
                             "node-level DP protects and no step of the budget pays for: keep model_selection='last' "
                             "for the node-level methods")
        return self


class NodeBudget:
    """A node-level fit's budget: the hops' ``noise_multiplier`` z and DP-SGD's
    ``sgd_noise_multiplier`` r z (r = ``config.sgd_noise_ratio``), one z calibrated to the whole
    composition; the DP-SGD ``sample_rate`` q and ``steps`` per phase; the node-level ``ledger``
    every step is spent on.

    Args:
        config: the hyperparameters. num_train: T, the training nodes. phases: ``{name: epochs}``
            of the DP-SGD phases, in order. hops: the Gaussian hops (K for GAP, depth for ProGAP).

    Raises:
        PrivacyError: a bad delta. BudgetExceededError: no noise meets the budget.
    """

    def __init__(self, config: NodeLevelConfig, num_train: int, phases: dict[str, int], hops: int) -> None:
        check_delta(config.delta)
        self.steps: dict[str, int] = {}
        for name, epochs in phases.items():
            self.steps[name], self.sample_rate = steps_and_rate(num_train, epochs, config.batch_size)
        self.hops = hops
        self.sgd_noise_ratio = float(config.sgd_noise_ratio)
        with quiet_absl():
            self.noise_multiplier = calibrate_noise_multiplier(self.event, target_epsilon=config.epsilon,
                                                               delta=config.delta)
        self.sgd_noise_multiplier = self.sgd_noise_ratio * self.noise_multiplier
        self.ledger = Ledger(PrivacyUnit.NODE, delta=config.delta)

    def event(self, noise_multiplier: float) -> dp_event.DpEvent:
        """The whole fit as one event at hop multiplier ``noise_multiplier`` z: every phase's
        Poisson DP-SGD steps at r z and the K Gaussian hops at z."""
        sgd = dp_event.GaussianDpEvent(self.sgd_noise_ratio * noise_multiplier)
        step = dp_event.PoissonSampledDpEvent(self.sample_rate, sgd)
        return dp_event.ComposedDpEvent([*(dp_event.SelfComposedDpEvent(step, n) for n in self.steps.values()),
                                         dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(noise_multiplier),
                                                                      self.hops)])


def node_budget(config: NodeLevelConfig, num_train: int, phases: dict[str, int], hops: int,
                info: dict) -> NodeBudget:
    """:class:`NodeBudget` for the fit; ``info`` gains ``noise_multiplier`` (the hops' z),
    ``noise_std`` (the hops': z sqrt(D)), ``sgd_noise_multiplier`` (r z), ``sgd_noise_std`` (r z C)
    and ``steps``."""
    budget = NodeBudget(config, num_train, phases, hops)
    z, z_sgd = budget.noise_multiplier, budget.sgd_noise_multiplier
    info.update(noise_multiplier=z, noise_std=z * node_sensitivity(config.max_degree), sgd_noise_multiplier=z_sgd,
                sgd_noise_std=z_sgd * config.max_grad_norm, steps=dict(budget.steps))
    return budget


def bounded_edges(edge_index: Tensor, num_nodes: int, max_degree: int, *, seed: int, info: dict | None) -> Tensor:
    """``edge_index`` cut to degree <= D (:func:`~graphpriv.propagation.degree_bound.bound_degree`,
    seeded ``seed``); with ``info``, ``info["within_degree_bound"]`` records whether the input
    already was (the guarantee's relation covers it then; a fact of the graph the guarantee does
    not hide, kept for the data holder as the training-node count is)."""
    if info is not None:
        info["within_degree_bound"] = max_degree_of(edge_index, num_nodes) <= max_degree
    return bound_degree(edge_index, num_nodes, max_degree, generator=torch.Generator().manual_seed(seed))


def train_dp_sgd(module: torch.nn.Module, inputs: Sequence[Tensor], y: Tensor, *, config: NodeLevelConfig,
                 budget: NodeBudget, phase: str, seed: int, progress: Progress,
                 parameters: list[torch.nn.Parameter] | None = None, audit_hook: AuditHook | None = None) -> None:
    """DP-SGD of ``module`` on the examples ``(inputs[i][t], y[t])`` of the T training nodes: the
    phase's steps of :class:`~graphpriv.privacy.engine.DPSGD` (Poisson batches of rate q, each node's
    gradient clipped to ``config.max_grad_norm`` by per-example gradients, noise r z C, Adam), each
    spent on ``budget.ledger`` under ``phase``; ``module`` in eval mode after. The clipped sums by
    ghost clipping (:func:`~graphpriv.privacy.ghost_clipping.linear_clipped_sum`: the modules are
    linear layers applied once per node).

    Args:
        module: ``module(*[t[batch] for t in inputs]) -> [B, C]`` logits (no batch statistics).
        inputs: ``[T, ...]`` tensors, one row per training node. y: ``[T]`` labels.
        config, budget: the hyperparameters and the fit's budget. phase: a name of
            ``budget.steps``. seed: the batches' and the noise's generator. progress:
            ``progress(step, steps, loss=...)``.
        parameters: what is trained (default: all of ``module``'s; the others are frozen for the
            phase, and every parameter's ``requires_grad`` is restored after, on error too).
        audit_hook: a privacy audit's fault (None for a real fit).
    """
    trainable = list(module.parameters()) if parameters is None else list(parameters)
    chosen = {id(p) for p in trainable}
    flags = [(p, p.requires_grad) for p in module.parameters()]
    generator = torch.Generator().manual_seed(seed)
    steps = budget.steps[phase]

    def collate(index: Tensor) -> tuple[tuple[Tensor, ...], Tensor]:
        return tuple(t[index] for t in inputs), y[index]
    try:
        for p, _ in flags:
            p.requires_grad_(id(p) in chosen)
        engine = DPSGD(module, torch.optim.Adam(trainable, lr=config.lr, weight_decay=config.weight_decay),
                       PoissonSampler(int(y.shape[0]), budget.sample_rate, generator=generator),
                       clipped_sum=linear_clipped_sum(module, collate, config.max_grad_norm),
                       noise_multiplier=budget.sgd_noise_multiplier, max_grad_norm=config.max_grad_norm, group_size=1,
                       ledger=budget.ledger, generator=generator, phase=phase, audit_hook=audit_hook)
        module.train()
        for step in range(1, steps + 1):
            progress(step, steps, loss=engine.step())
    finally:
        for p, flag in flags:
            p.requires_grad_(flag)
        module.eval()


#: The note every node-level DP-SGD fit's report carries on what it treats as public.
PUBLIC_COUNTS_NOTE = ("the number of training nodes (it sets q) and the label set (the output width) are treated as "
                      "public, as for dp-mlp")


def above_bound_notes(max_degree: int, info: dict) -> list[str]:
    """``[note]`` when the fit recorded ``info["within_degree_bound"]`` False (the fitted graph had a
    degree above D, which the bounded-degree relation does not cover), else ``[]``."""
    if info.get("within_degree_bound", True):
        return []
    return [(f"this graph has nodes of degree above D = {max_degree}: the fit cut it by edge sampling, and the "
            "relation above does not cover it (removing a node can change which edges other nodes keep; "
            "docs/privacy.md)")]


def _multipliers(config: NodeLevelConfig) -> str:
    """How the fit's noise multipliers relate, for its report."""
    if config.sgd_noise_ratio == 1:
        return "one noise multiplier for all"
    return (f"DP-SGD's noise multiplier is {config.sgd_noise_ratio:g} x the hops', one multiplier calibrated to the "
            "whole composition")


def node_report(budget: NodeBudget, config: NodeLevelConfig, info: dict, *, where: str) -> PrivacyReport:
    """The report of a node-level fit: the ledger's epsilon at the fit's delta, with the relation
    (bounded degree D), what each step costs, and, when the fitted graph had a degree above D, that
    the relation does not cover it (docs/privacy.md: the cut is not stable under removing a node)."""
    notes = [(f"node-level add/remove of one node with its features, label and edges, over graphs whose degrees are "
             f"at most D = {config.max_degree} (bounded-degree relation): {where} are Gaussian mechanisms at "
             f"sensitivity sqrt(D) over the other nodes' rows; every node's own example, its aggregates included, is "
             f"trained by Poisson DP-SGD (clip C = {config.max_grad_norm:g}); {_multipliers(config)}"),
             PUBLIC_COUNTS_NOTE, *above_bound_notes(config.max_degree, info)]
    with quiet_absl():
        return budget.ledger.report(target_epsilon=config.epsilon, notes=notes)


class NodeLevelAggregation:
    """The steps GAP-NDP and ProGAP-NDP take alike, mixed in before GAP's / ProGAP's estimator: the
    degree cut before the aggregations (its own stream, :func:`stream_seed`), their sensitivity sqrt(D),
    and the node-level report. A subclass names its aggregations (``_aggregations``)."""

    def _aggregations(self) -> str:
        raise NotImplementedError

    def _edges(self, edge_index: Tensor, num_nodes: int, info: dict | None) -> Tensor:
        # the fit's cut records its facts in info; a prediction's (info None) draws from a stream of its own
        purpose = "degree cut" if info is not None else "degree cut, prediction"
        return bounded_edges(edge_index, num_nodes, self._config.max_degree,
                             seed=stream_seed(self.random_state, purpose), info=info)

    def _sensitivity(self) -> float:
        return node_sensitivity(self._config.max_degree)

    def _report(self, budget: NodeBudget, info: dict) -> PrivacyReport:
        return node_report(budget, self._config, info, where=self._aggregations())
