import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_cap_subgraph_size_keeps_targets_and_closest_nodes():
    import numpy as np

    from graphpriv.data.graph import to_csr, undirected_pairs
    from graphpriv.linkpred.subgraphs import Extractor, cap_subgraph_size, extract_subgraphs
    from graphpriv.testing.graphs import random_graph

    data = random_graph(120, 0.08, seed=3)
    adj = to_csr(undirected_pairs(data.edge_index), 120)
    links = np.array([[0, 5, 7, 9], [1, 6, 70, 100]])
    full = extract_subgraphs(adj, links, np.zeros(4), extractor=Extractor.NEIGHBOURHOOD, h=2)
    assert full.num_nodes_per_subgraph.max() > 12  # the cap binds
    capped = cap_subgraph_size(full, 12, np.random.default_rng(0))
    assert capped.num_nodes_per_subgraph.max() <= 12
    for i in range(4):
        old = full.nodes[full.node_ptr[i]:full.node_ptr[i + 1]]
        new = capped.nodes[capped.node_ptr[i]:capped.node_ptr[i + 1]]
        z_old = full.z[full.node_ptr[i]:full.node_ptr[i + 1]]
        z_new = capped.z[capped.node_ptr[i]:capped.node_ptr[i + 1]]
        assert list(new[:2]) == list(links[:, i])  # targets stay at local ids 0, 1
        # every dropped reachable node is at least as far (label) as every kept non-target node
        dropped = np.setdiff1d(old, new)
        z_drop = z_old[np.isin(old, dropped)]
        z_keep = z_new[2:]
        reach_drop, reach_keep = z_drop[z_drop > 0], z_keep[z_keep > 0]
        if reach_drop.size and reach_keep.size:
            assert reach_drop.min() >= reach_keep.max()
        # edges: exactly the old edges between kept nodes, with consistent local ids
        e_old = full.edges[:, full.edge_ptr[i]:full.edge_ptr[i + 1]]
        e_new = capped.edges[:, capped.edge_ptr[i]:capped.edge_ptr[i + 1]]
        inside = np.isin(e_old[0], new) & np.isin(e_old[1], new)
        assert {tuple(e) for e in e_old[:, inside].T} == {tuple(e) for e in e_new.T}
        loc = capped.local_edges[:, capped.edge_ptr[i]:capped.edge_ptr[i + 1]]
        assert np.array_equal(new[loc], e_new)
    assert cap_subgraph_size(full, 10_000, np.random.default_rng(0)) is full
