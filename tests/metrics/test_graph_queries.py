import math
import statistics

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from sklearn.metrics import normalized_mutual_info_score

from graphpriv.metrics.graph_queries import (
    PATH_QUERIES,
    PGB_COLUMNS,
    GraphQueries,
    compare_queries,
    eigenvector_centrality,
    graph_queries,
    kl_divergence,
    relative_error,
)

EPS = np.finfo(np.float64).eps


def _with_isolated(g: nx.Graph, k: int) -> nx.Graph:
    g = nx.convert_node_labels_to_integers(g)
    g.add_nodes_from(range(g.number_of_nodes(), g.number_of_nodes() + k))
    return g


GRAPHS = [
    ("karate", nx.karate_club_graph),
    ("gnp-components", lambda: nx.gnp_random_graph(60, 0.06, seed=1)),  # several components, isolated nodes
    ("path", lambda: nx.path_graph(7)),
    ("star", lambda: nx.star_graph(6)),
    ("clique+path+isolated", lambda: _with_isolated(nx.disjoint_union(nx.complete_graph(5), nx.path_graph(4)), 2)),
    ("powerlaw", lambda: nx.powerlaw_cluster_graph(150, 3, 0.4, seed=2)),
]


def _adj(g: nx.Graph) -> sp.csr_matrix:
    return sp.csr_matrix(nx.to_scipy_sparse_array(g, nodelist=range(g.number_of_nodes()), format="csr"))


def _sorted_build(g: nx.Graph) -> nx.Graph:
    """The same graph with nodes 0..N-1 and edges inserted in sorted order (the order the module
    builds its networkx graph in), so that a seeded Louvain run must give the same partition."""
    h = nx.Graph()
    h.add_nodes_from(range(g.number_of_nodes()))
    h.add_edges_from(sorted((min(u, v), max(u, v)) for u, v in g.edges() if u != v))
    return h


def _pgb_path_reference(g: nx.Graph):
    """PGB's cal_diam, average_shortest_path_length_custom and distance_distribution, by networkx."""
    diameter = max(nx.diameter(g.subgraph(c)) for c in nx.connected_components(g))
    lengths = [d for _, row in nx.all_pairs_shortest_path_length(g) for d in row.values()]
    positive = [d for d in lengths if d > 0]
    aspl = sum(positive) / len(positive) if positive else math.inf
    return diameter, aspl, np.bincount(lengths)


@pytest.mark.parametrize("name,make", GRAPHS)
def test_every_query_equals_networkx(name, make):
    g = make()
    q = graph_queries(_adj(g))
    degrees = [d for _, d in g.degree()]
    assert q.num_nodes == g.number_of_nodes() and q.num_edges == g.number_of_edges()
    assert q.triangles == sum(nx.triangles(g).values()) // 3
    assert q.average_degree == pytest.approx(2 * g.number_of_edges() / g.number_of_nodes(), rel=1e-12)
    assert q.degree_variance == pytest.approx(statistics.variance(degrees), rel=1e-12)
    assert q.degree_histogram.tolist() == nx.degree_histogram(g)
    diameter, aspl, dist_hist = _pgb_path_reference(g)
    assert q.diameter == diameter
    assert q.average_shortest_path_length == pytest.approx(aspl, rel=1e-12)
    assert q.distance_histogram.tolist() == dist_hist.tolist()
    assert q.estimated == () and q.path_sources == g.number_of_nodes()
    assert q.transitivity == pytest.approx(nx.transitivity(g), rel=1e-12, abs=1e-15)
    assert q.average_clustering == pytest.approx(nx.average_clustering(g), rel=1e-12, abs=1e-15)
    # Louvain: networkx's, seeded, on the same graph
    reference = nx.community.louvain_communities(_sorted_build(g), seed=0)
    ours = [set(np.flatnonzero(q.communities == k).tolist()) for k in range(q.communities.max() + 1)]
    assert sorted(map(sorted, ours)) == sorted(map(sorted, reference))
    assert q.modularity == pytest.approx(nx.community.modularity(g, reference, weight=None), rel=1e-12)
    if name not in ("path",):  # the path: networkx's 0/0 warns; checked separately below
        assert q.degree_assortativity == pytest.approx(nx.degree_assortativity_coefficient(g), rel=1e-10)
    evc = nx.eigenvector_centrality(g, max_iter=100_000, tol=1e-13)  # what PGB runs
    np.testing.assert_allclose(q.eigenvector_centrality, [evc[v] for v in range(g.number_of_nodes())],
                               atol=1e-8)
    if nx.is_connected(g):
        evc_np = nx.eigenvector_centrality_numpy(g)
        np.testing.assert_allclose(q.eigenvector_centrality, [evc_np[v] for v in range(g.number_of_nodes())],
                                   atol=1e-10)
    assert np.linalg.norm(q.eigenvector_centrality) == pytest.approx(1.0, rel=1e-12)


