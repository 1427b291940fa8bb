"""Small seeded graphs for tests."""

from __future__ import annotations

import networkx as nx
import numpy as np
from torch_geometric.data import Data

from graphpriv.data.graph import RawGraph, clean_graph


def random_graph(num_nodes: int, p: float, seed: int) -> Data:
    """Erdős–Rényi G(n, p) as cleaned ``Data`` (at least one edge guaranteed)."""
    g = nx.gnp_random_graph(num_nodes, p, seed=seed)
    edges = np.array(list(g.edges()), dtype=np.int64).T.reshape(2, -1)
    if edges.shape[1] == 0:
        edges = np.array([[0], [1]])
    return clean_graph(RawGraph(edges, num_nodes=num_nodes), name=f"gnp-{num_nodes}-{p}-{seed}")


def to_networkx(pairs: np.ndarray, num_nodes: int) -> nx.Graph:
    """Undirected networkx graph from ``[2, E]`` pairs."""
    g = nx.Graph()
    g.add_nodes_from(range(num_nodes))
    g.add_edges_from(map(tuple, np.asarray(pairs).T.tolist()))
    return g


def random_pairs(num_nodes: int, draws: int, seed: int):
    """Distinct undirected pairs ``[2, P]`` (torch long, u < v) from ``draws`` uniform draws."""
    import torch

    g = torch.Generator().manual_seed(seed)
    codes = torch.unique(torch.randint(0, num_nodes * num_nodes, (draws,), generator=g))
    src, dst = codes // num_nodes, codes % num_nodes
    keep = src < dst
    return torch.stack([src[keep], dst[keep]])
