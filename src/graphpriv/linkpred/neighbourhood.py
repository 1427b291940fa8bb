"""h-hop neighbourhood (enclosing) subgraphs, the target edge removed.

Source: SEAL (Zhang & Chen, NeurIPS 2018); DPLP (Ran et al.), Definition 1: the subgraph induced by
Gamma_h(u) union Gamma_h(v).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from graphpriv.linkpred.buffers import append, grow_to
from graphpriv.linkpred.paths import _check_links


@njit(cache=True)
def _ball(indptr, indices, source, h, bfs_id, visit, depth, queue, stamp, mark, members, count):  # pragma: no cover
    """Add Gamma_h(source) to the members of subgraph ``mark``."""
    head, tail = 0, 1
    queue[0] = source
    visit[source] = bfs_id
    depth[source] = 0
    while head < tail:
        x = queue[head]
        head += 1
        if depth[x] >= h:
            continue
        for p in range(indptr[x], indptr[x + 1]):
            y = indices[p]
            if visit[y] != bfs_id:
                visit[y] = bfs_id
                depth[y] = depth[x] + 1
                queue[tail] = y
                tail += 1
                if stamp[y] != mark:
                    stamp[y] = mark
                    members, count = append(members, count, y)
    return members, count


@njit(cache=True)
def _neighbourhood(indptr, indices, us, vs, h):  # pragma: no cover - compiled
    n = indptr.size - 1
    num_links = us.size
    stamp = np.full(n, -1, np.int64)
    visit = np.full(n, -1, np.int64)
    queue = np.empty(n, np.int64)
    depth = np.empty(n, np.int64)
    members = np.empty(1024, np.int64)
    node_ptr = np.zeros(num_links + 1, np.int64)
    out_a = np.empty(1024, np.int64)
    out_b = np.empty(1024, np.int64)
    edge_ptr = np.zeros(num_links + 1, np.int64)
    count = 0
    total = 0
    for i in range(num_links):
        u, v = us[i], vs[i]
        start = count
        # u and v first, in this order
        stamp[u] = i
        members, count = append(members, count, u)
        stamp[v] = i
        members, count = append(members, count, v)
        members, count = _ball(indptr, indices, u, h, 2 * i, visit, depth, queue, stamp, i, members, count)
        members, count = _ball(indptr, indices, v, h, 2 * i + 1, visit, depth, queue, stamp, i, members, count)
        node_ptr[i + 1] = count
        for j in range(start, count):
            a = members[j]
            for p in range(indptr[a], indptr[a + 1]):
                b = indices[p]
                if b > a and stamp[b] == i and not ((a == u and b == v) or (a == v and b == u)):
                    out_a = grow_to(out_a, total + 1)
                    out_b = grow_to(out_b, total + 1)
                    out_a[total] = a
                    out_b[total] = b
                    total += 1
        edge_ptr[i + 1] = total
    return node_ptr, members[:count], edge_ptr, out_a[:total], out_b[:total]


def neighbourhood_subgraphs(adj: sp.csr_matrix, links: np.ndarray, *, h: int):
    """Nodes and edges of the h-hop enclosing subgraphs of many links.

    Args:
        adj: Symmetric CSR adjacency ``[N, N]``. links: ``[2, L]`` target pairs. h: radius >= 1.

    Returns:
        ``(node_ptr [L+1], nodes [total_nodes], edge_ptr [L+1], edges [2, total_edges])`` with
        global ids; each link's node list starts with u, v; each undirected edge once (a < b),
        the target edge excluded.

    Raises:
        ValueError: h < 1 or links out of range.
    """
    if h < 1:
        raise ValueError(f"'h' must be >= 1 (got {h})")
    links = _check_links(links, adj.shape[0])
    node_ptr, nodes, edge_ptr, a, b = _neighbourhood(
        adj.indptr.astype(np.int64), adj.indices.astype(np.int64), links[0], links[1], h
    )
    return node_ptr, nodes, edge_ptr, np.stack([a, b])
