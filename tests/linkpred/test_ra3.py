"""RA3 against a path-enumerating reference, and the ramp AUC against its double loop."""

import itertools

import networkx as nx
import numpy as np
import pytest

from graphpriv.data.graph import to_csr
from graphpriv.linkpred.heuristics import resource_allocation_paths3
from graphpriv.linkpred.ramp_auc import ramp_auc_sum


def _reference(graph, u, v):
    degree = dict(graph.degree())
    return sum(1.0 / (degree[p[1]] * degree[p[2]]) for p in nx.all_simple_paths(graph, u, v, cutoff=3) if len(p) == 4)


@pytest.mark.parametrize("seed", range(6))
def test_ra3_equals_the_sum_over_simple_length_3_paths(seed):
    rng = np.random.default_rng(seed)
    graph = nx.gnp_random_graph(11, float(rng.uniform(0.2, 0.8)), seed=seed)
    pairs = np.array(list(itertools.permutations(range(11), 2)) + [(3, 3)]).T
    adj = to_csr(np.array(graph.edges).T.reshape(2, -1), 11)
    got = resource_allocation_paths3(adj, pairs, batch_size=5)
    expected = np.array([_reference(graph, u, v) if u != v else 0.0 for u, v in pairs.T])
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert resource_allocation_paths3(adj, np.zeros((2, 0), dtype=np.int64)).shape == (0,)


def test_ra3_of_an_edge_ignores_the_edge_itself():
    """Adding (u, v) leaves RA3(u, v) as it was: no simple u-v path of length 3 uses it."""
    graph = nx.gnp_random_graph(12, 0.4, seed=3)
    u, v = next((a, b) for a, b in itertools.combinations(range(12), 2) if not graph.has_edge(a, b))
    before = resource_allocation_paths3(to_csr(np.array(graph.edges).T, 12), np.array([[u], [v]]))
    graph.add_edge(u, v)
    after = resource_allocation_paths3(to_csr(np.array(graph.edges).T, 12), np.array([[u], [v]]))
    assert before > 0 and after == pytest.approx(before)  # interior nodes are never u or v


@pytest.mark.parametrize("margin", [0.05, 0.5, 3.0])
def test_ramp_auc_sum_equals_the_double_loop(margin):
    rng = np.random.default_rng(0)
    positive = np.round(rng.normal(1, 1, 40), 1)  # ties and exact ramp ends
    reference = np.round(rng.normal(0, 1, 60), 1)
    ramp = np.clip((positive[:, None] - reference[None, :] + margin) / (2 * margin), 0, 1)
    assert ramp_auc_sum(positive, reference, margin=margin) == pytest.approx(ramp.mean(axis=1).sum(), abs=1e-9)


def test_ramp_auc_sum_refuses_bad_input():
    with pytest.raises(ValueError, match="at least one"):
        ramp_auc_sum(np.ones(2), np.zeros(0), margin=1.0)
    with pytest.raises(ValueError, match="margin"):
        ramp_auc_sum(np.ones(2), np.ones(2), margin=0.0)
    with pytest.raises(ValueError, match="finite"):
        ramp_auc_sum(np.array([np.nan]), np.ones(2), margin=1.0)