def test_path_assortativity_and_star_known_values():
    # path on 7 nodes: ordered edge ends (1,2),(2,1),(2,2)x8 -> r = -1/3 (hand-computed Pearson)
    x = np.array([1, 2] * 2 + [2] * 8, dtype=float)
    y = np.array([2, 1] * 2 + [2] * 8, dtype=float)
    assert graph_queries(_adj(nx.path_graph(7))).degree_assortativity == pytest.approx(np.corrcoef(x, y)[0, 1])
    star = graph_queries(_adj(nx.star_graph(6)))
    assert star.degree_assortativity == pytest.approx(-1.0)
    assert star.diameter == 2 and star.triangles == 0 and star.transitivity == 0.0


def test_degenerate_leading_eigenvalue_follows_the_power_iteration():
    # two equal triangles share the largest eigenvalue 2; the path's sqrt(2) and the isolated node's 0 vanish
    g = _with_isolated(nx.disjoint_union_all([nx.complete_graph(3), nx.complete_graph(3), nx.path_graph(3)]), 1)
    c = eigenvector_centrality(_adj(g))
    np.testing.assert_allclose(c, [1 / math.sqrt(6)] * 6 + [0.0] * 4, atol=1e-12)
    evc = nx.eigenvector_centrality(g, max_iter=100_000, tol=1e-14)
    np.testing.assert_allclose(c, [evc[v] for v in range(g.number_of_nodes())], atol=1e-9)
    # C4 and C6 share the eigenvalue 2 with different Perron vectors: the projection of the
    # all-ones start weighs each by its sum, so every node ends equal (1/sqrt(10))
    cycles = nx.disjoint_union(nx.cycle_graph(4), nx.cycle_graph(6))
    np.testing.assert_allclose(eigenvector_centrality(_adj(cycles)), np.full(10, 1 / math.sqrt(10)), atol=1e-12)
    evc = nx.eigenvector_centrality(cycles, max_iter=100_000, tol=1e-14)
    np.testing.assert_allclose(eigenvector_centrality(_adj(cycles)), [evc[v] for v in range(10)], atol=1e-9)
    # a perfect matching: every component attains the top eigenvalue 1 -> uniform
    matching = nx.Graph([(0, 1), (2, 3), (4, 5), (6, 7)])
    np.testing.assert_allclose(eigenvector_centrality(_adj(matching)), np.full(8, 1 / math.sqrt(8)), atol=1e-12)
    # a component over the dense-batch size (eigsh path) next to a small one with a larger eigenvalue
    big = nx.disjoint_union(nx.cycle_graph(80), nx.complete_graph(4))
    evc = nx.eigenvector_centrality(big, max_iter=100_000, tol=1e-14)
    np.testing.assert_allclose(eigenvector_centrality(_adj(big)), [evc[v] for v in range(84)], atol=1e-9)
    big = nx.disjoint_union(nx.powerlaw_cluster_graph(120, 3, 0.3, seed=9), nx.cycle_graph(5))
    evc_np = nx.eigenvector_centrality(big, max_iter=100_000, tol=1e-14)
    np.testing.assert_allclose(eigenvector_centrality(_adj(big)), [evc_np[v] for v in range(125)], atol=1e-9)


def test_sampled_path_queries_are_labelled_and_close_to_exact():
    g = nx.disjoint_union(nx.connected_watts_strogatz_graph(1500, 6, 0.1, seed=4), nx.path_graph(6))
    adj = _adj(g)
    exact = graph_queries(adj, random_state=3)
    est = graph_queries(adj, exact_max_nodes=1000, num_sources=300, random_state=3)
    assert exact.estimated == () and exact.path_sources == 1506
    assert est.estimated == PATH_QUERIES == ("diameter", "average_shortest_path_length", "distance_histogram")
    assert est.path_sources == 300
    assert est.average_shortest_path_length == pytest.approx(exact.average_shortest_path_length, rel=0.03)
    assert exact.diameter - 1 <= est.diameter <= exact.diameter
    assert est.distance_histogram.sum() == pytest.approx(exact.distance_histogram.sum(), rel=0.05)
    assert kl_divergence(exact.distance_histogram, est.distance_histogram) < 0.01
    again = graph_queries(adj, exact_max_nodes=1000, num_sources=300, random_state=3)
    assert again.average_shortest_path_length == est.average_shortest_path_length  # seeded
    assert est.triangles == exact.triangles and est.modularity == exact.modularity  # not sampled


def test_a_graph_compared_with_itself_has_no_error():
    adj = _adj(nx.powerlaw_cluster_graph(200, 3, 0.3, seed=5))
    errors = compare_queries(adj, adj)
    assert list(errors) == [*PGB_COLUMNS, "eigenvector_centrality_mae_aligned"] and len(PGB_COLUMNS) == 15
    for key, value in errors.items():
        assert value == (1.0 if key == "community_nmi" else 0.0), key
    assert compare_queries(graph_queries(adj), adj) == errors


