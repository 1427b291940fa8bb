import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.linkpred.paths import _path_subgraph_edges, _short_path_edges, path_subgraph_edges
from graphpriv.linkpred.subgraphs import Extractor, extract_subgraphs
from graphpriv.testing.graphs import random_graph, to_networkx
from graphpriv.testing.references import drnl_nx, path_subgraph_edges_nx


def _all_links(num_nodes, pairs, rng, num_neg=20):
    neg = rng.integers(0, num_nodes, size=(2, num_neg))
    neg = neg[:, neg[0] != neg[1]]
    return np.concatenate([pairs, neg], axis=1)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(5, 16), p=st.floats(0.1, 0.6), seed=st.integers(0, 10_000), k=st.integers(2, 5))
def test_path_edges_equal_networkx_on_every_link(n, p, seed, k):
    graph = random_graph(n, p, seed=seed)
    pairs = undirected_pairs(graph.edge_index)
    g = to_networkx(pairs, n)
    links = _all_links(n, pairs, np.random.default_rng(seed))
    ptr, edges = path_subgraph_edges(to_csr(pairs, n), links, k=k)
    for i, (u, v) in enumerate(links.T.tolist()):
        got = set(map(tuple, edges[:, ptr[i]:ptr[i + 1]].T.tolist()))
        assert got == path_subgraph_edges_nx(g, u, v, k), (u, v, k)


def test_target_edge_never_in_its_own_subgraph():
    graph = random_graph(30, 0.3, seed=4)
    pairs = undirected_pairs(graph.edge_index)
    ptr, edges = path_subgraph_edges(to_csr(pairs, 30), pairs, k=4)
    for i, (u, v) in enumerate(pairs.T.tolist()):
        assert (u, v) not in set(map(tuple, edges[:, ptr[i]:ptr[i + 1]].T.tolist()))


@settings(max_examples=15, deadline=None)
@given(n=st.integers(5, 14), p=st.floats(0.15, 0.5), seed=st.integers(0, 10_000), k=st.integers(2, 4))
def test_drnl_labels_equal_networkx(n, p, seed, k):
    graph = random_graph(n, p, seed=seed)
    pairs = undirected_pairs(graph.edge_index)
    links = _all_links(n, pairs, np.random.default_rng(seed), num_neg=5)
    s = extract_subgraphs(to_csr(pairs, n), links, np.zeros(links.shape[1]), extractor=Extractor.PATH, k=k)
    for i, (u, v) in enumerate(links.T.tolist()):
        nodes = s.nodes[s.node_ptr[i]:s.node_ptr[i + 1]]
        assert nodes[0] == u and nodes[1] == v
        edges = set(map(tuple, s.edges[:, s.edge_ptr[i]:s.edge_ptr[i + 1]].T.tolist()))
        ref = drnl_nx(set(nodes.tolist()), edges, u, v)
        got = dict(zip(nodes.tolist(), s.z[s.node_ptr[i]:s.node_ptr[i + 1]].tolist()))
        assert got == ref
        local = s.local_edges[:, s.edge_ptr[i]:s.edge_ptr[i + 1]]
        assert set(zip(nodes[local[0]].tolist(), nodes[local[1]].tolist())) == edges


def test_bad_k_and_links():
    adj = to_csr(np.array([[0, 1], [1, 2]]), 3)
    for k in (1, 7):
        with pytest.raises(ValueError, match="'k' must be in 2..6"):
            path_subgraph_edges(adj, np.array([[0], [2]]), k=k)
    with pytest.raises(ValueError, match="self-loop"):
        path_subgraph_edges(adj, np.array([[1], [1]]), k=2)
    with pytest.raises(ValueError, match="must lie in"):
        path_subgraph_edges(adj, np.array([[0], [9]]), k=2)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_unsorted_rows_give_the_same_edges(k):
    # the last edge of each path is found by binary search in its row: rows given unsorted are sorted first
    graph = random_graph(25, 0.3, seed=11)
    pairs = undirected_pairs(graph.edge_index)
    adj = to_csr(pairs, 25)
    rng = np.random.default_rng(3)
    indices = adj.indices.copy()
    for x in range(25):
        row = slice(adj.indptr[x], adj.indptr[x + 1])
        indices[row] = rng.permutation(indices[row])
    shuffled = sp.csr_matrix((adj.data, indices, adj.indptr), shape=adj.shape)
    shuffled.has_sorted_indices = False
    links = _all_links(25, pairs, rng)
    expected = path_subgraph_edges(adj, links, k=k)
    got = path_subgraph_edges(shuffled, links, k=k)
    assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])
    assert not shuffled.has_sorted_indices  # the caller's matrix is left as it was


