"""Small seeded graphs for tests."""

from __future__ import annotations

import networkx as nx
import numpy as np
from torch_geometric.data import Data

from graphpriv.data.graph import RawGraph, clean_graph


def random_graph(num_nodes: int, p: float, seed: int) -> Data:
    """Erdős–Rényi G(n, p) as cleaned ``Data`` (at least one edge guaranteed).

    Up to 5,000 nodes networkx's ``gnp_random_graph`` (every pair drawn: O(n^2), the graphs the
    tests were written with); above, ``fast_gnp_random_graph`` (O(n + m), another draw of the same
    distribution): 20,000 nodes take 0.1 s instead of 17 s."""
    sampler = nx.gnp_random_graph if num_nodes <= 5000 else nx.fast_gnp_random_graph
    g = sampler(num_nodes, p, seed=seed)
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


def labelled_sbm(num_nodes: int = 300, num_classes: int = 3, *, p_in: float = 0.08, p_out: float = 0.005,
                 num_features: int = 20, signal: float = 1.0, seed: int = 0) -> Data:
    """Stochastic block model with class-dependent Gaussian features (node classification tests):
    ``x`` ``[N, F]`` float32 (class c shifts features c*F/C .. (c+1)*F/C by ``signal``), ``y`` ``[N]``."""
    import torch

    rng = np.random.default_rng(seed)
    y = rng.integers(0, num_classes, num_nodes)
    same = y[:, None] == y[None, :]
    upper = np.triu(rng.random((num_nodes, num_nodes)) < np.where(same, p_in, p_out), 1)
    edges = np.array(np.nonzero(upper), dtype=np.int64)
    data = clean_graph(RawGraph(edges, num_nodes=num_nodes), name=f"sbm-{num_nodes}-{seed}")
    x = rng.standard_normal((num_nodes, num_features))
    width = num_features // num_classes
    for c in range(num_classes):
        x[y == c, c * width:(c + 1) * width] += signal
    data.x = torch.tensor(x, dtype=torch.float32)
    data.y = torch.tensor(y, dtype=torch.long)
    return data


def undirected_edge_set(data, num_nodes: int) -> set[tuple[int, int]]:
    """The undirected edges ``{(u, v), u < v}`` of a generated graph, after asserting that it is a PyG
    ``Data`` on ``num_nodes`` nodes with an int64 ``edge_index [2, 2|E|]`` holding every edge in
    both directions exactly once and no self-loop (AssertionError otherwise; for tests)."""
    import torch
    from torch_geometric.data import Data

    assert isinstance(data, Data) and data.num_nodes == num_nodes
    ei = data.edge_index
    assert ei.dtype == torch.int64 and ei.size(0) == 2
    assert ei.numel() == 0 or (int(ei.min()) >= 0 and int(ei.max()) < num_nodes)
    assert not bool((ei[0] == ei[1]).any())
    arcs = set(map(tuple, ei.t().tolist()))
    assert len(arcs) == ei.size(1) and all((v, u) in arcs for u, v in arcs)  # both directions, once each
    return {(u, v) for u, v in arcs if u < v}
