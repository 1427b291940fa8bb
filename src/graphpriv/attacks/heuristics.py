"""Structure-based attacks CN, AA, RA (PPGSL, Wu et al. TKDE 2025, Sec. V-A.2 and Table III).

Unsupervised: ``fit`` only keeps the published adjacency; scores are the heuristics of
:mod:`graphpriv.linkpred.heuristics` (vectorized on sparse rows, no loop per pair).
"""

from __future__ import annotations

import numpy as np

from graphpriv.attacks.base import LinkAttack
from graphpriv.attacks.graph import PublishedGraph
from graphpriv.linkpred.heuristics import (
    adamic_adar,
    common_neighbours,
    resource_allocation,
)

__all__ = ["AdamicAdarAttack", "CommonNeighboursAttack", "ResourceAllocationAttack"]


class _HeuristicAttack(LinkAttack):
    _fn = staticmethod(common_neighbours)

    def _fit(self, graph: PublishedGraph) -> None:
        graph.adjacency  # noqa: B018 - build the CSR once

    def _score(self, pairs: np.ndarray) -> np.ndarray:
        return type(self)._fn(self.graph_.adjacency, pairs)


class CommonNeighboursAttack(_HeuristicAttack):
    """CN: |N(u) ∩ N(v)| in the published graph (Liben-Nowell & Kleinberg 2007)."""

    name = "cn"
    _fn = staticmethod(common_neighbours)


class AdamicAdarAttack(_HeuristicAttack):
    """AA: sum over common neighbours z of 1 / log |N(z)| (Adamic & Adar 2003)."""

    name = "aa"
    _fn = staticmethod(adamic_adar)


class ResourceAllocationAttack(_HeuristicAttack):
    """RA: sum over common neighbours z of 1 / |N(z)| (Zhou, Lü & Zhang 2009)."""

    name = "ra"
    _fn = staticmethod(resource_allocation)
