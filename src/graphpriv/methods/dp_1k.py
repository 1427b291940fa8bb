"""DP-1K (``dp-1k``): an edge-level pure-DP sorted degree sequence, graphs drawn by Chung–Lu.

Sources: Hay, Li, Miklau, Jensen, "Accurate Estimation of the Degree Distribution of Private
Networks" (ICDM 2009), the noisy sorted degree sequence and its constrained inference; Chung & Lu
(Annals of Combinatorics 2002) in the erased Poisson form of Norros & Reittu (Adv. Appl. Prob.
2006) for the graphs. Mechanism: :mod:`graphpriv.synthesis.degree_sequence`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch

from graphpriv.methods.generator import GeneratorConfig, GraphGenerator, Release
from graphpriv.synthesis.degree_sequence import chung_lu_pairs, release_degree_sequence

__all__ = ["DP1K", "DP1KConfig"]


class DP1KConfig(GeneratorConfig):
    """DP-1K's hyperparameters: the edge-level epsilon (and the delta its report is stated at)."""


class DP1K(GraphGenerator):
    """DP-1K: the sorted degree sequence with Laplace noise, constrained inference, Chung–Lu graphs.

    Source: Hay, Li, Miklau, Jensen, "Accurate Estimation of the Degree Distribution of Private
    Networks" (ICDM 2009): the sorted degree sequence query S and constrained inference (the
    least-squares non-decreasing fit); graphs by Chung–Lu (Chung & Lu 2002), erased Poisson form
    (Norros & Reittu 2006).

    ``fit`` (the only privacy cost, pure epsilon-DP, edge-level: add or remove one undirected edge,
    N public):

    1. s = the N degrees sorted ascending. One edge {u, v} raises d_u and d_v by 1; raising one
       entry of a multiset by 1 moves its sorted vector by +1 in exactly one position (the last
       holding the old value), so s moves by exactly 2 in L1 (proof in
       :func:`graphpriv.synthesis.degree_sequence.sorted_degrees`).
    2. s~ = s + Lap(2/epsilon) per entry: the Laplace mechanism at L1 sensitivity 2, event
       ``LaplaceDpEvent(1/epsilon)`` (phase ``degree sequence``).
    3. Post-processing: isotonic regression of s~ (``sklearn.isotonic.IsotonicRegression``), rounded
       and clipped to [0, N - 1]: ``released_``.

    ``generate(seed)`` (post-processing, free, a fresh graph per seed): the released degrees go to a
    uniformly random permutation of the nodes (never matched to the true degree ranks), then a
    Chung–Lu graph with those expected degrees w is drawn in its erased Poisson form
    (:func:`~graphpriv.synthesis.degree_sequence.chung_lu_pairs`): Poisson(S/2) edges, S = sum(w),
    with endpoints drawn proportionally to w; self-loops dropped, duplicates merged. Each pair
    {u, v} is then an edge independently with probability 1 - exp(-w_u w_v / S). Preserved in
    expectation: every node's degree w_u and S/2 edges in the multigraph before erasure; after it,
    E[d_u] = sum_{v != u} (1 - exp(-w_u w_v / S)) <= w_u (1 - w_u / S), so hubs fall short.

    Node identities carry no information: which node gets which degree is random, so node features
    and labels are not aligned with the synthetic structure.

    Args:
        epsilon: edge-level epsilon, > 0 (4.0). delta: the delta the report is stated at (1e-5;
            the mechanism is pure DP).
        random_state: seed of the noise (None: a fresh secret seed) and the default seed of
            :meth:`generate`.

    Attributes:
        released_: ``[N]`` int64 numpy array, the post-processed noisy sorted degree sequence
            (non-decreasing, in [0, N - 1]).
        num_nodes_: N. privacy_report_: the edge-level report (phase ``degree sequence``).
        info_: ``degree_sum`` (S) and ``expected_multigraph_edges`` (S / 2), from the release.
        ledger_: the fit's Ledger (None after :meth:`load`).

    Raises:
        ConfigError: epsilon <= 0 (construction).
    """

    config_cls: ClassVar[type[GeneratorConfig]] = DP1KConfig
    _fit_stream: ClassVar[int] = 59
    _generate_stream: ClassVar[int] = 60

    def _release(self, pairs: np.ndarray, num_nodes: int, rng: np.random.Generator) -> Release:
        released, event = release_degree_sequence(pairs, num_nodes, epsilon=self.epsilon, rng=rng)
        total = int(released.sum())
        notes = [
            ("sorted degree sequence (ascending, N public): one undirected edge added or removed changes it by "
             "exactly 2 in L1 (one position by 1 for each endpoint); Laplace(2/epsilon) on each of the N entries"),
            ("isotonic regression, rounding and clipping to [0, N-1] (Hay et al.'s constrained inference) are "
             "post-processing"),
        ]
        return Release(released, [("degree sequence", event)], notes,
                       {"degree_sum": total, "expected_multigraph_edges": total / 2})

    def _generate(self, rng: np.random.Generator) -> np.ndarray:
        weights = np.empty_like(self.released_)
        weights[rng.permutation(self.num_nodes_)] = self.released_
        return chung_lu_pairs(weights, rng)

    def _pack(self) -> torch.Tensor:
        return torch.from_numpy(self.released_.copy())

    def _unpack(self, tensor: torch.Tensor, num_nodes: int) -> Any:
        seq = tensor.numpy()
        if (seq.ndim != 1 or seq.size != num_nodes or not np.issubdtype(seq.dtype, np.integer)
                or (seq.size and (seq.min() < 0 or seq.max() > max(num_nodes - 1, 0) or (np.diff(seq) < 0).any()))):
            raise ValueError("the released degree sequence must be [N] non-decreasing integers in [0, N-1]")
        return seq.astype(np.int64)
