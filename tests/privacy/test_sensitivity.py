"""The dependency bounds M against brute force: toggle every edge, count changed subgraphs."""

import numpy as np
import pytest

from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.linkpred.dependency import max_contextual_neighbours
from graphpriv.linkpred.examples import training_links
from graphpriv.linkpred.projection import project_degree
from graphpriv.linkpred.subgraphs import Extractor, extract_subgraphs
from graphpriv.privacy.sensitivity import (
    eq6,
    group_size,
    neighbourhood_bound,
    path_bound,
    path_bound_paper,
)
from graphpriv.testing.graphs import random_graph


def test_known_values():
    assert path_bound(2, 7) == 14
    assert path_bound(3, 5, 1.0) == 2 * 5 + 25 + 2 * 5  # h = 1
    assert path_bound(4, 5, 1.0) == 4 * 5 + 2 * 5 * min(10, 5 + 25)  # even k: corrected
    assert path_bound(5, 3, 1.0) == (2 * 3 + 2 * 9) + 9 * min(6, 9) + 2 * (3 + 9)
    for theta in (2, 3, 7, 40):
        for lam in (0.5, 1.0, 2.0):
            for k in (3, 5):  # odd k: the spec's fixed Eq. 6
                assert path_bound(k, theta, lam) == int(np.ceil(eq6(theta, lam, h=(k - 1) // 2)))
            assert path_bound(4, theta, lam) >= path_bound(3, theta, lam)
            assert path_bound(6, theta, lam) >= path_bound(5, theta, lam)
            assert path_bound_paper(k=4, theta=theta, lam=lam) >= path_bound(4, theta, lam)
    assert neighbourhood_bound(1, 5, 1.0) == 2 * (25 + 10)
    assert neighbourhood_bound(2, 3, 0.0) == 27 + 6 + 18
    assert group_size(10) == 11
    assert path_bound_paper(3, 5) == path_bound(5, 5)  # the paper's h makes k=3 cost like k=5
    # the path subgraph never needs more than the neighbourhood subgraph of the same reach
    for theta in (2, 5, 20):
        assert path_bound(3, theta) <= neighbourhood_bound(1, theta)
        assert path_bound(5, theta) <= neighbourhood_bound(2, theta)


@pytest.mark.parametrize("bad", [{"k": 1}, {"k": 7}, {"theta": 0}])
def test_bad_parameters(bad):
    args = {"k": 3, "theta": 3, **bad}
    with pytest.raises(ValueError):
        path_bound(args["k"], args["theta"])
    if "theta" in bad:
        with pytest.raises(ValueError):
            neighbourhood_bound(1, 0)
    with pytest.raises(ValueError, match="'h'"):
        neighbourhood_bound(0, 3)


def _signatures(adj, links, extractor, k, h):
    s = extract_subgraphs(adj, links, np.zeros(links.shape[1]), extractor=extractor, k=k, h=h)
    n = adj.shape[0]
    out = []
    for i in range(links.shape[1]):
        e = s.edges[:, s.edge_ptr[i]:s.edge_ptr[i + 1]]
        nodes = np.sort(s.nodes[s.node_ptr[i]:s.node_ptr[i + 1]])
        out.append((tuple(np.sort(e[0] * n + e[1]).tolist()), tuple(nodes.tolist())))
    return out


def _brute_force_max_lsn(pairs, num_nodes, links, extractor, k, h, theta):
    """max over single-edge changes (removal, or addition keeping max degree <= theta) of the
    number of training subgraphs that change, the changed edge's own example excluded."""
    base = _signatures(to_csr(pairs, num_nodes), links, extractor, k, h)
    codes = set(map(tuple, pairs.T.tolist()))
    degree = np.bincount(pairs.ravel(), minlength=num_nodes)
    changes = [pairs[:, [i]] for i in range(pairs.shape[1])]
    additions = [(a, b) for a in range(num_nodes) for b in range(a + 1, num_nodes)
                 if (a, b) not in codes and degree[a] < theta and degree[b] < theta]
    worst = 0
    for i, change in enumerate(changes + [np.array([[a], [b]]) for a, b in additions]):
        if i < len(changes):
            keep = np.ones(pairs.shape[1], bool)
            keep[i] = False
            new_pairs = pairs[:, keep]
        else:
            new_pairs = np.concatenate([pairs, change], axis=1)
        after = _signatures(to_csr(new_pairs, num_nodes), links, extractor, k, h)
        own = {(int(change[0, 0]), int(change[1, 0])), (int(change[1, 0]), int(change[0, 0]))}
        changed = sum(1 for j, (x, y) in enumerate(zip(base, after))
                      if x != y and (int(links[0, j]), int(links[1, j])) not in own)
        worst = max(worst, changed)
    return worst


@pytest.mark.parametrize("theta", [2, 3, 4])
@pytest.mark.parametrize("extractor,k,h", [("path", 2, 1), ("path", 3, 1), ("path", 4, 1), ("path", 5, 1),
                                            ("neighbourhood", 2, 1), ("neighbourhood", 2, 2)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bound_dominates_brute_force(theta, extractor, k, h, seed):
    graph = random_graph(18, 0.35, seed=seed)
    rng = np.random.default_rng(seed)
    pairs = project_degree(undirected_pairs(graph.edge_index), graph.num_nodes, theta=theta, rng=rng)
    assert np.bincount(pairs.ravel(), minlength=graph.num_nodes).max() <= theta
    links, _ = training_links(pairs, graph.num_nodes, lam=1.0, theta=theta, rng=rng)
    ext = Extractor(extractor)
    bound = path_bound(k, theta) if ext is Extractor.PATH else neighbourhood_bound(h, theta)
    observed = _brute_force_max_lsn(pairs, graph.num_nodes, links, ext, k, h, theta)
    assert observed <= bound
    s = extract_subgraphs(to_csr(pairs, graph.num_nodes), links, np.zeros(links.shape[1]),
                          extractor=ext, k=k, h=h)
    # the cheap check used at run time agrees with brute force on removals
    assert max_contextual_neighbours(s, graph.num_nodes) <= observed


def test_spec_formula_for_even_k_is_violated():
    """Regression: the spec's Eq. 6 with h = floor((k-1)/2) is not a bound for k = 4."""
    worst = 0
    for seed in range(3):
        graph = random_graph(18, 0.35, seed=seed)
        rng = np.random.default_rng(seed)
        pairs = project_degree(undirected_pairs(graph.edge_index), graph.num_nodes, theta=4, rng=rng)
        links, _ = training_links(pairs, graph.num_nodes, lam=1.0, theta=4, rng=rng)
        worst = max(worst, _brute_force_max_lsn(pairs, graph.num_nodes, links, Extractor.PATH, 4, 1, 4))
    assert worst > eq6(4, 1.0, h=(4 - 1) // 2)
    assert worst <= path_bound(4, 4, 1.0)
