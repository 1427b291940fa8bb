"""Double-radius node labelling (SEAL; Zhang & Chen, NeurIPS 2018, Eq. 5 of the SEAL paper).

z = 1 + min(du, dv) + (d // 2) * ((d // 2) + d % 2 - 1), d = du + dv, where du is the distance
to u with v removed and dv the distance to v with u removed (both inside the subgraph);
z(u) = z(v) = 1; a node that cannot reach u or v gets 0.
"""

from __future__ import annotations

import numpy as np
from numba import njit

import graphpriv.linkpred._numba_cache  # noqa: F401 (NUMBA_CACHE_DIR set before numba compiles)
from graphpriv.linkpred.buffers import grow_to


def drnl_label(du: int, dv: int) -> int:
    """DRNL of one node from its two distances (``-1`` = unreachable); the scalar definition."""
    if du < 0 or dv < 0:
        return 0
    d = du + dv
    return 1 + min(du, dv) + (d // 2) * ((d // 2) + d % 2 - 1)


def max_drnl_label(max_distance_sum: int) -> int:
    """Largest DRNL label reachable when du + dv <= ``max_distance_sum``."""
    return max(drnl_label(a, max_distance_sum - a) for a in range(1, max_distance_sum))


@njit(cache=True)
def drnl_of(du, dv):  # pragma: no cover - compiled
    """:func:`drnl_label` of a node that reaches both targets (``du, dv >= 1``), compiled."""
    d = du + dv
    return 1 + min(du, dv) + (d // 2) * ((d // 2) + d % 2 - 1)


@njit(cache=True)
def _bfs_local(indptr, indices, source, banned, dist, queue):  # pragma: no cover - compiled
    dist[:] = -1
    dist[source] = 0
    head, tail = 0, 1
    queue[0] = source
    while head < tail:
        x = queue[head]
        head += 1
        for p in range(indptr[x], indptr[x + 1]):
            y = indices[p]
            if y != banned and dist[y] < 0:
                dist[y] = dist[x] + 1
                queue[tail] = y
                tail += 1


@njit(cache=True)
def localize_and_label(node_ptr, nodes, edge_ptr, edge_a, edge_b, num_global):  # pragma: no cover
    """Relabel each subgraph's global ids to 0..n-1 (u = 0, v = 1) and compute DRNL labels.

    Returns ``(local_edges [2, E], z [total_nodes])``, aligned with ``edge_a/edge_b`` and ``nodes``
    (one array for both rows: the set keeps it as it is, without stacking a copy).
    """
    local = np.full(num_global, -1, np.int64)
    local_edges = np.empty((2, edge_a.size), np.int64)
    local_a = local_edges[0]
    local_b = local_edges[1]
    z = np.zeros(nodes.size, np.int64)
    deg = np.empty(0, np.int64)
    indptr = np.empty(0, np.int64)
    adj = np.empty(0, np.int64)
    du = np.empty(0, np.int64)
    dv = np.empty(0, np.int64)
    queue = np.empty(0, np.int64)
    for i in range(node_ptr.size - 1):
        n0, n1 = node_ptr[i], node_ptr[i + 1]
        e0, e1 = edge_ptr[i], edge_ptr[i + 1]
        size = n1 - n0
        for j in range(size):
            local[nodes[n0 + j]] = j
        deg = grow_to(deg, size)
        indptr = grow_to(indptr, size + 1)
        du = grow_to(du, size)
        dv = grow_to(dv, size)
        queue = grow_to(queue, size)
        adj = grow_to(adj, 2 * (e1 - e0))
        deg[:size] = 0
        for e in range(e0, e1):
            local_a[e] = local[edge_a[e]]
            local_b[e] = local[edge_b[e]]
            deg[local_a[e]] += 1
            deg[local_b[e]] += 1
        indptr[0] = 0
        for j in range(size):
            indptr[j + 1] = indptr[j] + deg[j]
        fill = indptr[:size].copy()
        for e in range(e0, e1):
            a, b = local_a[e], local_b[e]
            adj[fill[a]] = b
            fill[a] += 1
            adj[fill[b]] = a
            fill[b] += 1
        _bfs_local(indptr, adj, 0, 1, du[:size], queue)
        _bfs_local(indptr, adj, 1, 0, dv[:size], queue)
        for j in range(size):
            a, b = du[j], dv[j]
            if j < 2:
                z[n0 + j] = 1
            elif a < 0 or b < 0:
                z[n0 + j] = 0
            else:
                z[n0 + j] = drnl_of(a, b)
        for j in range(size):
            local[nodes[n0 + j]] = -1
    return local_edges, z
