"""The object every attack and every utility task takes: a published graph."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor
from torch_geometric.data import Data

from graphpriv.data.graph import decode_pairs, pair_codes, to_csr

__all__ = ["PublishedGraph"]


@dataclass(frozen=True, eq=False)
class PublishedGraph:
    """A released graph G' = (A', X) as an attacker sees it.

    Attributes:
        pairs: ``[2, E']`` int64 undirected edges, each once with u < v, sorted and distinct.
        num_nodes: N (the node ids are the original graph's; isolated nodes are kept).
        x: ``[N, F]`` float32 node features released with the graph, or None.

    Raises:
        ValueError: ids out of ``[0, N)`` (on construction).
    """

    pairs: np.ndarray
    num_nodes: int
    x: np.ndarray | None = field(default=None)

    def __post_init__(self) -> None:
        p = np.asarray(self.pairs, dtype=np.int64).reshape(2, -1)
        if p.size and (p.min() < 0 or p.max() >= self.num_nodes):
            raise ValueError(f"published edge ids must lie in [0, {self.num_nodes}) (got range "
                             f"[{p.min()}, {p.max()}])")
        p = p[:, p[0] != p[1]]
        object.__setattr__(self, "pairs", decode_pairs(np.unique(pair_codes(p, self.num_nodes)), self.num_nodes))
        if self.x is not None:
            x = np.asarray(self.x, dtype=np.float32)
            if x.shape[0] != self.num_nodes:
                raise ValueError(f"features have {x.shape[0]} rows for {self.num_nodes} nodes")
            object.__setattr__(self, "x", x)

    @classmethod
    def from_data(cls, data: Data, *, with_features: bool = True) -> PublishedGraph:
        """The graph of a PyG ``Data`` (both directions or one), with its features if any."""
        x = data.x.numpy() if with_features and getattr(data, "x", None) is not None else None
        ei = data.edge_index.numpy() if isinstance(data.edge_index, Tensor) else data.edge_index
        return cls(np.asarray(ei, dtype=np.int64), int(data.num_nodes), x)

    @property
    def num_edges(self) -> int:
        """|E'| (undirected)."""
        return int(self.pairs.shape[1])

    @cached_property
    def adjacency(self) -> sp.csr_matrix:
        """Symmetric binary CSR ``[N, N]`` float32."""
        return to_csr(self.pairs, self.num_nodes)

    @cached_property
    def codes(self) -> np.ndarray:
        """Sorted pair codes of the edges (see :func:`graphpriv.data.graph.pair_codes`)."""
        return np.sort(pair_codes(self.pairs, self.num_nodes))

    @cached_property
    def edge_index(self) -> Tensor:
        """``[2, 2|E'|]`` long, both directions (PyG convention)."""
        both = np.concatenate([self.pairs, self.pairs[::-1]], axis=1)
        return torch.from_numpy(np.ascontiguousarray(both))

    @cached_property
    def features(self) -> Tensor | None:
        """``[N, F]`` float tensor, or None."""
        return None if self.x is None else torch.from_numpy(self.x)

    def contains(self, pairs: np.ndarray) -> np.ndarray:
        """``[P]`` bool: which of the ``[2, P]`` pairs are edges of this graph."""
        return np.isin(pair_codes(np.asarray(pairs, dtype=np.int64), self.num_nodes), self.codes)

