"""The fifteen graph queries of the PGB benchmark, and the errors PGB reports between an original
and a synthetic graph.

Source: Liu, Du, Cao, Yan, Liu, Yoshikawa, "PGB: Benchmarking Differentially Private Synthetic
Graph Generation Algorithms" (2024, arXiv:2408.02928), the utility metrics (graph queries Q1-Q15),
as implemented in PGB's public code (github.com/dooohow/PGB, commit 076a910: the per-query values
in ``Tmf.py`` / ``DGG.py`` / ``DP-1K.py`` / ``SKG.py`` / ``PrivGraph.py``, the helpers
``cal_rel``, ``cal_kl``, ``cal_MAE``, ``cal_diam``, ``average_shortest_path_length_custom`` and
``distance_distribution`` in ``utils.py``). The queries, PGB's column names and the error PGB
reports for each:

====  ===============================  ===============  =====================================
Q     query                            PGB column       error (original x, synthetic x')
====  ===============================  ===============  =====================================
Q1    number of nodes                  num_node_RE      relative error
Q2    number of edges                  num_edge_RE      relative error
Q3    triangle count                   tria_count_RE    relative error
Q4    average degree                   avg_deg_RE       relative error
Q5    degree variance (ddof=1)         deg_var_RE       relative error
Q6    degree distribution              deg_dsb_KL       KL(original || synthetic)
Q7    diameter                         diam_RE          relative error
Q8    average shortest-path length     SP_RE            relative error
Q9    distance distribution            dis_dsb_KL       KL(original || synthetic)
Q10   global clustering (transitivity) GCC_RE           relative error
Q11   average clustering coefficient   ACC_RE           relative error
Q12   Louvain communities              CD_NMI           NMI of the two partitions
Q13   modularity (own Louvain)         MOD_RE           relative error
Q14   degree assortativity             Ass_RE           relative error
Q15   eigenvector centrality           evc_MAE          MAE of the top-1% sorted values
====  ===============================  ===============  =====================================

Conventions (as in :mod:`graphpriv.metrics.graph_stats`): a graph is a symmetric ``[N, N]``
scipy sparse adjacency (or a PyG ``Data`` with ``edge_index`` / ``num_nodes``); any stored
nonzero off the diagonal is an edge; self-loops and values are ignored. All ``N`` nodes count,
isolated ones included (PGB builds its networkx graphs from the full ``N x N`` matrix).

Disconnected graphs: PGB's path queries run over *all* connected components, not the largest one:
the diameter is the largest finite distance (``cal_diam``: the largest component diameter), the
average shortest-path length averages the distances over all connected pairs of distinct nodes
(``average_shortest_path_length_custom``: the pair-weighted mean of the components' averages),
and the distance distribution counts the BFS distances from every node to every node it reaches,
itself included (``distance_distribution``: ``hist[0] = N``). So do these. Path queries are exact
(a BFS from every node) when ``N <= exact_max_nodes``; beyond, they are estimated from
``num_sources`` sources drawn uniformly without replacement (seeded by ``random_state``): the
distance histogram scaled by ``N / num_sources`` (unbiased), the average shortest-path length as
the ratio of the sampled distance sums to the sampled connected pairs (consistent), and the
diameter as a lower bound (the largest eccentricity among the sources, improved by double sweeps
from the farthest nodes found). ``GraphQueries.estimated`` names the queries that are estimates.

Graphs without edges never raise: 0 triangles, diameter 0, distance histogram ``[N]``,
transitivity and average clustering 0 (networkx's values), modularity and assortativity nan
(undefined: no edge, no degree variance), average shortest-path length ``inf`` when ``N >= 2``
(PGB: no connected pair) and 0 when ``N == 1`` (networkx), eigenvector centrality uniform
``1 / sqrt(N)`` (the limit of networkx's power iteration, which PGB runs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph
from scipy.sparse.linalg import eigsh
from sklearn.metrics import normalized_mutual_info_score

from graphpriv.metrics.graph_stats import _degrees, _simple, bfs_distances, node_triangle_counts

__all__ = [
    "PATH_QUERIES",
    "PGB_COLUMNS",
    "RELATIVE_ERROR_FIELDS",
    "GraphQueries",
    "compare_queries",
    "eigenvector_centrality",
    "graph_queries",
    "kl_divergence",
    "relative_error",
]

#: The queries that are estimated (not exact) beyond ``exact_max_nodes``.
PATH_QUERIES = ("diameter", "average_shortest_path_length", "distance_histogram")

#: :func:`compare_queries`'s keys -> PGB's result columns (``cols`` in PGB's ``Tmf.py`` etc.), Q1-Q15.
PGB_COLUMNS = {
    "num_nodes_re": "num_node_RE",
    "num_edges_re": "num_edge_RE",
    "triangles_re": "tria_count_RE",
    "average_degree_re": "avg_deg_RE",
    "degree_variance_re": "deg_var_RE",
    "degree_distribution_kl": "deg_dsb_KL",
    "diameter_re": "diam_RE",
    "average_shortest_path_length_re": "SP_RE",
    "distance_distribution_kl": "dis_dsb_KL",
    "transitivity_re": "GCC_RE",
    "average_clustering_re": "ACC_RE",
    "community_nmi": "CD_NMI",
    "modularity_re": "MOD_RE",
    "degree_assortativity_re": "Ass_RE",
    "eigenvector_centrality_mae": "evc_MAE",
}

#: :func:`compare_queries`'s relative-error keys -> the :class:`GraphQueries` field each compares.
RELATIVE_ERROR_FIELDS = {
    "num_nodes_re": "num_nodes", "num_edges_re": "num_edges", "triangles_re": "triangles",
    "average_degree_re": "average_degree", "degree_variance_re": "degree_variance", "diameter_re": "diameter",
    "average_shortest_path_length_re": "average_shortest_path_length", "transitivity_re": "transitivity",
    "average_clustering_re": "average_clustering", "modularity_re": "modularity",
    "degree_assortativity_re": "degree_assortativity",
}

_RE_EPS = 1e-15  # PGB's cal_rel
_KL_EPS = float(np.finfo(np.float64).eps)  # PGB's cal_kl
_DENSE_EIG_MAX = 64  # components up to this size: batched dense eigh


# --------------------------------------------------------------------------------------------
# input


def _as_simple(graph) -> sp.csr_matrix:
    """Binary symmetric CSR without self-loops from a scipy adjacency or a PyG ``Data``."""
    if hasattr(graph, "edge_index"):
        from torch_geometric.utils import to_scipy_sparse_matrix

        num_nodes = graph.num_nodes
        if num_nodes is None:
            raise ValueError("the PyG Data has no num_nodes")
        graph = to_scipy_sparse_matrix(graph.edge_index.cpu(), num_nodes=int(num_nodes))
    a = _simple(graph)
    if a.shape[0] == 0:
        raise ValueError("the graph has no node (shape (0, 0)): the queries are undefined")
    return a


# --------------------------------------------------------------------------------------------
# compiled kernels




# --------------------------------------------------------------------------------------------
# one-graph queries


def _clustering(a: sp.csr_matrix, d: np.ndarray) -> tuple[int, float, float]:
    """(triangles, transitivity, average clustering) as networkx defines them."""
    tri = node_triangle_counts(a)
    total = int(tri.sum())
    wedges = float((d * (d - 1) // 2).sum())
    transitivity = 0.0 if total == 0 else total / wedges  # 3 T / wedges; networkx: 0 without triangles
    local = np.zeros(d.size)
    ok = d >= 2
    local[ok] = 2.0 * tri[ok] / (d[ok] * (d[ok] - 1.0))
    return total // 3, float(transitivity), float(local.mean())


def _assortativity(a: sp.csr_matrix, d: np.ndarray) -> float:
    """Pearson correlation of the degrees at the two ends of the edges (each edge both ways)."""
    if a.nnz == 0:
        return float("nan")
    rows = np.repeat(np.arange(d.size), d)
    x = d[rows].astype(np.float64)
    y = d[a.indices].astype(np.float64)
    if x.min() == x.max():
        return float("nan")  # every edge end has the same degree: 0 / 0
    mu = x.mean()
    var = float(((x - mu) ** 2).sum())
    return float(((x - mu) * (y - mu)).sum() / var)


def _path_queries(a: sp.csr_matrix, *, exact_max_nodes: int, num_sources: int,
                  random_state: int) -> tuple[int, float, np.ndarray, int, bool]:
    """(diameter, average shortest-path length, distance histogram, sources, estimated)."""
    n = a.shape[0]
    exact = n <= exact_max_nodes
    if exact:
        sources = np.arange(n, dtype=np.int64)
    else:
        if num_sources < 1:
            raise ValueError(f"num_sources must be >= 1 (got {num_sources})")
        rng = np.random.default_rng(random_state)
        sources = np.sort(rng.choice(n, min(num_sources, n), replace=False)).astype(np.int64)
    sums, reach, ecc, far, hist = bfs_distances(a.indptr, a.indices, sources)
    diameter = int(ecc.max())
    hist = hist[: diameter + 1].astype(np.float64)
    pairs = int((reach - 1).sum())
    if exact:
        aspl = float(sums.sum() / pairs) if pairs else (0.0 if n == 1 else float("inf"))
    else:
        hist *= n / sources.size
        aspl = float(sums.sum() / pairs) if pairs else float("inf")
        start = int(far[np.argmax(ecc)])
        for _ in range(8):  # double sweeps: BFS from the farthest node found, while it improves
            _, _, e2, f2, _ = bfs_distances(a.indptr, a.indices, np.array([start], dtype=np.int64))
            if e2[0] <= diameter:
                break
            diameter, start = int(e2[0]), int(f2[0])
    return diameter, aspl, hist, int(sources.size), not exact


def _louvain(a: sp.csr_matrix, random_state: int) -> np.ndarray:
    """Louvain labels ``[N]`` (networkx, seeded), numbered by each community's smallest node."""
    g = nx.Graph()
    g.add_nodes_from(range(a.shape[0]))
    coo = sp.triu(a, k=1).tocoo()
    g.add_edges_from(zip(coo.row.tolist(), coo.col.tolist()))
    communities = nx.community.louvain_communities(g, seed=random_state)
    labels = np.empty(a.shape[0], dtype=np.int64)
    for k, members in enumerate(sorted(communities, key=min)):
        labels[list(members)] = k
    return labels


