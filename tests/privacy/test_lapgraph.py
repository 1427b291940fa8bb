import numpy as np
import pytest
from dp_accounting import dp_event

from graphpriv.data.graph import pair_codes, undirected_pairs
from graphpriv.evaluation.link import run_lapgraph_sgnn as run
from graphpriv.experiments.registry import make_config
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.lapgraph import lapgraph
from graphpriv.privacy.units import PrivacyUnit
from graphpriv.testing.graphs import random_graph


@pytest.fixture(scope="module")
def pairs():
    return undirected_pairs(random_graph(70, 0.1, seed=0).edge_index)


def test_blocking_does_not_change_the_release(pairs):
    a, _ = lapgraph(pairs, 70, epsilon=2.0, rng=np.random.default_rng(1), block_entries=50)
    b, _ = lapgraph(pairs, 70, epsilon=2.0, rng=np.random.default_rng(1), block_entries=10**7)
    assert np.array_equal(a, b)


def test_release_shape_and_high_epsilon_limit(pairs):
    out, events = lapgraph(pairs, 70, epsilon=2.0, rng=np.random.default_rng(0))
    assert (out[0] < out[1]).all() and out.max() < 70
    assert np.unique(pair_codes(out, 70)).size == out.shape[1]
    assert abs(out.shape[1] - pairs.shape[1]) < 200  # Laplace(1/0.02) on the count
    exact, _ = lapgraph(pairs, 70, epsilon=1e4, rng=np.random.default_rng(0))
    assert np.array_equal(np.sort(pair_codes(exact, 70)), np.sort(pair_codes(pairs, 70)))
    assert events == [dp_event.LaplaceDpEvent(1 / 0.02), dp_event.LaplaceDpEvent(1 / 1.98)]


def test_pld_ledger_gives_the_pure_dp_sum(pairs):
    _, events = lapgraph(pairs, 70, epsilon=3.0, rng=np.random.default_rng(0))
    ledger = Ledger(PrivacyUnit.EDGE, delta=1e-5, accountant="pld")
    for e in events:
        ledger.spend(e, phase="lapgraph")
    assert ledger.epsilon() <= 3.0 + 1e-3
    assert ledger.epsilon() > 2.9


def test_lapgraph_sgnn_reports_both_phases():
    graph = random_graph(100, 0.08, seed=3)
    result = run(make_config("lapgraph-sgnn", {"epsilon": 2.0, "epochs": 2}), graph, seed=0)
    p = result.privacy
    assert [ph.name for ph in p.phases] == ["edge count", "perturbation"]
    assert p.accountant == "pld" and p.epsilon <= 2.0 + 1e-3
    assert result.info["released_edges"] > 0


def test_bad_input():
    with pytest.raises(ValueError, match="epsilon"):
        lapgraph(np.array([[0], [1]]), 3, epsilon=0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="count_fraction"):
        lapgraph(np.array([[0], [1]]), 3, epsilon=1, rng=np.random.default_rng(0), count_fraction=1.5)


def test_lapgraph_sgnn_notes_describe_post_processing():
    graph = random_graph(80, 0.1, seed=4)
    result = run(make_config("lapgraph-sgnn", {"epsilon": 2.0, "epochs": 1}), graph, seed=0)
    assert any("post-processing" in note for note in result.privacy.notes)
    assert not any("sampler" in note for note in result.privacy.notes)


def test_lapgraph_sgnn_records_the_requested_config():
    graph = random_graph(80, 0.1, seed=5)
    cfg = make_config("lapgraph-sgnn", {"epsilon": 2.0, "epochs": 1})
    result = run(cfg, graph, seed=0)
    assert result.config == cfg.model_dump(mode="json")
