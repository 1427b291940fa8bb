"""evaluation.generators: the synthesis protocol of the edge-level generators (tmf, dp-1k), run
through the registry as `graphpriv run` does."""

import math

import numpy as np
import pytest

from graphpriv.data.graph import to_csr
from graphpriv.data.release import PublishedGraph
from graphpriv.errors import ConfigError
from graphpriv.evaluation.generators import evaluate_generated
from graphpriv.experiments.runner import run_method
from graphpriv.experiments.store import ResultStore
from graphpriv.memo import Memo
from graphpriv.metrics.graph_queries import PGB_COLUMNS, compare_queries
from graphpriv.testing.graphs import labelled_sbm


@pytest.fixture(scope="module")
def graph():
    return labelled_sbm(120, 3, p_in=0.15, p_out=0.01, seed=3)


@pytest.mark.parametrize("method", ["tmf", pytest.param("dp-1k", marks=pytest.mark.slow),
                                    pytest.param("privgraph", marks=pytest.mark.slow),
                                    pytest.param("edgerand-synthesis", marks=pytest.mark.slow), "lapgraph-synthesis"])
def test_a_run_reports_pgb_queries_utility_attack_and_privacy(graph, method, tmp_path):
    store = tmp_path / "r.sqlite"
    result = run_method(method, graph, seed=5, overrides={"epsilon": 8.0}, store=store)
    assert set(PGB_COLUMNS) - set(result.info["undefined_queries"]) <= set(result.metrics)
    assert {"lp_auc", "nc_f1", "attack_auc_gae-sim"} <= set(result.metrics)
    assert result.metrics["num_nodes_re"] == 0.0  # N is public and kept
    assert all(math.isfinite(v) for v in result.metrics.values())
    assert result.privacy.unit == "edge" and result.privacy.epsilon == pytest.approx(8.0, abs=1e-3)
    assert result.release.num_nodes == graph.num_nodes and result.info["synthetic_edges"] == result.release.num_edges
    names = {b.name for b in result.baselines}
    assert {"chance", "input graph"} <= names
    stored = ResultStore(store).find(method, result.dataset, 5, result.config)
    assert stored is not None and stored.metrics == result.metrics  # the JSON round trip keeps every metric
    skip = "utility" if method.endswith("-synthesis") else "evaluate"
    again = run_method(method, graph, seed=5, overrides={"epsilon": 8.0, skip: False, "attacks": "none"})
    assert np.array_equal(again.release.pairs, result.release.pairs) and not again.metrics  # one seed, one graph


def test_query_errors_are_compare_queries_of_the_training_and_synthetic_graphs(graph):
    rng = np.random.default_rng(0)
    pairs = np.unique(np.sort(rng.integers(0, 120, size=(2, 300)), axis=0), axis=1)
    pairs = pairs[:, pairs[0] != pairs[1]]
    train = PublishedGraph(pairs[:, :200], 120)
    synthetic = PublishedGraph(pairs[:, 100:], 120)

    class Split:
        test_pos = pairs[:, :20]
        test_neg = np.stack([np.arange(20), np.arange(20) + 50])

    metrics, info = evaluate_generated(synthetic, train, Split, None, seed=1)
    expected = compare_queries(to_csr(train.pairs, 120), to_csr(synthetic.pairs, 120), random_state=1)
    for key, value in expected.items():
        assert metrics[key] == pytest.approx(value)
    assert info["undefined_queries"] == [] and "lp_auc" in metrics


def test_an_edgeless_synthetic_graph_gives_defined_values_not_a_crash():
    train = PublishedGraph(np.array([[0, 1, 2], [1, 2, 3]]), 6)
    empty = PublishedGraph(np.zeros((2, 0), dtype=np.int64), 6)
    metrics, info = evaluate_generated(empty, train, None, None, seed=0)
    assert "modularity_re" in info["undefined_queries"] and "modularity_re" not in metrics
    assert metrics["num_edges_re"] == pytest.approx(1.0) and "lp_auc" not in metrics


