"""Path subgraphs: every edge on a simple u–v path of length 2..k, the edge (u, v) excluded.

Source: DPLP (Ran, Ye, Hu, Huang, Xu, Fu, "Differentially Private Graph Neural Networks for Link
Prediction"), Sec. V-A, Definition 6. The reference implementation calls networkx
``all_simple_paths`` per link; this one runs a compiled depth-first search per link, pruned by BFS
distances to v (computed with u removed), and marks the edges of every path that reaches v — the
same edge sets, enumerated without Python objects. A path's last inner node y is one hop from v, and
(y, v) is its only way on: the search looks that entry up in y's sorted row instead of scanning
the row, which on the unprojected graphs that validation and test subgraphs come from (Facebook,
Yeast) was most of the work.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

import graphpriv.linkpred._numba_cache  # noqa: F401 (NUMBA_CACHE_DIR set before numba compiles)
from graphpriv.linkpred.buffers import append, grow_to

_INF = 1 << 40


@njit(cache=True)
def _position(indptr, indices, x, y):  # pragma: no cover - compiled
    """The CSR position of the entry (x, y), which exists (sorted rows: binary search)."""
    return indptr[x] + np.searchsorted(indices[indptr[x]:indptr[x + 1]], y)


@njit(cache=True)
def _path_subgraph_edges(indptr, indices, us, vs, k):  # pragma: no cover - compiled
    n = indptr.size - 1
    num_links = us.size
    dist = np.full(n, _INF, np.int64)
    queue = np.empty(n, np.int64)
    onpath = np.zeros(n, np.bool_)
    marked = np.zeros(indices.size, np.bool_)
    path = np.empty(k + 1, np.int64)
    cursor = np.empty(k + 1, np.int64)
    hits = np.empty(64, np.int64)
    out_a = np.empty(1024, np.int64)
    out_b = np.empty(1024, np.int64)
    ptr = np.zeros(num_links + 1, np.int64)
    total = 0
    for i in range(num_links):
        u, v = us[i], vs[i]
        head, tail = 0, 1
        dist[v] = 0
        queue[0] = v
        while head < tail:
            x = queue[head]
            head += 1
            if dist[x] >= k - 1:
                continue
            for p in range(indptr[x], indptr[x + 1]):
                y = indices[p]
                if y != u and dist[y] == _INF:
                    dist[y] = dist[x] + 1
                    queue[tail] = y
                    tail += 1
        num_hits = 0
        depth = 0
        path[0] = u
        onpath[u] = True
        cursor[0] = indptr[u]
        while depth >= 0:
            x = path[depth]
            if cursor[depth] < indptr[x + 1]:
                pos = cursor[depth]
                cursor[depth] += 1
                y = indices[pos]
                if onpath[y]:
                    continue
                if y == v:
                    if depth >= 1:
                        for j in range(depth + 1):
                            q = cursor[j] - 1
                            if not marked[q]:
                                marked[q] = True
                                hits, num_hits = append(hits, num_hits, q)
                    continue
                if dist[y] == _INF or depth + 1 + dist[y] > k:
                    continue
                if depth + 2 == k:  # y is a path's last inner node: dist[y] = 1, its one way on is (y, v)
                    last = _position(indptr, indices, y, v)
                    for j in range(depth + 2):
                        q = cursor[j] - 1 if j <= depth else last
                        if not marked[q]:
                            marked[q] = True
                            hits, num_hits = append(hits, num_hits, q)
                    continue
                depth += 1
                path[depth] = y
                onpath[y] = True
                cursor[depth] = indptr[y]
            else:
                onpath[x] = False
                depth -= 1
        for j in range(tail):
            dist[queue[j]] = _INF
        codes = np.empty(num_hits, np.int64)
        for j in range(num_hits):
            q = hits[j]
            marked[q] = False
            a = np.searchsorted(indptr, q, side="right") - 1
            b = indices[q]
            codes[j] = min(a, b) * n + max(a, b)
        codes = np.unique(codes)
        out_a = grow_to(out_a, total + codes.size)
        out_b = grow_to(out_b, total + codes.size)
        for j in range(codes.size):
            out_a[total + j] = codes[j] // n
            out_b[total + j] = codes[j] % n
        total += codes.size
        ptr[i + 1] = total
    return ptr, out_a[:total], out_b[:total]


def path_subgraph_edges(adj: sp.csr_matrix, links: np.ndarray, *, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Edge sets of the k-hop path subgraphs of many links.

    Args:
        adj: Symmetric CSR adjacency ``[N, N]`` of the graph subgraphs are taken from (rows
            given unsorted are searched in a sorted copy; ``adj`` is not changed).
        links: Target pairs ``[2, L]`` (positives or negatives).
        k: Maximum path length, 2 <= k <= 6.

    Returns:
        ``(ptr [L + 1], edges [2, total])``: link i's edges are ``edges[:, ptr[i]:ptr[i+1]]``, each
        undirected edge once with row 0 < row 1 (global ids), sorted.

    Raises:
        ValueError: k outside 2..6 or links out of range.
    """
    if not 2 <= k <= 6:
        raise ValueError(f"'k' must be in 2..6 (got {k}); longer paths make subgraphs and the "
                         "sensitivity bound explode")
    links = _check_links(links, adj.shape[0])
    if not adj.has_sorted_indices:  # the last edge of a path is found by binary search in its row
        adj = adj.sorted_indices()
    ptr, a, b = _path_subgraph_edges(adj.indptr.astype(np.int64), adj.indices.astype(np.int64),
                                     links[0], links[1], k)
    return ptr, np.stack([a, b])


def _check_links(links: np.ndarray, num_nodes: int) -> np.ndarray:
    links = np.ascontiguousarray(np.asarray(links, dtype=np.int64).reshape(2, -1))
    if links.size and (links.min() < 0 or links.max() >= num_nodes):
        raise ValueError(f"link endpoints must lie in [0, {num_nodes})")
    if np.any(links[0] == links[1]):
        raise ValueError("a target link cannot be a self-loop")
    return links


@njit(cache=True)
def _nodes_from_edges(ptr, a, b, us, vs, num_global):  # pragma: no cover - compiled
    stamp = np.full(num_global, -1, np.int64)
    nodes = np.empty(a.size * 2 + 2 * us.size, np.int64)
    node_ptr = np.zeros(us.size + 1, np.int64)
    count = 0
    for i in range(us.size):
        stamp[us[i]] = i
        stamp[vs[i]] = i
        nodes[count] = us[i]
        nodes[count + 1] = vs[i]
        count += 2
        for e in range(ptr[i], ptr[i + 1]):
            for x in (a[e], b[e]):
                if stamp[x] != i:
                    stamp[x] = i
                    nodes[count] = x
                    count += 1
        node_ptr[i + 1] = count
    return node_ptr, nodes[:count]


def path_subgraph_nodes(ptr: np.ndarray, edges: np.ndarray, links: np.ndarray, num_nodes: int):
    """Node lists of path subgraphs: u, v, then the other endpoints of their edges.

    Returns:
        ``(node_ptr [L + 1], nodes [total])`` global ids.
    """
    links = np.asarray(links, dtype=np.int64)
    return _nodes_from_edges(ptr, edges[0], edges[1], links[0], links[1], num_nodes)
