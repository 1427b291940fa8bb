"""Structural statistics of undirected graphs and the errors PrivDPR is evaluated with.

Source: Zhang, Hu, Ye, Xu, "PrivDPR: Synthetic Graph Publishing with Deep PageRank under
Differential Privacy" (KDD 2025), Sec. 6 "Graph Utility Metrics" and App. E (the eight metrics
TC, WC, CC, REDE, CPL, diameter, LCC, degree distribution).

Every function takes a symmetric ``[N, N]`` scipy sparse adjacency: any stored nonzero off the
diagonal is an edge, the diagonal (self-loops) and the values are ignored. Counts are exact. Path
statistics (CPL, diameter) are exact by breadth-first search from every node of the largest
connected component when it has at most ``exact_max_nodes`` nodes (50,000 by default); beyond,
from ``num_sources`` sources drawn uniformly from it (seeded): the CPL is then an unbiased
estimate and the diameter a lower bound (the largest eccentricity among the sources); the result
says which (``GraphStats.path_sources``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy import stats
from scipy.sparse import csgraph

import graphpriv.linkpred._numba_cache  # noqa: F401 (NUMBA_CACHE_DIR set before numba compiles)

__all__ = [
    "GraphStats",
    "bfs_distances",
    "characteristic_path_length",
    "claw_count",
    "degree_ks_distance",
    "graph_stats",
    "largest_component",
    "node_triangle_counts",
    "path_statistics",
    "relative_edge_distribution_entropy",
    "structural_errors",
    "triangle_count",
    "wedge_count",
]


def _simple(adj: sp.spmatrix) -> sp.csr_matrix:
    """Binary symmetric CSR without self-loops, sorted indices, int64 index arrays.

    Raises:
        ValueError: not square, or not symmetric.
    """
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1]:
        raise ValueError(f"the adjacency must be square (got shape {adj.shape})")
    a = sp.csr_matrix(adj, dtype=np.float64, copy=True)
    a.setdiag(0)
    a.eliminate_zeros()
    a.data[:] = 1.0
    if (a != a.T).nnz:
        raise ValueError("the adjacency is not symmetric: give an undirected graph (e.g. A.maximum(A.T))")
    a.sort_indices()
    a.indptr = a.indptr.astype(np.int64)
    a.indices = a.indices.astype(np.int64)
    return a


def _degrees(a: sp.csr_matrix) -> np.ndarray:
    return np.diff(a.indptr).astype(np.int64)


def wedge_count(adj: sp.spmatrix) -> int:
    """Wedges (paths of length 2, open or closed): sum over nodes of C(d, 2)."""
    d = _degrees(_simple(adj))
    return int((d * (d - 1) // 2).sum())


def claw_count(adj: sp.spmatrix) -> int:
    """Claws (3-stars K_{1,3}, not necessarily induced): sum over nodes of C(d, 3)."""
    d = _degrees(_simple(adj))
    return int((d * (d - 1) * (d - 2) // 6).sum())


@njit(cache=True)
def _node_triangles(indptr, indices, rank):  # pragma: no cover - compiled
    """Triangles through each node (forward algorithm: edges oriented towards the higher rank,
    each triangle found once at its lowest-ranked node, credited to its three nodes); O(E^1.5)."""
    n = indptr.size - 1
    mark = np.full(n, -1, dtype=np.int64)
    tri = np.zeros(n, dtype=np.int64)
    for u in range(n):
        for p in range(indptr[u], indptr[u + 1]):
            w = indices[p]
            if rank[w] > rank[u]:
                mark[w] = u
        for p in range(indptr[u], indptr[u + 1]):
            v = indices[p]
            if rank[v] <= rank[u]:
                continue
            for q in range(indptr[v], indptr[v + 1]):
                w = indices[q]
                if rank[w] > rank[v] and mark[w] == u:
                    tri[u] += 1
                    tri[v] += 1
                    tri[w] += 1
    return tri


def node_triangle_counts(a: sp.csr_matrix) -> np.ndarray:
    """``[N]`` int64: the triangles through each node of a binary symmetric CSR without self-loops
    (as :func:`_simple` returns), by the degree-ordered forward algorithm (Schank & Wagner, 2005);
    their sum is three times the triangle count."""
    d = _degrees(a)
    rank = np.empty(d.size, dtype=np.int64)
    rank[np.lexsort((np.arange(d.size), d))] = np.arange(d.size)
    return _node_triangles(a.indptr, a.indices, rank)


def triangle_count(adj: sp.spmatrix) -> int:
    """Triangles (each counted once), exact, by the degree-ordered forward algorithm
    (Schank & Wagner, 2005): no ``A @ A`` is formed, memory O(N + E)."""
    a = _simple(adj)
    return _triangles(a)


def _triangles(a: sp.csr_matrix) -> int:
    return int(node_triangle_counts(a).sum()) // 3


def relative_edge_distribution_entropy(adj: sp.spmatrix) -> float:
    """REDE = (1 / ln N) sum_v -(d_v / 2|E|) ln(d_v / 2|E|), in [0, 1] (1: all degrees equal);
    nodes of degree 0 contribute 0. Raises ValueError for N < 2 or no edge."""
    return _rede(_simple(adj))


def _rede(a: sp.csr_matrix) -> float:
    d = _degrees(a).astype(np.float64)
    if d.size < 2 or d.sum() == 0:
        raise ValueError("REDE needs at least 2 nodes and one edge")
    p = d[d > 0] / d.sum()
    return float(-(p * np.log(p)).sum() / np.log(d.size))


def largest_component(adj: sp.spmatrix) -> np.ndarray:
    """Node ids (sorted, ``[n_lcc]`` int64) of the largest connected component (ties: the one
    with the smallest node id)."""
    return _lcc(_simple(adj))


def _lcc(a: sp.csr_matrix) -> np.ndarray:
    _, labels = csgraph.connected_components(a, directed=False)
    return np.flatnonzero(labels == np.argmax(np.bincount(labels))).astype(np.int64)


@njit(cache=True)
def bfs_distances(indptr, indices, sources):  # pragma: no cover - compiled
    """BFS from each source of a CSR graph: (distance sums, nodes reached incl. the source,
    eccentricities within the component, a farthest node, histogram of all distances found incl.
    the 0s, length N); the one BFS kernel of the graph statistics and the PGB queries."""
    n = indptr.size - 1
    dist = np.full(n, -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    hist = np.zeros(n, dtype=np.int64)
    sums = np.zeros(sources.size, dtype=np.int64)
    reach = np.zeros(sources.size, dtype=np.int64)
    ecc = np.zeros(sources.size, dtype=np.int64)
    far = np.zeros(sources.size, dtype=np.int64)
    for i in range(sources.size):
        s = sources[i]
        head, tail = 0, 1
        queue[0] = s
        dist[s] = 0
        while head < tail:
            x = queue[head]
            head += 1
            dx = dist[x] + 1
            for p in range(indptr[x], indptr[x + 1]):
                y = indices[p]
                if dist[y] < 0:
                    dist[y] = dx
                    queue[tail] = y
                    tail += 1
        last = queue[tail - 1]
        ecc[i] = dist[last]
        far[i] = last
        reach[i] = tail
        total = 0
        for j in range(tail):
            d = dist[queue[j]]
            total += d
            hist[d] += 1
            dist[queue[j]] = -1
        sums[i] = total
    return sums, reach, ecc, far, hist


def path_statistics(adj: sp.spmatrix, *, exact_max_nodes: int = 50_000, num_sources: int = 2_000,
                    seed: int = 0) -> tuple[float, int, int]:
    """Characteristic path length and diameter of the largest connected component.

    CPL = mean shortest-path length over ordered pairs of distinct nodes of the LCC (networkx's
    ``average_shortest_path_length`` on it); diameter = the largest eccentricity there.

    Args:
        adj: ``[N, N]`` symmetric adjacency. exact_max_nodes: BFS from every LCC node up to this
            size. num_sources, seed: sampled sources beyond it (uniform without replacement).

    Returns:
        ``(cpl, diameter, sources)``; ``sources`` is the number of BFS sources (= LCC size when
        exact). An LCC of one node gives (0.0, 0, 1).
    """
    return _path_statistics(_simple(adj), exact_max_nodes=exact_max_nodes, num_sources=num_sources, seed=seed)


def _path_statistics(a: sp.csr_matrix, *, exact_max_nodes: int = 50_000, num_sources: int = 2_000,
                     seed: int = 0) -> tuple[float, int, int]:
    nodes = _lcc(a)
    sub = a[nodes][:, nodes].tocsr()
    sub.sort_indices()
    n = nodes.size
    if n < 2:
        return 0.0, 0, 1
    if n <= exact_max_nodes:
        sources = np.arange(n, dtype=np.int64)
    else:
        sources = np.sort(np.random.default_rng([seed, 113]).choice(n, min(num_sources, n), replace=False))
    sums, _, ecc, _, _ = bfs_distances(sub.indptr.astype(np.int64), sub.indices.astype(np.int64),
                                       sources.astype(np.int64))
    return float(sums.sum() / (sources.size * (n - 1))), int(ecc.max()), int(sources.size)


def characteristic_path_length(adj: sp.spmatrix, **kwargs) -> float:
    """Mean shortest-path length in the LCC (see :func:`path_statistics` for the options)."""
    return path_statistics(adj, **kwargs)[0]


def degree_ks_distance(adj_a: sp.spmatrix, adj_b: sp.spmatrix) -> float:
    """Kolmogorov–Smirnov distance sup_x |F_a(x) - F_b(x)| between the two graphs' empirical
    degree distributions (each over its own nodes), in [0, 1]."""
    return float(stats.ks_2samp(_degrees(_simple(adj_a)), _degrees(_simple(adj_b))).statistic)


@dataclass(frozen=True)
class GraphStats:
    """The seven scalar statistics of PrivDPR's evaluation (the eighth, the degree distribution,
    is compared with :func:`degree_ks_distance`).

    Attributes: num_nodes, num_edges (undirected), triangles, wedges, claws, rede, cpl, diameter,
    lcc (nodes), path_sources (BFS sources behind cpl and diameter; < lcc means sampled).
    """

    num_nodes: int
    num_edges: int
    triangles: int
    wedges: int
    claws: int
    rede: float
    cpl: float
    diameter: int
    lcc: int
    path_sources: int

    def as_dict(self) -> dict:
        """The fields as a plain dict."""
        return asdict(self)


def graph_stats(adj: sp.spmatrix, **path_options) -> GraphStats:
    """All statistics of one graph (``path_options`` go to :func:`path_statistics`).

    Raises:
        ValueError: not square or not symmetric; no edge (REDE is undefined).
    """
    a = _simple(adj)
    d = _degrees(a)
    cpl, diameter, sources = _path_statistics(a, **path_options)
    return GraphStats(num_nodes=int(a.shape[0]), num_edges=int(d.sum() // 2), triangles=_triangles(a),
                      wedges=int((d * (d - 1) // 2).sum()), claws=int((d * (d - 1) * (d - 2) // 6).sum()),
                      rede=_rede(a), cpl=cpl, diameter=diameter,
                      lcc=int(_lcc(a).size), path_sources=sources)


#: The relative errors of PrivDPR's tables (TC, WC, CC, REDE, CPL, diameter, LCC) and KS.
ERROR_KEYS = {"triangles": "tc", "wedges": "wc", "claws": "cc", "rede": "rede", "cpl": "cpl",
              "diameter": "diameter", "lcc": "lcc"}


def _relative_error(truth: float, value: float) -> float:
    if truth == 0:
        return 0.0 if value == 0 else float("inf")
    return abs(value - truth) / abs(truth)


def structural_errors(original: sp.spmatrix | GraphStats, synthetic: sp.spmatrix, *,
                      original_adj: sp.spmatrix | None = None, **path_options) -> dict[str, float]:
    """PrivDPR's eight structural errors of ``synthetic`` against ``original``.

    Relative error |x' - x| / x for TC, WC, CC, REDE, CPL, diameter and LCC (keys ``tc``, ``wc``,
    ``cc``, ``rede``, ``cpl``, ``diameter``, ``lcc``; 0 when both are 0, inf when only x is 0),
    and ``ks``: :func:`degree_ks_distance`.

    Args:
        original: the original graph's adjacency, or its precomputed :class:`GraphStats` (then
            ``original_adj`` gives its adjacency for the KS distance).
        synthetic: the synthetic graph's ``[N', N']`` adjacency.

    Raises:
        ValueError: a GraphStats original without ``original_adj``; bad adjacencies.
    """
    if isinstance(original, GraphStats):
        if original_adj is None:
            raise ValueError("give original_adj with precomputed GraphStats (the KS distance needs the degrees)")
        truth, truth_adj = original, original_adj
    else:
        truth, truth_adj = graph_stats(original, **path_options), original
    ours = graph_stats(synthetic, **path_options)
    errors = {key: _relative_error(getattr(truth, field), getattr(ours, field)) for field, key in ERROR_KEYS.items()}
    errors["ks"] = degree_ks_distance(truth_adj, synthetic)
    return errors
