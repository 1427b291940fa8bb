"""The path-subgraph kernel as it was before its last step became a binary search (a benchmark's
reference, timed in the same process as graphpriv's; not part of the package).

Each path's last inner node y scanned its whole adjacency row for v; today's kernel
(:mod:`graphpriv.linkpred.paths`) looks up the one entry (y, v) instead. The edge sets are the same.
"""

from __future__ import annotations

import numpy as np
from numba import njit

import graphpriv.linkpred._numba_cache  # noqa: F401 (NUMBA_CACHE_DIR set before numba compiles)
from graphpriv.linkpred.buffers import append, grow_to

_INF = 1 << 40


@njit(cache=True)
def former_path_subgraph_edges(indptr, indices, us, vs, k):  # pragma: no cover - compiled
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
                if dist[y] != _INF and depth + 1 + dist[y] <= k:
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
