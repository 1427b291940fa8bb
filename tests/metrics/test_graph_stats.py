import itertools
import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from graphpriv.metrics.graph_stats import (
    claw_count,
    degree_ks_distance,
    graph_stats,
    largest_component,
    path_statistics,
    relative_edge_distribution_entropy,
    structural_errors,
    triangle_count,
    wedge_count,
)

GRAPHS = [
    ("gnp", lambda: nx.gnp_random_graph(60, 0.08, seed=1)),  # several components
    ("powerlaw", lambda: nx.powerlaw_cluster_graph(150, 3, 0.4, seed=2)),
    ("karate", nx.karate_club_graph),
    ("two-cliques", lambda: nx.disjoint_union(nx.complete_graph(6), nx.path_graph(9))),
]


def _adj(g: nx.Graph) -> sp.csr_matrix:
    return sp.csr_matrix(nx.to_scipy_sparse_array(g, nodelist=range(g.number_of_nodes()), format="csr"))


@pytest.mark.parametrize("name,make", GRAPHS)
def test_statistics_equal_networkx(name, make):
    g = make()
    s = graph_stats(_adj(g))
    lcc = g.subgraph(max(nx.connected_components(g), key=len))
    degrees = np.array([d for _, d in g.degree()])
    assert s.triangles == sum(nx.triangles(g).values()) // 3
    assert s.wedges == sum(math.comb(int(d), 2) for d in degrees)
    assert s.lcc == lcc.number_of_nodes() and s.num_edges == g.number_of_edges()
    assert s.cpl == pytest.approx(nx.average_shortest_path_length(lcc), rel=1e-12)
    assert s.diameter == nx.diameter(lcc) and s.path_sources == lcc.number_of_nodes()
    p = degrees[degrees > 0] / degrees.sum()
    assert s.rede == pytest.approx(-(p * np.log(p)).sum() / np.log(g.number_of_nodes()), rel=1e-12)


def test_claws_and_triangles_equal_brute_force_enumeration():
    g = nx.gnp_random_graph(14, 0.4, seed=3)
    adj = _adj(g)
    stars = sum(1 for c in g for trio in itertools.combinations(g[c], 3))  # centre + 3 leaves
    tris = sum(1 for a, b, c in itertools.combinations(g, 3) if g.has_edge(a, b) and g.has_edge(b, c)
               and g.has_edge(a, c))
    assert claw_count(adj) == stars and triangle_count(adj) == tris
    assert wedge_count(adj) == sum(1 for c in g for _ in itertools.combinations(g[c], 2))


def test_self_loops_and_weights_are_ignored_and_asymmetry_is_an_error():
    g = nx.karate_club_graph()
    adj = _adj(g).astype(np.float64) * 3.0
    looped = adj + sp.eye(adj.shape[0]) * 2.0
    assert graph_stats(looped) == graph_stats(_adj(g))
    directed = sp.csr_matrix(([1.0], ([0], [1])), shape=(3, 3))
    with pytest.raises(ValueError, match="not symmetric"):
        triangle_count(directed)
    with pytest.raises(ValueError, match="square"):
        wedge_count(sp.csr_matrix((3, 4)))
    with pytest.raises(ValueError, match="one edge"):
        relative_edge_distribution_entropy(sp.csr_matrix((5, 5)))


def test_sampled_path_statistics_estimate_cpl_and_bound_the_diameter():
    g = nx.connected_watts_strogatz_graph(400, 6, 0.1, seed=4)
    adj = _adj(g)
    exact_cpl, exact_diam, n = path_statistics(adj)
    assert n == 400
    cpl, diam, sources = path_statistics(adj, exact_max_nodes=100, num_sources=80, seed=0)
    assert sources == 80 and diam <= exact_diam
    assert cpl == pytest.approx(exact_cpl, rel=0.05)
    assert path_statistics(adj, exact_max_nodes=100, num_sources=80, seed=0)[0] == cpl  # seeded


def test_degree_ks_distance_equals_scipy():
    a = _adj(nx.gnp_random_graph(80, 0.1, seed=5))
    b = _adj(nx.barabasi_albert_graph(120, 2, seed=6))
    da, db = np.asarray(a.sum(1)).ravel(), np.asarray(b.sum(1)).ravel()
    assert degree_ks_distance(a, b) == pytest.approx(stats.ks_2samp(da, db).statistic, abs=1e-12)
    assert degree_ks_distance(a, a) == 0.0


def test_structural_errors_known_values():
    # original: a triangle plus a pendant edge; synthetic: a path on 4 nodes
    tri = _adj(nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3)]))
    path = _adj(nx.path_graph(4))
    e = structural_errors(tri, path)
    assert e["tc"] == 1.0  # 1 triangle -> 0
    assert e["wc"] == pytest.approx(abs(2 - 5) / 5)  # wedges: degrees (2,2,3,1) -> 1+1+3 = 5; path: 2
    assert e["cc"] == 1.0  # one claw at node 2 -> none
    assert e["lcc"] == 0.0
    assert e["diameter"] == pytest.approx(1 / 2)  # 2 -> 3
    cpl_tri, cpl_path = (1 + 1 + 2 + 1 + 2 + 1) / 6, (1 + 2 + 3 + 1 + 2 + 1) / 6
    assert e["cpl"] == pytest.approx(abs(cpl_path - cpl_tri) / cpl_tri)
    assert e["ks"] == pytest.approx(0.25)  # CDFs at degree 2: 3/4 vs 1; elsewhere equal or closer
    assert structural_errors(graph_stats(tri), path, original_adj=tri) == e
    with pytest.raises(ValueError, match="original_adj"):
        structural_errors(graph_stats(tri), path)


def test_largest_component_ties_take_the_smallest_id():
    g = nx.disjoint_union(nx.path_graph(3), nx.path_graph(3))
    assert largest_component(_adj(g)).tolist() == [0, 1, 2]


def test_triangles_of_a_heavy_tailed_graph_without_forming_a_squared():
    g = nx.barabasi_albert_graph(3000, 5, seed=7)
    assert triangle_count(_adj(g)) == sum(nx.triangles(g).values()) // 3
