"""PrivGraph (``privgraph``): an edge-level pure-DP synthetic graph from noisy community information.

Source: Yuan, Zhang, Du, Chen, Cheng, Sun, "PrivGraph: Differentially Private Graph Data
Publication by Exploiting Community Information" (USENIX Security 2023), and the authors' code
(``Privacy-Graph/PrivGraph``); the mechanism is :mod:`graphpriv.synthesis.privgraph` (its module
docstring has every step's sensitivity proof and the departures from the public code).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

import numpy as np
import torch
from pydantic import Field, field_validator

from graphpriv.errors import DatasetError
from graphpriv.methods.generator import GeneratorConfig, GraphGenerator, Release
from graphpriv.synthesis.privgraph import MAX_SUPERGRAPH_CELLS, PrivGraphRelease, privgraph_release, reconstruct

__all__ = ["PrivGraph", "PrivGraphConfig"]

_PHASES = ("community initialisation", "community adjustment", "information extraction")


class PrivGraphConfig(GeneratorConfig):
    """PrivGraph's hyperparameters: epsilon and its split over the three phases, the super-node
    size N1 and the Louvain resolution t of phase 1, the exponential mechanism's rate of phase 2."""

    split: tuple[float, float, float] = Field(
        (1 / 3, 1 / 3, 1 / 3),
        description="shares of epsilon for community initialisation, adjustment and information extraction "
                    "(each > 0, summing to 1)")
    supernode_size: int = Field(20, ge=1, description="N1: nodes per random super-node of phase 1 (at most N)")
    resolution: float = Field(1.0, gt=0, allow_inf_nan=False, description="t: the phase-1 Louvain resolution")
    em_scale: Literal["paper", "monotone"] = Field(
        "paper", description="phase-2 exponential mechanism: 'paper' exp(eps2 s / 4), 'monotone' exp(eps2 s / 2)")

    @field_validator("split")
    @classmethod
    def _shares(cls, value: tuple[float, float, float]) -> tuple[float, float, float]:
        for name, share in zip(_PHASES, value):
            if not (math.isfinite(share) and share > 0):
                raise ValueError(f"every share must be a finite number > 0, got {share!r} for {name}; e.g. "
                                 "split=(1/3, 1/3, 1/3), the paper's")
        if abs(sum(value) - 1.0) > 1e-6:
            raise ValueError(f"the shares must sum to 1, got {sum(value):g}; e.g. split=(1/3, 1/3, 1/3), the paper's")
        return value