def _both_kernels(adj, links, k):
    args = (adj.indptr.astype(np.int64), adj.indices.astype(np.int64), np.ascontiguousarray(links[0]),
            np.ascontiguousarray(links[1]), k)
    return _short_path_edges(*args), _path_subgraph_edges(*args)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(20, 120), m=st.integers(1, 6), seed=st.integers(0, 10_000), k=st.integers(2, 4))
def test_counting_kernel_equals_the_path_enumeration_on_hub_graphs(n, m, seed, k):
    # k <= 4 decides each edge from neighbour counts; the DFS enumerates the paths (and serves k = 5, 6).
    # Preferential attachment gives hubs, where paths through a shared neighbour repeat most; links are
    # every edge (both orientations, so the target edge is in the graph), repeated pairs and non-edges
    g = nx.barabasi_albert_graph(n, min(m, n - 1), seed=seed)
    pairs = np.array(sorted(g.edges()), dtype=np.int64).T
    rng = np.random.default_rng(seed)
    neg = rng.integers(0, n, size=(2, 80))
    neg = neg[:, neg[0] != neg[1]]
    links = np.concatenate([pairs, pairs[::-1], neg, neg], axis=1)
    adj = to_csr(pairs, n)
    (ptr, a, b), (ref_ptr, ref_a, ref_b) = _both_kernels(adj, links, k)
    assert np.array_equal(ptr, ref_ptr) and np.array_equal(a, ref_a) and np.array_equal(b, ref_b)


def test_counting_kernel_on_known_graphs():
    # a 5-cycle 0-1-2-3-4: the link (0, 2) has the path 0-1-2 (k >= 2) and 0-4-3-2 (k >= 3)
    cycle = to_csr(np.array([[0, 1, 2, 3, 0], [1, 2, 3, 4, 4]]), 5)
    expected = {2: {(0, 1), (1, 2)}, 3: {(0, 1), (1, 2), (0, 4), (3, 4), (2, 3)}}
    for k in (2, 3, 4):
        _, edges = path_subgraph_edges(cycle, np.array([[0], [2]]), k=k)
        assert set(map(tuple, edges.T.tolist())) == expected[min(k, 3)]
    # a triangle 1-2-3 hung on u = 0 and v = 4 through node 1 only: 0-1-2-3-? never reaches 4 except
    # through 1, and 0-1-...-1 is not simple, so the only path is 0-1-4 and the triangle stays out
    hub = to_csr(np.array([[0, 1, 1, 2, 1], [1, 2, 3, 3, 4]]), 5)
    for k in (2, 3, 4):
        _, edges = path_subgraph_edges(hub, np.array([[0], [4]]), k=k)
        assert set(map(tuple, edges.T.tolist())) == {(0, 1), (1, 4)}
    # u-a-b-c-v needs c != a: edges 0-1, 1-2, 1-3 and the link (0, 3); 0-1-2-1-3 is a walk (a = c = 1),
    # not a path, so the pendant edge (1, 2) stays out and only 0-1-3 remains
    walk = to_csr(np.array([[0, 1, 1], [1, 2, 3]]), 4)
    _, edges = path_subgraph_edges(walk, np.array([[0], [3]]), k=4)
    assert set(map(tuple, edges.T.tolist())) == {(0, 1), (1, 3)}
