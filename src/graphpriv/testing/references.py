"""Slow, obviously-correct references the fast code is tested against."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import scipy.sparse as sp


def path_subgraph_edges_nx(graph: nx.Graph, u: int, v: int, k: int) -> set[tuple[int, int]]:
    """Edges on simple u–v paths of length 2..k, the edge (u, v) removed (networkx reference)."""
    h = graph.copy()
    if h.has_edge(u, v):
        h.remove_edge(u, v)
    edges: set[tuple[int, int]] = set()
    for path in nx.all_simple_paths(h, u, v, cutoff=k):
        if len(path) >= 3:
            edges |= {(min(a, b), max(a, b)) for a, b in itertools.pairwise(path)}
    return edges


def neighbourhood_subgraph_nx(graph: nx.Graph, u: int, v: int, h: int) -> tuple[set[int], set[tuple[int, int]]]:
    """Nodes and edges of the h-hop enclosing subgraph of (u, v), target edge removed."""
    nodes = set(nx.single_source_shortest_path_length(graph, u, cutoff=h))
    nodes |= set(nx.single_source_shortest_path_length(graph, v, cutoff=h))
    sub = graph.subgraph(nodes)
    edges = {(min(a, b), max(a, b)) for a, b in sub.edges()} - {(min(u, v), max(u, v))}
    return nodes, edges


def drnl_nx(nodes: set[int], edges: set[tuple[int, int]], u: int, v: int) -> dict[int, int]:
    """DRNL labels from networkx distances (du with v removed, dv with u removed)."""
    g = nx.Graph()
    g.add_nodes_from(nodes)
    g.add_edges_from(edges)
    gu, gv = g.copy(), g.copy()
    gu.remove_node(v)
    gv.remove_node(u)
    du = nx.single_source_shortest_path_length(gu, u)
    dv = nx.single_source_shortest_path_length(gv, v)
    labels = {}
    for w in nodes:
        if w in (u, v):
            labels[w] = 1
        elif w not in du or w not in dv:
            labels[w] = 0
        else:
            d = du[w] + dv[w]
            labels[w] = 1 + min(du[w], dv[w]) + (d // 2) * ((d // 2) + d % 2 - 1)
    return labels


def appr_ista_dense(adj, seeds, *, alpha: float = 0.25, rho: float = 1e-4, tol: float = 1e-4,
                    max_iter: int = 10_000):
    """ISTA for the l1-regularised PageRank problem with a dense ``[N, M]`` iterate (self-loops
    added): q <- soft_threshold(q - grad, rho alpha sqrt(d)), grad = Q q - alpha D^-1/2 s. The
    plain textbook iteration that :func:`graphpriv.propagation.appr.appr_ista` (sparse iterate) is
    tested and benchmarked against. Returns ``([M, N] dense P, iterations)``."""
    a = sp.csr_matrix(adj, dtype=np.float64, copy=True)
    a.data[:] = 1.0
    a.setdiag(1.0)
    n = a.shape[0]
    seeds = np.asarray(seeds, dtype=np.int64).ravel()
    sq = np.sqrt(np.asarray(a.sum(axis=1)).ravel())
    normalised = (sp.diags(1 / sq) @ a @ sp.diags(1 / sq)).tocsr()
    b = np.zeros((n, seeds.size))
    b[seeds, np.arange(seeds.size)] = alpha / sq[seeds]
    threshold = (rho * alpha * sq)[:, None]
    q = np.zeros((n, seeds.size))
    for it in range(1, max_iter + 1):
        grad = alpha * q + (1 - alpha) / 2 * (q - normalised @ q) - b
        z = q - grad
        new = np.sign(z) * np.maximum(np.abs(z) - threshold, 0.0)
        moved = np.abs(sq[:, None] * (new - q)).sum(axis=0).max()
        q = new
        if moved <= tol:
            return (sq[:, None] * q).T, it
    raise ValueError(f"ISTA did not converge in {max_iter} iterations")


def local_degrees_numpy(node_ptr, edge_ptr, local_edges):
    """Each node's degree inside its own subgraph, by numpy: bincounts of the edges' flat positions
    (the route :func:`graphpriv.linkpred.local_rows.local_degrees` replaced)."""
    offset = np.repeat(node_ptr[:-1], np.diff(edge_ptr))
    total = int(node_ptr[-1])
    return (np.bincount(offset + local_edges[0], minlength=total)
            + np.bincount(offset + local_edges[1], minlength=total))


def local_adjacency_rows_numpy(node_ptr, edge_ptr, local_edges):
    """Each node's sorted row of A + I inside its own subgraph, ``(row_ptr, col int32)``, by scipy's
    COO -> CSR conversion of every entry and a sort of each row (the route
    :func:`graphpriv.linkpred.local_rows.local_adjacency_rows` replaced)."""
    sizes = np.diff(node_ptr)
    owner = np.repeat(np.arange(sizes.size), np.diff(edge_ptr))
    a, b = local_edges
    base = node_ptr[:-1][owner]
    total = int(node_ptr[-1])
    flat = np.arange(total)
    local = flat - np.repeat(node_ptr[:-1], sizes)
    rows = np.concatenate([base + b, base + a, flat])
    cols = np.concatenate([a, b, local])
    width = int(sizes.max()) if sizes.size else 1
    pattern = sp.csr_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(total, width))
    pattern.sort_indices()
    return pattern.indptr.astype(np.int64), pattern.indices.astype(np.int32, copy=False)