def test_compare_queries_known_values_against_networkx():
    g = nx.powerlaw_cluster_graph(250, 3, 0.3, seed=6)
    h = g.copy()
    nx.double_edge_swap(h, nswap=120, max_tries=10_000, seed=7)
    h.remove_edges_from(list(h.edges())[:40])
    e = compare_queries(_adj(g), _adj(h))

    def rel(x, y):
        return abs(x - y) / x

    assert e["num_nodes_re"] == 0.0
    assert e["num_edges_re"] == pytest.approx(40 / g.number_of_edges())
    assert e["triangles_re"] == pytest.approx(rel(sum(nx.triangles(g).values()), sum(nx.triangles(h).values())))
    assert e["transitivity_re"] == pytest.approx(rel(nx.transitivity(g), nx.transitivity(h)))
    assert e["average_clustering_re"] == pytest.approx(rel(nx.average_clustering(g), nx.average_clustering(h)))
    assert e["degree_assortativity_re"] == pytest.approx(
        abs(rel(nx.degree_assortativity_coefficient(g), nx.degree_assortativity_coefficient(h))))
    dg = np.array([d for _, d in g.degree()])
    dh = np.array([d for _, d in h.degree()])
    assert e["degree_variance_re"] == pytest.approx(rel(np.var(dg, ddof=1), np.var(dh, ddof=1)))
    (dia_g, aspl_g, dist_g), (dia_h, aspl_h, dist_h) = _pgb_path_reference(g), _pgb_path_reference(h)
    assert e["diameter_re"] == pytest.approx(rel(dia_g, dia_h))
    assert e["average_shortest_path_length_re"] == pytest.approx(rel(aspl_g, aspl_h))
    # PGB's KL, written out: shorter histogram padded with zero bins, machine-epsilon smoothing
    for key, (a, b) in {"degree_distribution_kl": (nx.degree_histogram(g), nx.degree_histogram(h)),
                        "distance_distribution_kl": (dist_g, dist_h)}.items():
        k = max(len(a), len(b))
        p = np.pad(np.asarray(a, float), (0, k - len(a)))
        r = np.pad(np.asarray(b, float), (0, k - len(b)))
        p, r = p / p.sum(), r / r.sum()
        assert e[key] == pytest.approx(float((p * np.log((p + EPS) / (r + EPS))).sum()), rel=1e-10)
    parts = []
    for graph in (g, h):
        labels = np.empty(250, dtype=int)
        for k, members in enumerate(nx.community.louvain_communities(_sorted_build(graph), seed=0)):
            labels[list(members)] = k
        parts.append(labels)
    assert e["community_nmi"] == pytest.approx(normalized_mutual_info_score(*parts))
    assert 0 < e["community_nmi"] < 1
    mod = [nx.community.modularity(x, nx.community.louvain_communities(_sorted_build(x), seed=0), weight=None)
           for x in (g, h)]
    assert e["modularity_re"] == pytest.approx(rel(*mod))
    evc = [nx.eigenvector_centrality(x, max_iter=100_000, tol=1e-13) for x in (g, h)]  # h may be disconnected
    top = [np.sort(list(c.values()))[::-1][:2] for c in evc]  # k = int(0.01 * 250) = 2
    assert e["eigenvector_centrality_mae"] == pytest.approx(np.abs(top[0] - top[1]).mean(), rel=1e-8)
    aligned = np.mean([abs(evc[0][v] - evc[1].get(v, 0.0)) for v in range(250)])
    assert e["eigenvector_centrality_mae_aligned"] == pytest.approx(aligned, rel=1e-8)