class PrivGraph(GraphGenerator):
    """PrivGraph: communities found privately, their noisy edge counts and degrees released, graphs
    drawn by Chung–Lu inside communities and uniform pairs between them.

    Source: Yuan, Zhang, Du, Chen, Cheng, Sun, "PrivGraph: Differentially Private Graph Data
    Publication by Exploiting Community Information" (USENIX Security 2023); defaults as the paper
    and the authors' ``main.py`` (epsilon split 1/3 each, N1 = 20, t = 1). Mechanism and proofs:
    :mod:`graphpriv.synthesis.privgraph`.

    ``fit`` (edge-level, add or remove one undirected edge, N public; eps1, eps2, eps3 =
    ``split`` x epsilon):

    1. Community initialisation (eps1): the nodes go to S = ceil(N / N1) random super-nodes; the
       edge counts between every two super-nodes and inside every super-node (one vector of
       S(S-1)/2 + S counts, L1 sensitivity 1: an edge is counted in exactly one entry) get
       Lap(1/eps1) each, event ``LaplaceDpEvent(1/eps1)``; rounding, Norm-Sub (which keeps the sum
       and zeroes most noise-only cells: only positive cells become super-graph edges) and Louvain
       with resolution t on the weighted super-graph (networkx, seeded) are post-processing.
    2. Community adjustment (eps2): one pass over the nodes in random order; node w moves to a
       non-empty community C with probability ~ exp(lam k_w(C)), k_w(C) = w's neighbours in C,
       lam = eps2 / 4 (``em_scale="paper"``, the authors' code) or eps2 / 2 (``"monotone"``).
       Given the history, one edge {u, v} changes only u's and v's scores, by 1 in one coordinate,
       one-sidedly; every other selection has the same law. So two selections are affected, each
       accounted at eps2 / 2 (the paper's accounting; with lam = eps2 / 4 each is in fact eps2 / 4-DP
       by monotonicity, and with lam = eps2 / 2 it is eps2 / 2-DP). Events: two pure eps2 / 2-DP
       steps, entered as ``DiscreteLaplaceDpEvent(eps2 / 2, 1)`` (the exact privacy-loss
       distribution of binary randomised response, the worst case of a pure-DP step, which the PLD
       accountant composes; see :func:`~graphpriv.synthesis.privgraph.pure_dp_event`).
    3. Information extraction (eps3): the edge counts between communities E_ij + Lap(1/eps3) and
       each node's degree inside its community d_v + Lap(2/eps3): (E, d / 2) has L1 sensitivity 1
       (an edge is inter, one E_ij by 1, or intra, two d's by 1), one event
       ``LaplaceDpEvent(1/eps3)``; rounding, Norm-Sub and clipping are post-processing.

    Total: pure epsilon-DP (delta = 0) by adaptive composition. The release (``released_``) is
    the partition and the noisy statistics, never the graph.

    ``generate(seed)`` (post-processing, free, a fresh graph per seed): inside each community, each
    pair {u, v} is an edge independently with probability min(1, d_u d_v / S_C) (Chung–Lu with
    the noisy degrees, S_C their sum over C); between communities i < j, E_ij distinct pairs drawn
    uniformly from C_i x C_j. Expected edge count: ``info_["expected_edges"]``.

    Departures from the authors' code (all corrections; :mod:`graphpriv.synthesis.privgraph` says
    why): inter-community endpoints in C_i and C_j (the code's leftover ``pi`` puts one endpoint of
    every inter-community edge in the last community); rounding instead of truncation; a
    super-node's self-loop weighs its internal edge count c, not 2c; N is the public ``num_nodes``
    (the code drops isolated nodes); E_ij pairs without replacement; no N x N matrix.

    Args:
        epsilon: edge-level epsilon, > 0 (4.0). delta: the delta the report is stated at (1e-5;
            the mechanism is pure DP).
        split: shares of epsilon for the three phases, each > 0, summing to 1 ((1/3, 1/3, 1/3)).
        supernode_size: N1, nodes per super-node, >= 1 and at most N (20).
        resolution: t, the phase-1 Louvain resolution, > 0 (1.0).
        em_scale: ``"paper"`` (default, lam = eps2 / 4) or ``"monotone"`` (lam = eps2 / 2: sharper
            adjustment, the same guarantee).
        random_state: seed of the mechanism's draws (None: a fresh secret seed) and the default
            seed of :meth:`generate`.

    Attributes:
        released_: a :class:`~graphpriv.synthesis.privgraph.PrivGraphRelease` (``communities``
            ``[N]``, ``intra_degrees`` ``[N]``, ``inter_counts`` ``[K(K-1)/2]``).
        num_nodes_: N. privacy_report_: the edge-level report (phases ``community
            initialisation``, ``community adjustment``, ``information extraction``).
        info_: ``eps_init``, ``eps_adjust``, ``eps_extract``, ``em_rate`` (lam),
            ``num_supernodes`` (S), ``initial_communities`` (after Louvain), ``num_communities``
            (K), ``noisy_inter_edges``, ``noisy_intra_degree_sum``, ``expected_edges``: functions of
            the release and the settings only.
        ledger_: the fit's Ledger (None after :meth:`load`).

    Raises:
        ConfigError: epsilon <= 0, a split with a share <= 0 or not summing to 1,
            supernode_size < 1, resolution <= 0, an unknown em_scale (construction).
        DatasetError: supernode_size above N, or so small that the super-graph would have more than
            :data:`~graphpriv.synthesis.privgraph.MAX_SUPERGRAPH_CELLS` cells (``fit``).
    """

    config_cls: ClassVar[type[GeneratorConfig]] = PrivGraphConfig
    _fit_stream: ClassVar[int] = 67
    _generate_stream: ClassVar[int] = 68

    def _check_sizes(self, num_nodes: int) -> None:
        size = self.supernode_size
        if size > num_nodes:
            raise DatasetError(f"PrivGraph's supernode_size={size} is above the graph's N={num_nodes} nodes: a "
                               f"super-node groups supernode_size nodes; use supernode_size <= {num_nodes} "
                               "(the paper's default is 20)")
        groups = -(-num_nodes // size)
        cells = groups * (groups - 1) // 2
        if cells > MAX_SUPERGRAPH_CELLS:
            most = int((1 + math.isqrt(1 + 8 * MAX_SUPERGRAPH_CELLS)) // 2)
            while most * (most - 1) // 2 > MAX_SUPERGRAPH_CELLS:
                most -= 1
            raise DatasetError(f"PrivGraph's supernode_size={size} splits the N={num_nodes} nodes into {groups} "
                               f"super-nodes, whose noisy super-graph has {cells} cells, above graphpriv's limit of "
                               f"{MAX_SUPERGRAPH_CELLS}; use supernode_size >= {-(-num_nodes // most)}")

    def _release(self, pairs: np.ndarray, num_nodes: int, rng: np.random.Generator) -> Release:
        self._check_sizes(num_nodes)
        released, events, info = privgraph_release(
            pairs, num_nodes, epsilon=self.epsilon, split=tuple(self.split), supernode_size=self.supernode_size,
            resolution=self.resolution, em_scale=self.em_scale, rng=rng)
        eps1, eps2, eps3 = info["eps_init"], info["eps_adjust"], info["eps_extract"]
        notes = [
            (f"community initialisation: N nodes in {info['num_supernodes']} random super-nodes of "
             f"{self.supernode_size}; the edge counts between and inside super-nodes (L1 sensitivity 1: one edge is "
             f"counted in exactly one entry) + Lap(1/eps1), eps1 = {eps1:g}; rounding, Norm-Sub and Louvain "
             f"(resolution {self.resolution:g}) are post-processing"),
            (f"community adjustment: each node moves by the exponential mechanism with rate "
             f"{info['em_rate']:g} x (neighbours in the community); given the history one edge changes only its two "
             f"endpoints' scores, by 1 in one coordinate: two selections of pure eps2/2-DP, eps2 = {eps2:g}, entered "
             "as DiscreteLaplace(eps2/2, sensitivity 1), the exact privacy-loss distribution of binary randomised "
             "response, the worst case of a pure-DP step"),
            (f"information extraction: inter-community edge counts + Lap(1/eps3) and intra-community degrees "
             f"+ Lap(2/eps3), eps3 = {eps3:g}; an edge is inter (one count by 1) or intra (two degrees by 1), so "
             "(counts, degrees/2) has L1 sensitivity 1; rounding, Norm-Sub and clipping are post-processing"),
        ]
        return Release(released, events, notes, info)

    def _generate(self, rng: np.random.Generator) -> np.ndarray:
        return reconstruct(self.released_, rng)

    def _pack(self) -> torch.Tensor:
        return torch.from_numpy(self.released_.pack())

    def _unpack(self, tensor: torch.Tensor, num_nodes: int) -> Any:
        if tensor.dim() != 1 or tensor.is_floating_point():
            raise ValueError("the PrivGraph release must be a 1-D integer tensor")
        return PrivGraphRelease.unpack(tensor.numpy(), num_nodes)
