"""TmF (``tmf``): Top-m Filter, an edge-level pure-DP release of a graph's edge set at linear cost.

Source: Nguyen, Imine, Rusinowitch, "Differentially Private Publication of Social Graphs at Linear
Cost" (ASONAM 2015), the Top-m Filter algorithm; the mechanism is
:func:`graphpriv.synthesis.top_m_filter.top_m_filter` (its module docstring has the privacy
argument and why the paper's fill of exactly m~ - n1 non-edges is not offered).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
import torch
from pydantic import Field
from torch_geometric.data import Data

from graphpriv.data.release import PublishedGraph
from graphpriv.errors import DatasetError
from graphpriv.methods.generator import GeneratorConfig, GraphGenerator, Release
from graphpriv.synthesis.top_m_filter import top_m_filter

__all__ = ["TmF", "TmFConfig"]


class TmFConfig(GeneratorConfig):
    """TmF's hyperparameters: epsilon, the share of it for the edge count, the release mode."""

    count_fraction: float = Field(0.1, gt=0, lt=1, description="share of epsilon for the noisy edge count")
    mode: Literal["threshold", "topm"] = Field(
        "threshold", description="'threshold': TmF's filter at theta(M); 'topm': the exact top-M noisy cells")


class TmF(GraphGenerator):
    """TmF: Laplace noise on the edge count and (simulated) on every adjacency cell; the cells above
    the threshold at which about M~ cells pass are released.

    Source: Nguyen, Imine, Rusinowitch, "Differentially Private Publication of Social Graphs at
    Linear Cost" (ASONAM 2015), the Top-m Filter (TmF) algorithm; threshold and count step as in
    the authors' code. Mechanism: :func:`graphpriv.synthesis.top_m_filter.top_m_filter`.

    Steps (N nodes public, P = N(N-1)/2 cells, m true undirected edges; eps2 =
    ``count_fraction * epsilon``, eps1 = ``epsilon - eps2``):

    1. M = clip(round(m + Lap(1/eps2)), 1, P - 1). m has L1 sensitivity 1 (one edge added or
       removed changes it by 1): eps2-DP, event ``LaplaceDpEvent(1/eps2)`` (phase ``edge count``).
    2. Every cell a_ij + Lap(1/eps1): the adjacency vector has L1 sensitivity 1 (one edge changes
       one cell by 1): eps1-DP, event ``LaplaceDpEvent(1/eps1)`` (phase ``cells``). Simulated
       exactly in O(m log m), never P cells:

       - ``mode="threshold"`` (default, TmF): the cells above theta(M), where theta solves
         M (1 - p1) = (P - M) p0 (about M cells pass): each true edge is kept with probability
         p1 = P(1 + Lap > theta), and Binomial(P - m, p0) non-edges, p0 = P(Lap > theta), are
         drawn uniformly without replacement. The released size is random (about M).
       - ``mode="topm"``: exactly the M cells with the largest noisy values (LapGraph's law).

       Both are post-processing of (M, noisy matrix). The paper's shortcut, adding exactly M - n1
       uniform non-edges after n1 edges passed, is not offered: it is not epsilon-DP (an exact
       enumeration on 5 nodes exceeds the bound; the mechanism module says why).

    Total: pure epsilon-DP (delta = 0), edge-level, add or remove one undirected edge.

    Utility warning: at small eps1 nearly every true edge fails the filter and the release is
    almost all uniformly random pairs (19k nodes, 800k edges: p1 = 0.012 at eps1 = 1, 0.20 at 4,
    0.86 at 8; ``info_["p_edge"]`` says it for each fit).

    All sampling happens in :meth:`fit`, because drawing the non-edges reads the true edge set:
    the release *is* the synthetic graph (``released_``), and :meth:`generate` returns it (for any
    seed). Another graph needs another fit, which costs epsilon again.

    Args:
        epsilon: edge-level epsilon, > 0 (4.0). delta: the delta the report is stated at (1e-5;
            the mechanism is pure DP).
        count_fraction: share of epsilon for the noisy edge count, in (0, 1). Default 0.1: M only
            places the threshold, and an error of about 10/epsilon edges (the Lap(1/eps2) scale)
            moves the expected release size by about as much, under 1% of m for any graph with
            m >= 1000/epsilon edges; the cells, which carry all the structure, keep 90% of
            epsilon. At 19k nodes and 800k edges this keeps p1 = 0.011, 0.14, 0.80 at epsilon 1, 4, 8,
            against 0.007, 0.13, 0.82 for the authors' fixed eps2 = 0.5 and 0.007, 0.03, 0.20 for
            PGB's epsilon / 2; LapGraph's 0.01 keeps more for the cells but its count noise
            (100/epsilon edges) is large on small graphs.
        mode: ``"threshold"`` (default) or ``"topm"``.
        random_state: seed of the mechanism's draws (None: a fresh secret seed).

    Attributes:
        released_: the released graph, a :class:`~graphpriv.data.release.PublishedGraph` (pairs
            u < v over the input's node ids, no features).
        num_nodes_: N. privacy_report_: the edge-level report (phases ``edge count``, ``cells``).
        info_: ``mode``, ``noisy_edge_count`` (M), ``eps_count``, ``eps_cells``,
            ``released_edges`` and, in threshold mode, ``theta``, ``p_edge`` (p1), ``p_non_edge``
            (p0): functions of M and epsilon only, covered by the guarantee.
        ledger_: the fit's Ledger (None after :meth:`load`).

    Raises:
        ConfigError: epsilon <= 0, count_fraction outside (0, 1), an unknown mode (construction).
    """

    config_cls: ClassVar[type[GeneratorConfig]] = TmFConfig
    _fit_stream: ClassVar[int] = 53
    _generate_stream: ClassVar[int] = 54

    def _release(self, pairs: np.ndarray, num_nodes: int, rng: np.random.Generator) -> Release:
        if num_nodes < 3:
            raise DatasetError(f"TmF needs at least 3 nodes (got {num_nodes}): its noisy edge count lies in "
                               "[1, N(N-1)/2 - 1]; add the graph's isolated nodes to num_nodes")
        released, events, info = top_m_filter(pairs, num_nodes, epsilon=self.epsilon,
                                              count_fraction=self.count_fraction, mode=self.mode, rng=rng)
        eps2, eps1 = info["eps_count"], info["eps_cells"]
        notes = [
            ("one undirected edge added or removed changes the edge count m by 1 and one upper-triangle "
             "adjacency cell by 1 (L1 sensitivity 1 each)"),
            f"edge count: M = clip(round(m + Lap(1/eps2)), 1, N(N-1)/2 - 1), eps2 = {eps2:g}",
            f"cells: a_ij + Lap(1/eps1) on every cell, eps1 = {eps1:g}, simulated exactly; "
            + ("the cells above theta(M) are released (each edge kept with p1, Binomial(#non-edges, p0) uniform "
               "non-edges)" if self.mode == "threshold" else "the top-M noisy cells are released")
            + ": post-processing of M and the noisy matrix",
        ]
        return Release(PublishedGraph(released, num_nodes), events, notes, info)

    def generate(self, seed: int | None = None) -> Data:
        """The released graph (``released_``) as PyG ``Data``: TmF's release is the synthetic graph.

        Args:
            seed: checked and ignored (an int in [0, 2^32 - 1] or None): every call returns the
                same graph, since drawing another one reads the true edges and costs epsilon
                again (fit again with another ``random_state``).

        Returns:
            ``Data`` with ``edge_index [2, 2|E'|]`` int64 (both directions, no self-loop) and
            ``num_nodes`` N.

        Raises:
            NotFittedError: before ``fit``. ConfigError: a bad ``seed``.
        """
        return super().generate(seed)

    def _generate(self, rng: np.random.Generator) -> np.ndarray:
        return self.released_.pairs

    def _pack(self) -> torch.Tensor:
        return torch.from_numpy(self.released_.pairs.copy())

    def _unpack(self, tensor: torch.Tensor, num_nodes: int) -> Any:
        if tensor.dim() != 2 or tensor.size(0) != 2 or tensor.is_floating_point():
            raise ValueError("the released edges must be a [2, E] integer tensor")
        pairs = tensor.numpy().astype(np.int64)
        if pairs.size and (int(pairs.min()) < 0 or int(pairs.max()) >= num_nodes):
            raise ValueError(f"the released edges must hold node ids in [0, {num_nodes})")
        if not bool((pairs[0] < pairs[1]).all()) or np.unique(pairs[0] * num_nodes + pairs[1]).size != pairs.shape[1]:
            raise ValueError("the released edges must be distinct pairs (u, v) with u < v")
        return PublishedGraph(pairs, num_nodes)