def test_graphs_without_edges_give_values_and_do_not_raise():
    empty = graph_queries(sp.csr_matrix((6, 6)))
    assert (empty.num_nodes, empty.num_edges, empty.triangles, empty.diameter) == (6, 0, 0, 0)
    assert empty.average_degree == 0.0 and empty.degree_variance == 0.0
    assert empty.degree_histogram.tolist() == nx.degree_histogram(nx.empty_graph(6)) == [6]
    assert empty.distance_histogram.tolist() == [6.0]
    assert empty.average_shortest_path_length == math.inf  # PGB: no connected pair
    assert empty.transitivity == nx.transitivity(nx.empty_graph(6)) == 0
    assert empty.average_clustering == nx.average_clustering(nx.empty_graph(6)) == 0
    assert math.isnan(empty.modularity) and math.isnan(empty.degree_assortativity)
    assert sorted(empty.communities.tolist()) == list(range(6))
    uniform = nx.eigenvector_centrality(nx.empty_graph(6))
    np.testing.assert_allclose(empty.eigenvector_centrality, [uniform[v] for v in range(6)])
    karate = _adj(nx.karate_club_graph())
    e = compare_queries(karate, sp.csr_matrix((34, 34)))  # warnings are errors in this test suite
    assert e["num_nodes_re"] == 0.0 and e["num_edges_re"] == 1.0 and e["triangles_re"] == 1.0
    assert e["average_shortest_path_length_re"] == math.inf
    assert math.isnan(e["modularity_re"]) and math.isnan(e["degree_assortativity_re"])
    # zero bins: karate has no isolated node, the empty graph only isolated ones
    p = np.array(nx.degree_histogram(nx.karate_club_graph()), float)[1:]
    p = p[p > 0] / p.sum()
    assert e["degree_distribution_kl"] == pytest.approx(float((p * np.log((p + EPS) / EPS)).sum()), rel=1e-12)
    assert 0 <= e["community_nmi"] < 1 and np.isfinite(e["eigenvector_centrality_mae"])
    single = graph_queries(sp.csr_matrix((1, 1)))
    assert math.isnan(single.degree_variance) and single.average_shortest_path_length == 0.0
    assert single.distance_histogram.tolist() == [1.0] and single.eigenvector_centrality.tolist() == [1.0]
    assert compare_queries(single, single)["community_nmi"] == 1.0


def test_different_node_counts_pad_with_isolated_nodes():
    g = nx.karate_club_graph()
    e = compare_queries(_adj(g), _adj(_with_isolated(g, 3)))
    assert e["num_nodes_re"] == pytest.approx(3 / 34)
    assert e["num_edges_re"] == 0.0 and e["triangles_re"] == 0.0 and e["diameter_re"] == 0.0
    assert e["eigenvector_centrality_mae"] == pytest.approx(0.0, abs=1e-12)
    assert e["eigenvector_centrality_mae_aligned"] == pytest.approx(0.0, abs=1e-12)
    assert e["degree_distribution_kl"] > 0  # isolated nodes appear in the degree histogram


def test_relative_error_and_kl_follow_pgb():
    assert relative_error(4, 5) == pytest.approx(0.25)
    assert relative_error(-0.5, -0.25) == pytest.approx(0.5)  # |(x - x') / x|, sign dropped
    assert relative_error(0, 0) == 0.0 and relative_error(0, 1) == pytest.approx(1e15)
    assert math.isnan(relative_error(float("nan"), 1.0)) and relative_error(2.0, math.inf) == math.inf
    p, q = np.array([3.0, 5.0, 2.0]), np.array([1.0, 1.0, 1.0])
    assert kl_divergence(p, q) == pytest.approx(stats.entropy(p, q), rel=1e-12)
    assert kl_divergence(p, q * 7) == kl_divergence(p, q)  # counts are normalised
    assert kl_divergence(p, p) == 0.0
    assert kl_divergence([1.0, 1.0], [2.0]) == pytest.approx(0.5 * np.log((0.5 + EPS) / (1 + EPS))
                                                             + 0.5 * np.log((0.5 + EPS) / EPS))
    assert math.isnan(kl_divergence([0.0], [1.0]))


def test_input_conventions_and_errors():
    g = nx.karate_club_graph()
    adj = _adj(g)
    noisy = adj * 3.0 + sp.eye(34) * 2.0
    assert graph_queries(noisy).scalars() == graph_queries(adj).scalars()  # self-loops, weights ignored
    import torch
    from torch_geometric.data import Data

    edges = torch.tensor(list(g.edges()), dtype=torch.long).T
    data = Data(edge_index=torch.cat([edges, edges.flip(0)], 1), num_nodes=36)  # 2 isolated nodes
    q = graph_queries(data)
    assert isinstance(q, GraphQueries) and q.num_nodes == 36 and q.num_edges == 78
    assert q.triangles == 45
    with pytest.raises(ValueError, match="square"):
        graph_queries(sp.csr_matrix((3, 4)))
    with pytest.raises(ValueError, match="not symmetric"):
        graph_queries(sp.csr_matrix(([1.0], ([0], [1])), shape=(3, 3)))
    with pytest.raises(ValueError, match="not symmetric"):
        graph_queries(Data(edge_index=edges, num_nodes=34))
    with pytest.raises(ValueError, match="no node"):
        graph_queries(sp.csr_matrix((0, 0)))
    with pytest.raises(ValueError, match="num_sources"):
        graph_queries(adj, exact_max_nodes=10, num_sources=0)
    with pytest.raises(ValueError, match="not symmetric"):
        compare_queries(adj, sp.csr_matrix(([1.0], ([0], [1])), shape=(34, 34)))
    with pytest.raises(ValueError):  # results are read-only
        q.eigenvector_centrality[0] = 1.0
