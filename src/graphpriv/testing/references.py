"""Slow, obviously-correct references the fast code is tested against."""

from __future__ import annotations

import networkx as nx


def path_subgraph_edges_nx(graph: nx.Graph, u: int, v: int, k: int) -> set[tuple[int, int]]:
    """Edges on simple u–v paths of length 2..k, the edge (u, v) removed (networkx reference)."""
    h = graph.copy()
    if h.has_edge(u, v):
        h.remove_edge(u, v)
    edges: set[tuple[int, int]] = set()
    for path in nx.all_simple_paths(h, u, v, cutoff=k):
        if len(path) >= 3:
            edges |= {(min(a, b), max(a, b)) for a, b in zip(path[:-1], path[1:])}
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