def _modularity(a: sp.csr_matrix, d: np.ndarray, labels: np.ndarray) -> float:
    """Newman's modularity Q = sum_c [L_c / m - (D_c / 2m)^2]; nan without edges."""
    m = d.sum() / 2.0
    if m == 0:
        return float("nan")
    rows = np.repeat(np.arange(d.size), d)
    inside = float((labels[rows] == labels[a.indices]).sum()) / 2.0
    degree_sums = np.bincount(labels, weights=d.astype(np.float64))
    return float(inside / m - ((degree_sums / (2.0 * m)) ** 2).sum())


def _perron_vectors_dense(a: sp.csr_matrix, labels: np.ndarray, comps: np.ndarray, size: int):
    """Top eigenpairs of the components ``comps`` (all of ``size`` nodes), batched dense eigh.
    Returns (eigenvalues [c], node ids [c, size], positive unit vectors [c, size])."""
    order = np.argsort(labels, kind="stable")
    starts = np.concatenate([[0], np.cumsum(np.bincount(labels))])
    nodes = np.stack([order[starts[c]: starts[c] + size] for c in comps])  # [c, size]
    slot = np.full(labels.size, -1, dtype=np.int64)
    slot[nodes.ravel()] = np.arange(nodes.size)
    coo = a.tocoo()
    keep = slot[coo.row] >= 0
    r, c = slot[coo.row[keep]], slot[coo.col[keep]]
    mats = np.zeros((len(comps), size, size))
    mats[r // size, r % size, c % size] = 1.0
    w, v = np.linalg.eigh(mats)
    return w[:, -1], nodes, np.abs(v[:, :, -1])


def eigenvector_centrality(adj) -> np.ndarray:
    """Eigenvector centrality ``[N]`` (float64, nonnegative, unit Euclidean norm) as networkx
    defines it (``nx.eigenvector_centrality``, which PGB runs; ``nx.eigenvector_centrality_numpy``
    on connected graphs): the Perron eigenvector of the adjacency for its largest eigenvalue.

    Computed per connected component (scipy ``eigsh``, largest algebraic eigenvalue, or a batched
    dense ``eigh`` for components of at most 64 nodes), no dense ``N x N`` matrix. When several
    components share the largest eigenvalue (e.g. two equal components, a perfect matching) the
    eigenvector is not unique; the value returned is the one networkx's power iteration converges
    to from its uniform start: the projection of the all-ones vector on that eigenspace,
    ``sum_c (1 . v_c) v_c`` over those components' unit Perron vectors ``v_c``, normalised.
    Other components get 0. A graph without edges gets ``1 / sqrt(N)`` everywhere.

    Args:
        adj: ``[N, N]`` symmetric scipy adjacency, or a PyG ``Data``.

    Raises:
        ValueError: not square, not symmetric, or ``N == 0``.
    """
    return _eigenvector_centrality(_as_simple(adj))


def _eigenvector_centrality(a: sp.csr_matrix) -> np.ndarray:
    n = a.shape[0]
    if a.nnz == 0:
        return np.full(n, 1.0 / math.sqrt(n))
    d = _degrees(a)
    ncomp, labels = csgraph.connected_components(a, directed=False)
    sizes = np.bincount(labels, minlength=ncomp)
    max_deg = np.zeros(ncomp, dtype=np.int64)
    np.maximum.at(max_deg, labels, d)
    edges2 = np.bincount(labels, weights=d.astype(np.float64), minlength=ncomp)
    # rho_c <= max degree, rho_c >= max(sqrt(max degree), mean degree): prune by the bounds
    lower = float(np.maximum(np.sqrt(max_deg), edges2 / sizes).max())
    candidates = np.flatnonzero(max_deg >= lower * (1 - 1e-9))
    found: list[tuple[float, np.ndarray, np.ndarray]] = []  # (rho, node ids, vector)
    small = candidates[sizes[candidates] <= _DENSE_EIG_MAX]
    for size in np.unique(sizes[small]):
        comps = small[sizes[small] == size]
        for chunk in range(0, comps.size, 1024):  # at most 1024 x 64 x 64 floats (32 MiB) at once
            rho, nodes, vecs = _perron_vectors_dense(a, labels, comps[chunk: chunk + 1024], int(size))
            found.extend(zip(rho.tolist(), nodes, vecs))
    for c in candidates[sizes[candidates] > _DENSE_EIG_MAX]:
        nodes = np.flatnonzero(labels == c)
        sub = a[nodes][:, nodes].tocsr()
        rho, vec = eigsh(sub, k=1, which="LA", v0=np.ones(nodes.size), tol=0)
        found.append((float(rho[0]), nodes, np.abs(vec[:, 0])))
    top = max(rho for rho, _, _ in found)
    x = np.zeros(n)
    for rho, nodes, vec in found:
        if rho >= top * (1 - 1e-9):
            vec = vec / np.linalg.norm(vec)
            x[nodes] += vec.sum() * vec
    return x / np.linalg.norm(x)


@dataclass(frozen=True, eq=False)
class GraphQueries:
    """PGB's graph queries (Q1-Q15) of one graph, and what the comparisons need.

    Attributes:
        num_nodes: ``N``, isolated nodes included (Q1).
        num_edges: undirected edges (Q2).
        triangles: triangles, each counted once (Q3; ``sum(nx.triangles(G).values()) // 3``).
        average_degree: ``2 E / N`` (Q4).
        degree_variance: sample variance of the ``N`` degrees, ``np.var(deg, ddof=1)`` as in PGB
            (Q5); nan when ``N == 1``.
        degree_histogram: ``[max degree + 1]`` int64, nodes of each degree ``0..max``
            (``np.bincount(deg)``, ``nx.degree_histogram``; Q6).
        diameter: the largest finite shortest-path distance, over all components (Q7).
        average_shortest_path_length: mean distance over the connected ordered pairs of distinct
            nodes, all components (Q8); ``inf`` without such a pair (``N >= 2``), 0 when ``N == 1``.
        distance_histogram: ``[diameter + 1]`` float64, ordered pairs ``(s, t)`` with ``t``
            reachable from ``s`` at each distance, ``s == t`` included (so ``[0] == N``; Q9);
            scaled sample counts when estimated.
        transitivity: ``3 triangles / wedges``, 0 without triangles (``nx.transitivity``; Q10).
        average_clustering: mean local clustering over all ``N`` nodes, 0 for degree < 2
            (``nx.average_clustering``; Q11).
        communities: ``[N]`` int64 Louvain labels (networkx ``louvain_communities``, seeded; Q12).
        modularity: Newman modularity of the graph's *own* Louvain partition
            (PGB: ``community.modularity(best_partition(G), G)``; Q13); nan without edges.
        degree_assortativity: ``nx.degree_assortativity_coefficient`` (Q14); nan without edges or
            without degree variance along the edges.
        eigenvector_centrality: ``[N]`` float64, see :func:`eigenvector_centrality` (Q15).
        path_sources: BFS sources behind the path queries (``N`` when exact).
        estimated: names of the fields that are estimates (``PATH_QUERIES`` when sampled, else
            ``()``).
    """

    num_nodes: int
    num_edges: int
    triangles: int
    average_degree: float
    degree_variance: float
    degree_histogram: np.ndarray
    diameter: int
    average_shortest_path_length: float
    distance_histogram: np.ndarray
    transitivity: float
    average_clustering: float
    communities: np.ndarray
    modularity: float
    degree_assortativity: float
    eigenvector_centrality: np.ndarray
    path_sources: int
    estimated: tuple[str, ...]

    def scalars(self) -> dict[str, float | int]:
        """The scalar queries as a plain dict (arrays and bookkeeping fields left out)."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name not in ("degree_histogram", "distance_histogram", "communities",
                                  "eigenvector_centrality", "path_sources", "estimated")}


def graph_queries(graph, *, random_state: int = 0, exact_max_nodes: int = 20_000,
                  num_sources: int = 1_000) -> GraphQueries:
    """All PGB graph queries of one graph (see the module docstring for the definitions).

    Args:
        graph: ``[N, N]`` symmetric scipy sparse adjacency (self-loops and values ignored), or a
            PyG ``Data`` with ``edge_index`` and ``num_nodes``.
        random_state: seed of the Louvain method and of the sampled BFS sources.
        exact_max_nodes: path queries by BFS from every node when ``N`` is at most this.
        num_sources: BFS sources drawn uniformly without replacement beyond it.

    Returns:
        :class:`GraphQueries`; its ``estimated`` names the sampled queries.

    Raises:
        ValueError: not square, not symmetric, ``N == 0``, or ``num_sources < 1`` when sampling.
    """
    a = _as_simple(graph)
    n = a.shape[0]
    d = _degrees(a)
    triangles, transitivity, average_clustering = _clustering(a, d)
    diameter, aspl, dist_hist, sources, sampled = _path_queries(
        a, exact_max_nodes=exact_max_nodes, num_sources=num_sources, random_state=random_state)
    labels = _louvain(a, random_state)
    centrality = _eigenvector_centrality(a)
    arrays = [np.bincount(d).astype(np.int64), dist_hist, labels, centrality]
    for arr in arrays:
        arr.setflags(write=False)
    return GraphQueries(
        num_nodes=int(n), num_edges=int(d.sum() // 2), triangles=triangles,
        average_degree=float(d.mean()),
        degree_variance=float(np.var(d, ddof=1)) if n >= 2 else float("nan"),
        degree_histogram=arrays[0], diameter=diameter, average_shortest_path_length=aspl,
        distance_histogram=arrays[1], transitivity=transitivity, average_clustering=average_clustering,
        communities=arrays[2], modularity=_modularity(a, d, labels),
        degree_assortativity=_assortativity(a, d), eigenvector_centrality=arrays[3],
        path_sources=sources, estimated=PATH_QUERIES if sampled else ())


# --------------------------------------------------------------------------------------------
# comparisons


def relative_error(original: float, synthetic: float) -> float:
    """PGB's relative error ``|(x - x') / (x + 1e-15)|`` (``cal_rel`` in PGB's ``utils.py``).

    Args:
        original: the original graph's value ``x``. synthetic: the synthetic graph's ``x'``.

    Returns:
        A float >= 0 (IEEE arithmetic, as PGB's numpy code): 0 when both are 0, about
        ``1e15 |x'|`` when only ``x`` is 0; nan when either is nan or ``x`` is infinite, inf when
        only ``x'`` is.
    """
    x, y = np.float64(original), np.float64(synthetic)
    with np.errstate(all="ignore"):
        return float(np.abs((x - y) / (x + _RE_EPS)))


def kl_divergence(original, synthetic) -> float:
    """PGB's KL divergence ``KL(P || Q)`` between two histograms (``cal_kl`` in PGB's
    ``utils.py``): ``P``, ``Q`` are the count vectors normalised to sum 1, the shorter padded with
    zero bins, and ``KL = sum_i p_i ln((p_i + e) / (q_i + e))`` with ``e`` the float64 machine
    epsilon (2.2e-16). Zero bins: a bin with ``p_i = 0`` adds 0; a bin with ``p_i > 0`` and
    ``q_i = 0`` adds the finite penalty ``p_i ln((p_i + e) / e)`` (about ``p_i (ln p_i + 36)``).

    Args:
        original: ``[K]`` nonnegative counts of the original graph (``P``).
        synthetic: ``[K']`` nonnegative counts of the synthetic graph (``Q``).

    Returns:
        KL in nats (>= 0 up to the smoothing); nan when either histogram sums to 0.
    """
    p = np.asarray(original, dtype=np.float64).ravel()
    q = np.asarray(synthetic, dtype=np.float64).ravel()
    if p.sum() <= 0 or q.sum() <= 0:
        return float("nan")
    p, q = p / p.sum(), q / q.sum()
    k = max(p.size, q.size)
    p, q = np.pad(p, (0, k - p.size)), np.pad(q, (0, k - q.size))
    return float((p * np.log((p + _KL_EPS) / (q + _KL_EPS))).sum())


def _pad_labels(labels: np.ndarray, n: int) -> np.ndarray:
    extra = n - labels.size
    if extra <= 0:
        return labels
    start = int(labels.max()) + 1 if labels.size else 0
    return np.concatenate([labels, np.arange(start, start + extra)])


def _pad_centrality(q: GraphQueries, n: int) -> np.ndarray:
    if n <= q.num_nodes:
        return q.eigenvector_centrality
    if q.num_edges == 0:  # the padded graph still has no edge: uniform over all n nodes
        return np.full(n, 1.0 / math.sqrt(n))
    return np.pad(q.eigenvector_centrality, (0, n - q.num_nodes))


def compare_queries(original, synthetic, *, evc_top_fraction: float = 0.01,
                    **query_options) -> dict[str, float]:
    """The errors PGB reports for a synthetic graph against the original, one per query Q1-Q15.

    * ``*_re``: :func:`relative_error` of Q1-Q5, Q7, Q8, Q10, Q11, Q13 (modularity of each
      graph's own Louvain partition, PGB's ``MOD_RE``), Q14.
    * ``degree_distribution_kl``, ``distance_distribution_kl``: :func:`kl_divergence` of the
      degree and distance histograms, original first (PGB's ``cal_kl(original, synthetic)``).
    * ``community_nmi``: NMI of the two Louvain partitions (scikit-learn
      ``normalized_mutual_info_score``, arithmetic normalisation, as PGB), 1 for equal partitions.
    * ``eigenvector_centrality_mae``: PGB's ``evc_MAE``: each graph's centralities sorted in
      decreasing order, the mean absolute difference over the first
      ``k = int(evc_top_fraction * N_original)`` ranks (not node-aligned), with ``k >= 1`` (PGB's
      code averages an empty slice, nan, for ``N < 100``).
    * ``eigenvector_centrality_mae_aligned`` (not in PGB): mean ``|c_v - c'_v|`` over all nodes,
      node ids aligned.

    When the node counts differ, the node-aligned comparisons (NMI, aligned MAE) treat the
    smaller graph as padded with isolated nodes (as PGB's ``pad_adj_matrix``): each its own
    community, centrality 0 (or uniform if the graph has no edge); the top-k MAE pads the sorted
    values with 0.

    Args:
        original, synthetic: ``[N, N]`` / ``[N', N']`` symmetric scipy adjacencies, PyG ``Data``,
            or precomputed :class:`GraphQueries`.
        evc_top_fraction: the fraction of the original's nodes in the top-k MAE (PGB: 0.01).
        **query_options: ``random_state``, ``exact_max_nodes``, ``num_sources`` for
            :func:`graph_queries` (for the graphs not given as :class:`GraphQueries`).

    Returns:
        ``{key: error}`` with the keys of :data:`PGB_COLUMNS` plus
        ``eigenvector_centrality_mae_aligned``. Values may be nan (undefined query, e.g. the
        modularity of a graph without edges) or inf; which inputs were estimated is in
        ``GraphQueries.estimated``.

    Raises:
        ValueError: bad adjacencies (see :func:`graph_queries`).
    """
    x = original if isinstance(original, GraphQueries) else graph_queries(original, **query_options)
    y = synthetic if isinstance(synthetic, GraphQueries) else graph_queries(synthetic, **query_options)
    out = {key: relative_error(getattr(x, f), getattr(y, f)) for key, f in RELATIVE_ERROR_FIELDS.items()}
    out["degree_distribution_kl"] = kl_divergence(x.degree_histogram, y.degree_histogram)
    out["distance_distribution_kl"] = kl_divergence(x.distance_histogram, y.distance_histogram)
    n = max(x.num_nodes, y.num_nodes)
    out["community_nmi"] = float(normalized_mutual_info_score(_pad_labels(x.communities, n),
                                                              _pad_labels(y.communities, n)))
    k = max(1, int(evc_top_fraction * x.num_nodes))
    top_x = np.sort(x.eigenvector_centrality)[::-1][:k]
    top_y = np.sort(y.eigenvector_centrality)[::-1][:k]
    top_x, top_y = np.pad(top_x, (0, k - top_x.size)), np.pad(top_y, (0, k - top_y.size))
    out["eigenvector_centrality_mae"] = float(np.abs(top_x - top_y).mean())
    out["eigenvector_centrality_mae_aligned"] = float(
        np.abs(_pad_centrality(x, n) - _pad_centrality(y, n)).mean())
    return {key: out[key] for key in [*PGB_COLUMNS, "eigenvector_centrality_mae_aligned"]}
