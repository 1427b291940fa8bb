import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.linkpred.neighbourhood import neighbourhood_subgraphs
from graphpriv.linkpred.subgraphs import Extractor, extract_subgraphs
from graphpriv.testing.graphs import random_graph, to_networkx
from graphpriv.testing.references import drnl_nx, neighbourhood_subgraph_nx


@settings(max_examples=20, deadline=None)
@given(n=st.integers(4, 18), p=st.floats(0.05, 0.5), seed=st.integers(0, 10_000), h=st.integers(1, 3))
def test_neighbourhood_equals_networkx(n, p, seed, h):
    graph = random_graph(n, p, seed=seed)
    pairs = undirected_pairs(graph.edge_index)
    g = to_networkx(pairs, n)
    rng = np.random.default_rng(seed)
    neg = rng.integers(0, n, size=(2, 10))
    links = np.concatenate([pairs, neg[:, neg[0] != neg[1]]], axis=1)
    node_ptr, nodes, edge_ptr, edges = neighbourhood_subgraphs(to_csr(pairs, n), links, h=h)
    s = extract_subgraphs(to_csr(pairs, n), links, np.zeros(links.shape[1]), extractor=Extractor.NEIGHBOURHOOD, h=h)
    for i, (u, v) in enumerate(links.T.tolist()):
        ref_nodes, ref_edges = neighbourhood_subgraph_nx(g, u, v, h)
        got_nodes = nodes[node_ptr[i]:node_ptr[i + 1]]
        assert got_nodes[0] == u and got_nodes[1] == v
        assert set(got_nodes.tolist()) == ref_nodes and len(got_nodes) == len(ref_nodes)
        assert set(map(tuple, edges[:, edge_ptr[i]:edge_ptr[i + 1]].T.tolist())) == ref_edges
        labels = dict(zip(got_nodes.tolist(), s.z[s.node_ptr[i]:s.node_ptr[i + 1]].tolist()))
        assert labels == drnl_nx(ref_nodes, ref_edges, u, v)


def test_bad_h():
    with pytest.raises(ValueError, match="'h' must be >= 1"):
        neighbourhood_subgraphs(to_csr(np.array([[0], [1]]), 2), np.array([[0], [1]]), h=0)
