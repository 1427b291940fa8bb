"""Path subgraphs: every edge on a simple u–v path of length 2..k, the edge (u, v) excluded.

Source: DPLP (Ran, Ye, Hu, Huang, Xu, Fu, "Differentially Private Graph Neural Networks for Link
Prediction"), Sec. V-A, Definition 6. The reference implementation calls networkx
``all_simple_paths`` per link; graphpriv computes the same edge sets in compiled kernels, without
Python objects, in one of two ways.

For k = 5, 6, a depth-first search per link (:func:`_path_subgraph_edges`), pruned by BFS
distances to v (computed with u removed), marks the edges of every path that reaches v. A path's
last inner node y is one hop from v, and (y, v) is its only way on: the search looks that entry up
in y's sorted row instead of scanning the row.

For k <= 4 no path is enumerated. A simple u–v path of length at most 4 has at most three inner
nodes, and whether an edge lies on one is decided by neighbour counts (:func:`_short_path_edges`,
with N_u = N(u) \\ {v} and N_v = N(v) \\ {u}):

- length 2, u–a–v: a in N_u and in N_v;
- length 3, u–a–c–v: a in N_u, c in N(a) and in N_v (u, a, c, v are distinct by construction);
- length 4, u–a–b–c–v: a in N_u, b in N(a) outside {u, v}, c in N(b) and in N_v, and c != a. For a
  fixed (a, b) such a c exists exactly when |N(b) & N_v| - [a in N_v] > 0, and for a fixed (b, c)
  an a exists exactly when |N(b) & N_u| - [c in N_u] > 0.

The counts |N(b) & N_u| and |N(b) & N_v| take one pass over the rows of N_u's and N_v's nodes, so a
link costs O(the degrees of u's and v's neighbours) instead of the DFS's O(deg^3) on a dense graph
(15x faster on SEAL's Facebook at k = 4; ``benchmarks/bench_path_extraction.py`` times both). Both
give the same sorted edge sets (tested against each other and against networkx).
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
def _hit_codes(indptr, indices, hits, num_hits, marked, codes):  # pragma: no cover - compiled
    """Write the edge code min(a, b) * N + max(a, b) of each marked adjacency entry ``hits[j]``
    (entry (a, b)) to ``codes[j]``, and clear its mark."""
    n = indptr.size - 1
    for j in range(num_hits):
        q = hits[j]
        marked[q] = False
        a = np.searchsorted(indptr, q, side="right") - 1
        b = indices[q]
        codes[j] = min(a, b) * n + max(a, b)


@njit(cache=True)
def _append_edges(out_a, out_b, total, codes, n):  # pragma: no cover - compiled
    """Append one link's edges, its distinct ``codes`` in increasing order, to the output buffers
    at ``total``; returns ``(out_a, out_b, total)``."""
    codes = np.unique(codes)
    out_a = grow_to(out_a, total + codes.size)
    out_b = grow_to(out_b, total + codes.size)
    for j in range(codes.size):
        out_a[total + j] = codes[j] // n
        out_b[total + j] = codes[j] % n
    return out_a, out_b, total + codes.size


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
        _hit_codes(indptr, indices, hits, num_hits, marked, codes)
        out_a, out_b, total = _append_edges(out_a, out_b, total, codes, n)
        ptr[i + 1] = total
    return ptr, out_a[:total], out_b[:total]


@njit(cache=True)
def _mark(marked, q, hits, num_hits):  # pragma: no cover - compiled
    """Mark the directed adjacency entry ``q`` (once); returns ``(hits, num_hits)``."""
    if not marked[q]:
        marked[q] = True
        hits, num_hits = append(hits, num_hits, q)
    return hits, num_hits


@njit(cache=True)
def _short_path_edges(indptr, indices, us, vs, k):  # pragma: no cover - compiled
    """The same edge sets as :func:`_path_subgraph_edges` for 2 <= k <= 4, from neighbour counts
    (module docstring) instead of a path enumeration. The edges at u and at v are flagged by their
    other endpoint; the inner edges (never at u or v) by a directed adjacency entry, so an inner
    edge found from both ends is merged when the link's codes are made unique."""
    n = indptr.size - 1
    num_links = us.size
    in_u = np.zeros(n, np.bool_)  # N_u
    in_v = np.zeros(n, np.bool_)  # N_v
    at_u = np.zeros(n, np.bool_)  # (u, a) is on a path
    at_v = np.zeros(n, np.bool_)  # (c, v) is on a path
    count_u = np.zeros(n, np.int64)  # |N(b) & N_u|, for b outside {u, v} (k = 4)
    count_v = np.zeros(n, np.int64)  # |N(b) & N_v|
    marked = np.zeros(indices.size, np.bool_)
    hits = np.empty(64, np.int64)
    out_a = np.empty(1024, np.int64)
    out_b = np.empty(1024, np.int64)
    ptr = np.zeros(num_links + 1, np.int64)
    total = 0
    for i in range(num_links):
        u, v = us[i], vs[i]
        for p in range(indptr[u], indptr[u + 1]):
            in_u[indices[p]] = indices[p] != v
        for p in range(indptr[v], indptr[v + 1]):
            in_v[indices[p]] = indices[p] != u
        if k >= 4:
            for x0, other, count in ((u, v, count_u), (v, u, count_v)):
                for p in range(indptr[x0], indptr[x0 + 1]):
                    a = indices[p]
                    if a == other:
                        continue
                    for r in range(indptr[a], indptr[a + 1]):
                        b = indices[r]
                        if b != u and b != v:
                            count[b] += 1
        num_hits = 0
        for p in range(indptr[u], indptr[u + 1]):  # paths u-a-...: a in N_u
            a = indices[p]
            if a == v:
                continue
            if in_v[a]:  # u-a-v
                at_u[a] = True
                at_v[a] = True
            if k < 3:
                continue
            for r in range(indptr[a], indptr[a + 1]):
                b = indices[r]
                if b == u or b == v:
                    continue
                if in_v[b]:  # u-a-b-v
                    at_u[a] = True
                    hits, num_hits = _mark(marked, r, hits, num_hits)
                    at_v[b] = True
                elif k >= 4 and count_v[b] - (1 if in_v[a] else 0) > 0:  # u-a-b-c-v: some c in N_v, c != a
                    at_u[a] = True
                    hits, num_hits = _mark(marked, r, hits, num_hits)
        if k >= 4:
            for p in range(indptr[v], indptr[v + 1]):  # the last two edges of u-a-b-c-v: c in N_v
                c = indices[p]
                if c == u:
                    continue
                for r in range(indptr[c], indptr[c + 1]):
                    b = indices[r]
                    if b != u and b != v and count_u[b] - (1 if in_u[c] else 0) > 0:
                        hits, num_hits = _mark(marked, r, hits, num_hits)
                        at_v[c] = True
        # room for the inner edges and every edge at u or v; the flagged ones fill codes[:j]
        codes = np.empty(num_hits + indptr[u + 1] - indptr[u] + indptr[v + 1] - indptr[v], np.int64)
        _hit_codes(indptr, indices, hits, num_hits, marked, codes)
        j = num_hits
        for x0, at in ((u, at_u), (v, at_v)):
            for p in range(indptr[x0], indptr[x0 + 1]):
                y = indices[p]
                if at[y]:
                    codes[j] = min(x0, y) * n + max(x0, y)
                    j += 1
        for x0 in (u, v):  # reset the flags and counts for the next link
            for p in range(indptr[x0], indptr[x0 + 1]):
                a = indices[p]
                in_u[a] = in_v[a] = at_u[a] = at_v[a] = False
                if k >= 4:
                    for r in range(indptr[a], indptr[a + 1]):
                        count_u[indices[r]] = 0
                        count_v[indices[r]] = 0
        out_a, out_b, total = _append_edges(out_a, out_b, total, codes[:j], n)
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
    ptr, a, b = path_subgraph_edge_rows(adj, links, k=k)
    return ptr, np.stack([a, b])


def path_subgraph_edge_rows(adj: sp.csr_matrix, links: np.ndarray, *,
                            k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`path_subgraph_edges` with the edges' two rows as they come from the kernel,
    ``(ptr [L + 1], edge_a [total], edge_b [total])``, for a caller that joins many calls' rows
    into one array (no ``[2, total]`` copy of each). Same arguments and errors."""
    if not 2 <= k <= 6:
        raise ValueError(f"'k' must be in 2..6 (got {k}); longer paths make subgraphs and the "
                         "sensitivity bound explode")
    links = _check_links(links, adj.shape[0])
    if not adj.has_sorted_indices:  # the last edge of a path is found by binary search in its row
        adj = adj.sorted_indices()
    kernel = _short_path_edges if k <= 4 else _path_subgraph_edges
    return kernel(adj.indptr.astype(np.int64), adj.indices.astype(np.int64), links[0], links[1], k)


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
