"""Cleaning raw graphs into graphpriv's one graph type, a PyG ``Data``, and sparse views of it."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import torch
from torch_geometric.data import Data

from graphpriv.errors import DatasetError


class RawGraph(NamedTuple):
    """What a reader returns before cleaning.

    Attributes:
        edge_index: ``[2, E]`` int64 node ids (any direction, duplicates and self-loops allowed).
        num_nodes: Declared node count, or ``None`` to take ``max id + 1``.
        x: Node features ``[N, F]`` or ``None``. y: Labels ``[N]`` or ``None``.
        node_names: Original ids ``[N]`` (defaults to ``0..N-1``).
    """

    edge_index: np.ndarray
    num_nodes: int | None = None
    x: np.ndarray | None = None
    y: np.ndarray | None = None
    node_names: np.ndarray | None = None


def clean_graph(raw: RawGraph, *, name: str) -> Data:
    """Make a raw graph undirected and simple: symmetrize, drop self-loops and duplicate edges.

    Node ids must already be ``0..N-1`` (readers relabel arbitrary ids and keep the originals in
    ``node_names``); isolated nodes are kept.

    Args:
        raw: The reader's output. name: Dataset id or file name, used in error messages.

    Returns:
        ``Data`` with ``edge_index [2, 2|E|]`` (both directions, sorted), ``num_nodes``, optional
        ``x [N, F]`` float and ``y [N]`` long, ``node_names`` (numpy array) and ``name``.

    Raises:
        DatasetError: ids out of range, a graph with no edges, or features with NaN.
    """
    ei = np.asarray(raw.edge_index, dtype=np.int64).reshape(2, -1)
    num_nodes = int(raw.num_nodes) if raw.num_nodes is not None else int(ei.max(initial=-1)) + 1
    if ei.size and (ei.min() < 0 or ei.max() >= num_nodes):
        bad = ei[(ei < 0) | (ei >= num_nodes)][0]
        raise DatasetError(
            f"{name}: node id {bad} is out of range [0, {num_nodes}); fix the file's ids or its "
            "declared node count"
        )
    ei = ei[:, ei[0] != ei[1]]
    if ei.shape[1] == 0:
        raise DatasetError(f"{name}: the graph has no edges (after dropping self-loops); "
                           "graphpriv needs at least one edge")
    pairs = np.unique(np.sort(ei, axis=0), axis=1)
    both = np.concatenate([pairs, pairs[::-1]], axis=1)
    order = np.lexsort((both[1], both[0]))
    data = Data(edge_index=torch.from_numpy(both[:, order].copy()), num_nodes=num_nodes)
    if raw.x is not None:
        x = np.asarray(raw.x, dtype=np.float32)
        if np.isnan(x).any():
            raise DatasetError(f"{name}: node features contain NaN; impute or drop them first")
        data.x = torch.from_numpy(x)
    if raw.y is not None:
        data.y = torch.as_tensor(np.asarray(raw.y), dtype=torch.long)
    names = raw.node_names if raw.node_names is not None else np.arange(num_nodes)
    data.node_names = np.asarray(names)
    data.name = name
    return data


def undirected_pairs(edge_index: torch.Tensor | np.ndarray) -> np.ndarray:
    """Each undirected edge once, as ``[2, E]`` with row 0 < row 1 (int64 numpy)."""
    ei = np.asarray(edge_index, dtype=np.int64)
    return ei[:, ei[0] < ei[1]]


def to_csr(edge_index: torch.Tensor | np.ndarray, num_nodes: int) -> sp.csr_matrix:
    """Symmetric binary CSR adjacency ``[N, N]`` from pairs given in either or both directions."""
    ei = np.asarray(edge_index, dtype=np.int64)
    rows = np.concatenate([ei[0], ei[1]])
    cols = np.concatenate([ei[1], ei[0]])
    adj = sp.csr_matrix((np.ones(rows.size, dtype=np.float32), (rows, cols)), shape=(num_nodes, num_nodes))
    adj.data[:] = 1.0
    adj.sort_indices()
    return adj


def num_undirected_edges(data: Data) -> int:
    """|E| counting each undirected edge once."""
    return int(data.edge_index.size(1) // 2)


def pair_codes(edge_index: np.ndarray, num_nodes: int) -> np.ndarray:
    """Index of each pair {u, v} (u != v) in the row-major strict upper triangle, ``[E]`` int64."""
    u, v = np.minimum(edge_index[0], edge_index[1]), np.maximum(edge_index[0], edge_index[1])
    return u * (2 * num_nodes - u - 1) // 2 + (v - u - 1)


def decode_pairs(codes: np.ndarray, num_nodes: int) -> np.ndarray:
    """Inverse of :func:`pair_codes`: ``[E]`` codes -> ``[2, E]`` pairs with u < v."""
    n = num_nodes
    codes = np.asarray(codes, dtype=np.int64)
    u = (n - 2 - np.floor(np.sqrt(-8.0 * codes + 4 * n * (n - 1) - 7) / 2.0 - 0.5)).astype(np.int64)
    u = np.clip(u, 0, max(n - 2, 0))

    def start(r: np.ndarray) -> np.ndarray:
        return r * (2 * n - r - 1) // 2

    for _ in range(2):  # repair floating-point rounding at row boundaries
        u = np.where(start(u) > codes, u - 1, u)
        u = np.where(start(u + 1) <= codes, u + 1, u)
    return np.stack([u, codes - start(u) + u + 1])


def check_pairs(pairs: np.ndarray, num_nodes: int) -> np.ndarray:
    """Validate ``[2, P]`` node pairs against N; returns them as int64.

    Raises:
        ValueError: wrong shape or ids out of ``[0, num_nodes)``.
    """
    pairs = np.asarray(pairs, dtype=np.int64)
    if pairs.ndim != 2 or pairs.shape[0] != 2:
        raise ValueError(f"pairs must have shape [2, P], got {pairs.shape}")
    if pairs.size and (pairs.min() < 0 or pairs.max() >= num_nodes):
        raise ValueError(f"pair ids must lie in [0, {num_nodes}) (got range [{pairs.min()}, {pairs.max()}])")
    return pairs
