"""scripts/path_ceiling.py: path reachability against networkx, the ceiling against its oracle score."""

import importlib.util
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import roc_auc_score

_SPEC = importlib.util.spec_from_file_location(
    "path_ceiling", Path(__file__).parents[2] / "scripts" / "path_ceiling.py")
pc = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(pc)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("max_length", [1, 2, 3, 4, 5])
def test_within_length_is_the_shortest_path_distance_test(seed, max_length):
    graph = nx.gnm_random_graph(40, 45, seed=seed)
    adjacency = sp.csr_matrix(nx.to_scipy_sparse_array(graph, nodelist=range(40), format="csr"))
    pairs = np.array([(u, v) for u in range(40) for v in range(u + 1, 40)]).T
    lengths = dict(nx.all_pairs_shortest_path_length(graph))
    expected = np.array([lengths[u].get(v, np.inf) <= max_length for u, v in pairs.T])
    joined = pc.within_length(adjacency, pairs, max_length)
    assert 0 < expected.sum() < expected.size  # the case is not trivial
    np.testing.assert_array_equal(joined, expected)
    np.testing.assert_array_equal(pc.within_length(adjacency, pairs, max_length, chunk=7), expected)


@pytest.mark.parametrize("seed", range(5))
def test_ceiling_is_the_auc_of_the_best_score_blind_to_unjoined_pairs(seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, 60)
    labels[:2] = [0, 1]
    joined = rng.random(60) < np.where(labels == 1, 0.6, 0.1)
    reach_pos, reach_neg, indicator, ceiling = pc.path_ceiling(joined, labels)
    assert (reach_pos, reach_neg) == (joined[labels == 1].mean(), joined[labels == 0].mean())
    oracle = np.where(joined, 2.0 * labels - 1.0, 0.0)  # joined positives first, joined non-edges last
    assert ceiling == pytest.approx(roc_auc_score(labels, oracle), abs=1e-12)
    assert indicator == pytest.approx(roc_auc_score(labels, joined.astype(float)), abs=1e-12)
    # no score equal on the unjoined pairs beats it: random scores on the joined ones, either side
    for _ in range(50):
        score = np.where(joined, rng.normal(size=60), 0.0)
        assert roc_auc_score(labels, score) <= ceiling + 1e-12


def test_within_length_refuses_a_length_below_one():
    with pytest.raises(ValueError, match="max_length must be >= 1"):
        pc.within_length(sp.csr_matrix((3, 3)), np.array([[0], [1]]), 0)


def test_runs_at_indicator_counts_exact_matches_per_k():
    from types import SimpleNamespace

    def run(seed, k, auc):
        return SimpleNamespace(seed=seed, config={"k": k}, metrics={"test_auc": auc})

    indicator = {(0, 2): 0.75, (1, 2): 0.70, (0, 3): 0.80, (1, 3): 0.81}
    runs = [run(0, 2, 0.75), run(1, 2, 0.70 + 1e-12), run(1, 2, 0.7001),  # k=2: two exact, one not
            run(0, 3, 0.81), run(1, 3, 0.81),                            # k=3: seed 0 misses, seed 1 hits
            run(2, 3, 0.80), run(0, 4, 0.80), run(0, None, 0.75)]        # no indicator entry: skipped
    assert pc.runs_at_indicator(runs, indicator) == {2: (2, 3), 3: (1, 2)}
    assert pc.runs_at_indicator([], indicator) == {2: (0, 0), 3: (0, 0)}