def test_bad_protocol_settings_are_refused_before_any_work(graph):
    with pytest.raises(ConfigError, match="attack"):
        run_method("tmf", graph, seed=0, overrides={"attacks": "nope"})
    with pytest.raises(ConfigError, match="epsilon"):
        run_method("dp-1k", graph, seed=0, overrides={"epsilon": 0})


def test_a_relative_error_against_an_original_zero_is_undefined_not_huge():
    star = PublishedGraph(np.array([[0, 0, 0, 0], [1, 2, 3, 4]]), 6)  # triangle-free: 0 triangles
    triangle = PublishedGraph(np.array([[0, 0, 1, 4], [1, 2, 2, 5]]), 6)

    class Split:
        test_pos = np.array([[0], [3]])
        test_neg = np.array([[1], [5]])

    metrics, info = evaluate_generated(triangle, star, Split, None, seed=0)
    assert {"triangles_re", "transitivity_re", "average_clustering_re"} <= set(info["undefined_queries"])
    assert "triangles_re" not in metrics and metrics["num_edges_re"] == 0.0


def test_the_input_graphs_ceiling_is_computed_once_per_graph_split_and_seed(graph, monkeypatch):
    from graphpriv.data.splits import link_split
    from graphpriv.evaluation import synthesis

    monkeypatch.setattr(synthesis, "_INPUT_UTILITY", Memo(64))
    calls = []
    real = synthesis.graph_utility
    monkeypatch.setattr(synthesis, "graph_utility", lambda *a, **k: calls.append(1) or real(*a, **k))
    split = link_split(graph, val_ratio=0.0, test_ratio=0.2, seed=4)
    train = PublishedGraph(split.train_edge_index, int(graph.num_nodes))
    first = synthesis.input_graph_utility(train, split, graph.y, seed=4)
    assert first == real(train, split, graph.y, seed=4)  # the memo holds what a fresh computation gives
    first["lp_auc"] = -1.0  # a caller's change does not reach the memo
    again = synthesis.input_graph_utility(PublishedGraph(split.train_edge_index.copy(), int(graph.num_nodes)), split,
                                          graph.y.clone(), seed=4)
    assert len(calls) == 1 and again == real(train, split, graph.y, seed=4)
    synthesis.input_graph_utility(train, split, graph.y, seed=5)  # another seed: computed
    synthesis.input_graph_utility(train, split, None, seed=4)  # no labels: computed
    other = link_split(graph, val_ratio=0.0, test_ratio=0.2, seed=6)
    synthesis.input_graph_utility(train, other, graph.y, seed=4)  # other held-out pairs: computed
    assert len(calls) == 4
    synthesis._INPUT_UTILITY.size = 2
    synthesis.input_graph_utility(train, split, graph.y, seed=7)
    assert len(synthesis._INPUT_UTILITY.items) == 2


def test_the_input_graphs_queries_are_computed_once_per_graph_and_seed(graph, monkeypatch):
    from graphpriv.evaluation import synthesis

    monkeypatch.setattr(synthesis, "_INPUT_QUERIES", Memo(64))
    calls = []
    real = synthesis.graph_queries
    monkeypatch.setattr(synthesis, "graph_queries", lambda *a, **k: calls.append(1) or real(*a, **k))
    train = PublishedGraph(np.asarray(graph.edge_index[:, graph.edge_index[0] < graph.edge_index[1]]), 120)
    synthetic = PublishedGraph(train.pairs[:, ::2].copy(), 120)
    first = synthesis.query_errors(synthetic, train, seed=1)
    again = synthesis.query_errors(synthetic, train, seed=1)  # the input's queries from the memo, the synthetic's fresh
    assert first == again and len(calls) == 3
    synthesis.query_errors(synthetic, train, seed=2)  # another seed: both computed
    assert len(calls) == 5
