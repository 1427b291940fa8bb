"""The released graph: what a graph-publishing or graph-synthesis method hands out.

A :class:`PublishedGraph` is G' = (A', X): undirected edges over the original graph's node ids
(isolated nodes kept) and, when the publisher releases them, the node features. It is what every
attack and every utility model takes, what ``graphpriv run ... --out`` writes, and what
:meth:`~graphpriv.methods.publishing.GraphPublisher.publish` returns as a PyG ``Data``
(:meth:`PublishedGraph.to_data`, :meth:`PublishedGraph.from_data`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor
from torch_geometric.data import Data

from graphpriv.data.graph import decode_pairs, pair_codes, to_csr
from graphpriv.errors import DatasetError

__all__ = ["PublishedGraph"]


@dataclass(frozen=True, eq=False)
class PublishedGraph:
    """A released graph G' = (A', X) as an attacker sees it.

    Args:
        pairs: ``[2, E']`` integer edges in either direction (each undirected edge once or twice);
            self-loops are dropped and duplicates merged.
        num_nodes: N (the node ids are the original graph's; isolated nodes are kept).
        x: ``[N, F]`` node features released with the graph, or None (stored as float32).

    Attributes:
        pairs: ``[2, E']`` int64 undirected edges, each once with u < v, sorted by pair code
            (row-major upper triangle) and distinct.
        num_nodes: N. x: ``[N, F]`` float32 numpy array, or None.

    Raises:
        DatasetError: ids out of ``[0, N)``, or features with a row count other than N (on
            construction; a ``ValueError``).
    """

    pairs: np.ndarray
    num_nodes: int
    x: np.ndarray | None = field(default=None)

    def __post_init__(self) -> None:
        p = np.asarray(self.pairs, dtype=np.int64).reshape(2, -1)
        if p.size and (p.min() < 0 or p.max() >= self.num_nodes):
            raise DatasetError(f"published edge ids must lie in [0, {self.num_nodes}) (got range "
                               f"[{p.min()}, {p.max()}])")
        p = p[:, p[0] != p[1]]
        object.__setattr__(self, "pairs", decode_pairs(np.unique(pair_codes(p, self.num_nodes)), self.num_nodes))
        if self.x is not None:
            x = np.asarray(self.x, dtype=np.float32)
            if x.ndim != 2 or x.shape[0] != self.num_nodes:
                raise DatasetError(f"features have {x.shape[0] if x.ndim else 0} rows for {self.num_nodes} nodes "
                                   "(expected [N, F])")
            object.__setattr__(self, "x", x)

    @classmethod
    def from_data(cls, data: Data, *, with_features: bool = True) -> PublishedGraph:
        """The graph of a PyG ``Data``.

        Args:
            data: ``edge_index [2, E]`` (both directions or one), ``num_nodes`` N, optional ``x
                [N, F]`` (e.g. what :meth:`to_data` or a publisher's ``publish`` returned).
            with_features: keep ``data.x`` as the released features (when there is one).

        Returns:
            :class:`PublishedGraph` (the inverse of :meth:`to_data`); it shares no memory with
            ``data``.

        Raises:
            DatasetError: not a ``Data``, no ``edge_index`` or ``num_nodes``, ids out of range, or
                features that are not ``[N, F]``.
        """
        if not isinstance(data, Data) or getattr(data, "edge_index", None) is None or data.num_nodes is None:
            raise DatasetError(f"expected a torch_geometric.data.Data with edge_index and num_nodes, got "
                               f"{type(data).__name__}; build Data(edge_index=..., num_nodes=N)")
        x = getattr(data, "x", None) if with_features else None
        if x is not None:  # the graph owns its features (a copy), as to_data's are copies
            x = np.array(x.detach().cpu().numpy() if isinstance(x, Tensor) else x, dtype=np.float32)
        ei = data.edge_index
        ei = ei.detach().cpu().numpy() if isinstance(ei, Tensor) else ei
        return cls(np.asarray(ei, dtype=np.int64), int(data.num_nodes), x)

    def to_data(self) -> Data:
        """The release as a PyG ``Data``.

        Returns:
            ``Data`` with ``edge_index [2, 2|E'|]`` int64 (every edge in both directions, the
            :attr:`edge_index` order: the pairs u < v, then the same pairs reversed),
            ``num_nodes`` N and, when features are released, ``x [N, F]`` float32 (copies: changing
            them leaves this graph as it is).
        """
        data = Data(edge_index=self.edge_index.clone(), num_nodes=self.num_nodes)
        if self.x is not None:
            data.x = torch.from_numpy(self.x.copy())
        return data

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

    def equals(self, other: PublishedGraph) -> bool:
        """Whether ``other`` has the same node count, edges and released features (bit for bit)."""
        if self.num_nodes != other.num_nodes or not np.array_equal(self.pairs, other.pairs):
            return False
        if self.x is None or other.x is None:
            return self.x is None and other.x is None
        return self.x.shape == other.x.shape and bool(np.array_equal(self.x, other.x, equal_nan=True))
