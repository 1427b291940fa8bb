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


def _same_sets(a, b) -> bool:
    fields = ("links", "labels", "node_ptr", "nodes", "z", "edge_ptr", "edges", "local_edges")
    return all(getattr(a, f).shape == getattr(b, f).shape and np.array_equal(getattr(a, f), getattr(b, f))
               for f in fields)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(6, 60), p=st.floats(0.02, 0.9), seed=st.integers(0, 10_000), h=st.integers(1, 3),
       cap=st.integers(2, 30))
def test_capped_extraction_is_the_whole_subgraphs_cut_afterwards(n, p, seed, h, cap):
    """The cut made during extraction equals cap_subgraph_size on the whole subgraphs, bit for bit,
    with the same draws: same nodes in the same order, same edges, and the DRNL labels of the whole
    subgraphs (sparse graphs with unreachable nodes and dense ones where the search stops early)."""
    from graphpriv.linkpred.subgraphs import cap_subgraph_size

    graph = random_graph(n, p, seed=seed)
    adj = to_csr(undirected_pairs(graph.edge_index), n)
    rng = np.random.default_rng(seed)
    links = rng.integers(0, n, size=(2, 25))
    links = links[:, links[0] != links[1]]
    labels = rng.integers(0, 2, links.shape[1]).astype(float)
    whole = extract_subgraphs(adj, links, labels, extractor=Extractor.NEIGHBOURHOOD, h=h)
    want = cap_subgraph_size(whole, cap, np.random.default_rng([seed, 29]))
    got = extract_subgraphs(adj, links, labels, extractor=Extractor.NEIGHBOURHOOD, h=h, max_nodes=cap,
                            rng=np.random.default_rng([seed, 29]))
    assert _same_sets(want, got)


def test_capped_extraction_on_a_dense_graph_stops_at_the_common_neighbours():
    """A near-complete graph: every 2-hop subgraph is the whole graph; the kept nodes are common
    neighbours (label 2), as the whole subgraphs cut afterwards give."""
    from graphpriv.linkpred.subgraphs import cap_subgraph_size

    n = 150
    graph = random_graph(n, 0.6, seed=1)
    adj = to_csr(undirected_pairs(graph.edge_index), n)
    links = undirected_pairs(graph.edge_index)[:, :40]
    whole = extract_subgraphs(adj, links, np.ones(40), extractor=Extractor.NEIGHBOURHOOD, h=2)
    assert (whole.num_nodes_per_subgraph == n).all()
    want = cap_subgraph_size(whole, 20, np.random.default_rng(7))
    got = extract_subgraphs(adj, links, np.ones(40), extractor=Extractor.NEIGHBOURHOOD, h=2, max_nodes=20,
                            rng=np.random.default_rng(7))
    assert _same_sets(want, got)
    assert (got.num_nodes_per_subgraph == 20).all()
    assert set(np.unique(got.z).tolist()) == {1, 2}


def test_capped_extraction_without_a_cut_draws_nothing():
    graph = random_graph(40, 0.05, seed=2)
    adj = to_csr(undirected_pairs(graph.edge_index), 40)
    links = np.array([[0, 3, 5], [1, 4, 9]])
    rng = np.random.default_rng(0)
    got = extract_subgraphs(adj, links, np.zeros(3), extractor=Extractor.NEIGHBOURHOOD, h=1, max_nodes=40, rng=rng)
    assert _same_sets(got, extract_subgraphs(adj, links, np.zeros(3), extractor=Extractor.NEIGHBOURHOOD, h=1))
    assert rng.random() == np.random.default_rng(0).random()  # the generator was not used
    with pytest.raises(ValueError, match="'max_nodes' cuts neighbourhood subgraphs"):
        extract_subgraphs(adj, links, np.zeros(3), extractor=Extractor.PATH, k=2, max_nodes=10,
                          rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="'max_nodes' must be >= 2"):
        extract_subgraphs(adj, links, np.zeros(3), extractor=Extractor.NEIGHBOURHOOD, h=1, max_nodes=1,
                          rng=np.random.default_rng(0))


def test_subgraph_set_degrees_and_target_edges_are_the_subgraphs_own():
    graph = random_graph(50, 0.15, seed=4)
    adj = to_csr(undirected_pairs(graph.edge_index), 50)
    links = np.array([[0, 2, 8, 11], [1, 30, 9, 40]])
    s = extract_subgraphs(adj, links, np.zeros(4), extractor=Extractor.NEIGHBOURHOOD, h=1)
    ptr, src, dst = s.target_edges
    for i in range(len(s)):
        size = s.node_ptr[i + 1] - s.node_ptr[i]
        a, b = s.local_edges[:, s.edge_ptr[i]:s.edge_ptr[i + 1]]
        dense = np.zeros((size, size), dtype=int)
        dense[a, b] = dense[b, a] = 1
        assert np.array_equal(s.degrees[s.node_ptr[i]:s.node_ptr[i + 1]], dense.sum(1))
        into = {(int(x), int(y)) for x, y in zip(src[ptr[i]:ptr[i + 1]], dst[ptr[i]:ptr[i + 1]])}
        assert into == {(int(x), int(y)) for y in (0, 1) for x in np.flatnonzero(dense[:, y])}


@pytest.mark.parametrize("extractor, options", [(Extractor.NEIGHBOURHOOD, {"h": 2}), (Extractor.PATH, {"k": 3}),
                                                (Extractor.NEIGHBOURHOOD, {"h": 2, "max_nodes": 6})])
def test_extraction_in_chunks_is_the_extraction_in_one_call_and_reports_progress(monkeypatch, extractor, options):
    from graphpriv.linkpred import neighbourhood

    n = 40
    graph = random_graph(n, 0.2, seed=4)
    pairs = undirected_pairs(graph.edge_index)
    rng = np.random.default_rng(4)
    neg = rng.integers(0, n, size=(2, 30))
    links = np.concatenate([pairs, neg[:, neg[0] != neg[1]]], axis=1)
    labels = np.arange(links.shape[1]) % 2

    def extract(**more):
        if "max_nodes" in options:
            more["rng"] = np.random.default_rng(7)
        return extract_subgraphs(to_csr(pairs, n), links, labels, extractor=extractor, **options, **more)

    whole = extract()
    reports = []
    monkeypatch.setattr(neighbourhood, "CHUNK", 7)
    chunked = extract(progress=lambda done, total, **info: reports.append((done, total)))
    for field in ("node_ptr", "nodes", "z", "edge_ptr", "edges", "local_edges", "labels"):
        assert np.array_equal(getattr(whole, field), getattr(chunked, field)), field
    total = links.shape[1]
    assert reports == [(min(stop, total), total) for stop in range(7, total + 7, 7)]
    if "max_nodes" in options:
        assert whole.num_nodes_per_subgraph.max() == 6  # the cut happened, in chunks as in one call
