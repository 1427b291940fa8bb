"""Each subgraph's own adjacency, node by node, in compiled kernels: the degrees and the sorted
rows of A + I that :class:`~graphpriv.linkpred.subgraphs.SubgraphSet` computes once per set.

Both read the set's flat arrays (``node_ptr [L+1]``, ``edge_ptr [L+1]``, ``local_edges [2, E]``
with each undirected edge once) and write straight into their outputs, one pass over the edges,
where the numpy route (``np.bincount`` of repeated offsets; a COO -> CSR conversion of 2E + T
entries and a sort of each row) builds several temporaries of the edges' size. On DPLP-PS's
evaluation sets (tens of millions of edges on Facebook at k = 4) those temporaries cost most of
the work. The results are the same integers as the numpy route's (tested against it).
"""

from __future__ import annotations

import numpy as np
from numba import njit

import graphpriv.linkpred._numba_cache  # noqa: F401 (NUMBA_CACHE_DIR set before numba compiles)

__all__ = ["local_adjacency_rows", "local_degrees"]


@njit(cache=True)
def _degrees(node_ptr, edge_ptr, local_a, local_b):  # pragma: no cover - compiled
    degrees = np.zeros(node_ptr[-1], np.int64)
    for i in range(node_ptr.size - 1):
        base = node_ptr[i]
        for e in range(edge_ptr[i], edge_ptr[i + 1]):
            degrees[base + local_a[e]] += 1
            degrees[base + local_b[e]] += 1
    return degrees


@njit(cache=True)
def _sort_small(values, start, stop):  # pragma: no cover - compiled
    for p in range(start + 1, stop):  # insertion sort: most rows are a few entries long
        x = values[p]
        q = p - 1
        while q >= start and values[q] > x:
            values[q + 1] = values[q]
            q -= 1
        values[q + 1] = x


@njit(cache=True)
def _rows(node_ptr, edge_ptr, local_a, local_b, degrees):  # pragma: no cover - compiled
    total = node_ptr[-1]
    row_ptr = np.empty(total + 1, np.int64)
    row_ptr[0] = 0
    for t in range(total):
        row_ptr[t + 1] = row_ptr[t] + degrees[t] + 1
    col = np.empty(row_ptr[total], np.int32)
    fill = row_ptr[:total].copy()
    for i in range(node_ptr.size - 1):
        base = node_ptr[i]
        for j in range(node_ptr[i + 1] - base):
            col[fill[base + j]] = j
            fill[base + j] += 1
        for e in range(edge_ptr[i], edge_ptr[i + 1]):
            a, b = local_a[e], local_b[e]
            col[fill[base + a]] = b
            fill[base + a] += 1
            col[fill[base + b]] = a
            fill[base + b] += 1
    for t in range(total):
        start, stop = row_ptr[t], row_ptr[t + 1]
        if stop - start <= 32:
            _sort_small(col, start, stop)
        else:
            col[start:stop].sort()
    return row_ptr, col


def _checked(node_ptr: np.ndarray, edge_ptr: np.ndarray, local_edges: np.ndarray) -> tuple[np.ndarray, ...]:
    """The kernels' inputs as int64 arrays, their shapes checked (the kernels do not check bounds)."""
    node_ptr = np.asarray(node_ptr).astype(np.int64, copy=False)
    edge_ptr = np.asarray(edge_ptr).astype(np.int64, copy=False)
    local_edges = np.asarray(local_edges)
    if node_ptr.ndim != 1 or node_ptr.shape != edge_ptr.shape or node_ptr.size == 0:
        raise ValueError(f"node_ptr and edge_ptr must be [L + 1] pointers (got {node_ptr.shape}, {edge_ptr.shape})")
    if local_edges.shape != (2, int(edge_ptr[-1])):
        raise ValueError(f"local_edges must be [2, edge_ptr[-1]] = [2, {int(edge_ptr[-1])}] (got {local_edges.shape})")
    return (node_ptr, edge_ptr, np.ascontiguousarray(local_edges[0], dtype=np.int64),
            np.ascontiguousarray(local_edges[1], dtype=np.int64))


def local_degrees(node_ptr: np.ndarray, edge_ptr: np.ndarray, local_edges: np.ndarray) -> np.ndarray:
    """Each node's neighbour count inside its own subgraph.

    Args:
        node_ptr: ``[L + 1]`` int64; subgraph i's nodes are the flat positions
            ``node_ptr[i]:node_ptr[i+1]`` (T = ``node_ptr[-1]`` in all). edge_ptr: ``[L + 1]`` int64.
        local_edges: ``[2, E]`` int64 local ids (each undirected edge once, no self-loop).

    Returns:
        ``[T]`` int64 degrees.

    Raises:
        ValueError: pointers of different shapes, or ``local_edges`` not ``[2, edge_ptr[-1]]``.
    """
    return _degrees(*_checked(node_ptr, edge_ptr, local_edges))


def local_adjacency_rows(node_ptr: np.ndarray, edge_ptr: np.ndarray, local_edges: np.ndarray,
                         degrees: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each node's row of A + I inside its own subgraph: its neighbours' local ids and its own, in
    increasing order.

    Args:
        node_ptr, edge_ptr, local_edges: as :func:`local_degrees` (each undirected edge once, no
            self-loop, no edge twice: a repeated edge would appear twice in its rows).
        degrees: ``[T]`` int64, :func:`local_degrees` of the same set.

    Returns:
        ``(row_ptr [T + 1] int64, col [2E + T] int32)``: node t's row is
        ``col[row_ptr[t]:row_ptr[t+1]]``, rows in the nodes' flat order (so subgraph i's rows are
        contiguous, from ``row_ptr[node_ptr[i]]``).

    Raises:
        ValueError: as :func:`local_degrees`, or ``degrees`` not ``[node_ptr[-1]]``.
    """
    node_ptr, edge_ptr, local_a, local_b = _checked(node_ptr, edge_ptr, local_edges)
    degrees = np.asarray(degrees).astype(np.int64, copy=False)
    if degrees.shape != (int(node_ptr[-1]),):
        raise ValueError(f"degrees must be [node_ptr[-1]] = [{int(node_ptr[-1])}] (got {degrees.shape})")
    return _rows(node_ptr, edge_ptr, local_a, local_b, degrees)
