"""Total influence of one edge on RA and RA3, and the ramp-AUC utility's sensitivity: brute force
over every single-edge change of small graphs (no bound is loosened to pass)."""

import itertools

import networkx as nx
import numpy as np
import pytest

from graphpriv.data.graph import to_csr
from graphpriv.linkpred.heuristics import resource_allocation, resource_allocation_paths3
from graphpriv.linkpred.ramp_auc import ramp_auc_sum
from graphpriv.methods.heuristic_mix import (
    FEATURES,
    MEMBERSHIP,
    directions,
    mix_features,
    positive_sample,
    reference_pairs,
)
from graphpriv.privacy.influence import RA3_INFLUENCE, RA_INFLUENCE, ramp_utility_sensitivity


def _graphs(count, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(4, 10))
        yield nx.gnp_random_graph(n, float(rng.uniform(0.15, 0.95)), seed=int(rng.integers(1 << 30)))


def _toggled(graph):
    """Every graph one edge away (each pair's edge added or removed)."""
    for a, b in itertools.combinations(graph.nodes, 2):
        other = graph.copy()
        (other.remove_edge if other.has_edge(a, b) else other.add_edge)(a, b)
        yield other


def _adj(graph):
    edges = np.array(graph.edges, dtype=np.int64).reshape(-1, 2).T
    return to_csr(edges, graph.number_of_nodes()), edges


def test_total_influence_of_one_edge_is_below_the_proven_bounds():
    worst = np.zeros(2)
    for graph in _graphs(60, seed=0):
        pairs = np.array(list(itertools.combinations(graph.nodes, 2))).T
        adj, _ = _adj(graph)
        before = np.stack([resource_allocation(adj, pairs), resource_allocation_paths3(adj, pairs)])
        for other in _toggled(graph):
            after_adj, _ = _adj(other)
            after = np.stack([resource_allocation(after_adj, pairs), resource_allocation_paths3(after_adj, pairs)])
            worst = np.maximum(worst, np.abs(after - before).sum(axis=1))
    assert worst[0] < RA_INFLUENCE and worst[1] < RA3_INFLUENCE
    assert worst[0] > 1 and worst[1] > 1  # the graphs do exercise the bounds


def test_ra_influence_approaches_its_bound_on_two_stars():
    """Two stars of d leaves joined at their centres: RA's total change is
    2 ((d - 1) / (2 (d + 1)) + d / (d + 1)) -> 3, so the constant 3 cannot be lowered."""
    d = 60
    graph = nx.Graph()
    graph.add_edges_from((0, i) for i in range(2, d + 2))
    graph.add_edges_from((1, i) for i in range(d + 2, 2 * d + 2))
    pairs = np.array(list(itertools.combinations(graph.nodes, 2))).T
    adj, _ = _adj(graph)
    other = graph.copy()
    other.add_edge(0, 1)
    after, _ = _adj(other)
    total = np.abs(resource_allocation(after, pairs) - resource_allocation(adj, pairs)).sum()
    assert total == pytest.approx(2 * ((d - 1) / (2 * (d + 1)) + d / (d + 1)))
    assert 2.9 < total < RA_INFLUENCE


@pytest.mark.parametrize("max_positives", [3, 1000])
def test_utility_moves_by_at_most_its_sensitivity(max_positives):
    """U(w) of every direction on neighbouring graphs, with the same reference pairs and keyed
    sample (a sample of 3 edges exercises the membership changes)."""
    margin, angles = 0.3, 9
    grid = directions(angles)
    worst_ratio = 0.0
    for graph in _graphs(15, seed=1):
        n = graph.number_of_nodes()
        limit = min(max_positives, n * (n - 1) // 2)
        references = reference_pairs(n, 2 * limit, np.random.default_rng(5))
        bound = ramp_utility_sensitivity(margin=margin, influences=tuple(FEATURES.values()), positives=limit,
                                         references=references.shape[1], membership=MEMBERSHIP)

        def utility(g, limit=limit, references=references):
            adj, edges = _adj(g)
            edges = np.sort(edges, axis=0) if edges.size else edges.reshape(2, 0)
            pos = mix_features(adj, positive_sample(edges, limit, seed=3))
            ref = mix_features(adj, references)
            return np.array([ramp_auc_sum(pos @ w, ref @ w, margin=margin) for w in grid])

        base = utility(graph)
        for other in _toggled(graph):
            worst_ratio = max(worst_ratio, np.abs(utility(other) - base).max() / bound)
    assert 0.05 < worst_ratio <= 1.0  # the bound is loose (worst case of every term at once), never exceeded


def test_keyed_sample_changes_by_at_most_two_members():
    rng = np.random.default_rng(0)
    pairs = np.unique(np.sort(rng.integers(0, 50, size=(2, 300)), axis=0), axis=1)
    pairs = pairs[:, pairs[0] != pairs[1]]
    base = {tuple(p) for p in positive_sample(pairs, 40, seed=9).T}
    for j in range(pairs.shape[1]):
        fewer = np.delete(pairs, j, axis=1)
        assert len(base ^ {tuple(p) for p in positive_sample(fewer, 40, seed=9).T}) <= 2  # one in, one out
    assert base != {tuple(p) for p in positive_sample(pairs, 40, seed=10).T}  # the key depends on the seed


def test_reference_pairs_are_distinct_upper_pairs_of_the_right_count():
    rng = np.random.default_rng(1)
    for n, count in [(2, 5), (7, 21), (7, 10), (200, 3000)]:
        pairs = reference_pairs(n, count, rng)
        total = n * (n - 1) // 2
        assert pairs.shape == (2, min(count, total))
        assert (pairs[0] < pairs[1]).all() and pairs.min() >= 0 and pairs.max() < n
        assert np.unique(pairs, axis=1).shape[1] == pairs.shape[1]
    every = reference_pairs(6, 15, rng)
    assert {tuple(p) for p in every.T} == set(itertools.combinations(range(6), 2))


def test_sensitivity_formula_and_its_errors():
    assert ramp_utility_sensitivity(margin=1.0, influences=(3.0, 4.0), positives=10, references=20) == \
        pytest.approx(1 + 5 / 2 * 1.5)
    assert MEMBERSHIP == 1.0
    for bad in [{"margin": 0.0}, {"influences": (-1.0,)}, {"positives": 0}, {"references": 0}]:
        args = {"margin": 1.0, "influences": (3.0,), "positives": 1, "references": 1} | bad
        with pytest.raises(ValueError):
            ramp_utility_sensitivity(**args)
