"""The DP synthetic-graph generators (TmF, DP-1K) as estimators: fit / generate, privacy reports
against dp-accounting, files, twins, input handling and errors."""

import numpy as np
import pytest
import torch
from dp_accounting import dp_event
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from dp_accounting.privacy_accountant import NeighboringRelation
from torch_geometric.data import Data

from graphpriv.data.graph import undirected_pairs
from graphpriv.data.release import PublishedGraph
from graphpriv.errors import ConfigError, DatasetError, ModelFileError, NotFittedError, PrivacyError
from graphpriv.methods.dp_1k import DP1K
from graphpriv.methods.estimator import Estimator
from graphpriv.methods.generator import INPUT_NOTE, GraphGenerator
from graphpriv.methods.tmf import TmF
from graphpriv.testing.graphs import random_graph, undirected_edge_set

GENERATORS = [TmF, DP1K]


@pytest.fixture(scope="module")
def graph():
    return random_graph(80, 0.1, seed=3)


@pytest.mark.parametrize("cls", GENERATORS, ids=lambda c: c.__name__)
def test_fit_and_generate_give_undirected_simple_graphs_on_the_same_nodes(cls, graph):
    est = cls(epsilon=4.0, random_state=1)
    assert isinstance(est, GraphGenerator) and est.fit(graph) is est and est.is_fitted
    assert est.num_nodes_ == 80
    edges = undirected_edge_set(est.generate(seed=5), 80)
    assert edges == undirected_edge_set(est.generate(seed=5), 80)  # the same seed, the same graph
    assert undirected_edge_set(est.generate(), 80) == undirected_edge_set(est.generate(seed=est.random_state), 80)
    m = undirected_pairs(graph.edge_index).shape[1]
    assert 0.3 * m < len(edges) < 2 * m  # about the input's size at epsilon 4


def test_tmf_generate_returns_its_release_for_every_seed(graph):
    est = TmF(epsilon=6.0, random_state=2).fit(graph)
    assert isinstance(est.released_, PublishedGraph) and est.released_.num_nodes == 80
    for seed in (None, 0, 7):
        assert est.released_.equals(PublishedGraph.from_data(est.generate(seed=seed)))
    info = est.info_
    assert info["mode"] == "threshold" and info["released_edges"] == est.released_.num_edges
    assert 0 < info["p_non_edge"] < info["p_edge"] < 1 and info["eps_count"] == pytest.approx(0.6)
    topm = TmF(epsilon=6.0, mode="topm", random_state=2).fit(graph)
    assert topm.released_.num_edges == topm.info_["noisy_edge_count"]


def test_dp1k_release_and_fresh_graphs_per_seed(graph):
    est = DP1K(epsilon=2.0, random_state=3).fit(graph)
    seq = est.released_
    assert isinstance(seq, np.ndarray) and seq.dtype == np.int64 and seq.shape == (80,)
    assert (np.diff(seq) >= 0).all() and seq.min() >= 0 and seq.max() <= 79
    assert est.info_ == {"degree_sum": int(seq.sum()), "expected_multigraph_edges": seq.sum() / 2}
    a, b = est.generate(seed=1), est.generate(seed=2)
    assert not torch.equal(a.edge_index, b.edge_index)
    # a graph with those expected degrees: over graphs, the mean degree is about S / N (erasure loses a little)
    mean_degree = np.mean([est.generate(seed=s).edge_index.size(1) / 80 for s in range(20)])
    assert 0.85 * seq.sum() / 80 < mean_degree <= 1.02 * seq.sum() / 80
    close = DP1K(epsilon=30.0, random_state=0).fit(graph).released_  # little noise: Lap(1/15)
    true = np.sort(np.bincount(undirected_pairs(graph.edge_index).ravel(), minlength=80))
    assert np.abs(close - true).max() <= 1 and np.mean(close == true) > 0.9


def _pld_epsilon(events, delta):
    accountant = PLDAccountant(neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE)
    for event in events:
        accountant.compose(event)
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("cls,params,events", [
    (TmF, {"epsilon": 2.0, "count_fraction": 0.25},
     [dp_event.LaplaceDpEvent(1 / 0.5), dp_event.LaplaceDpEvent(1 / 1.5)]),
    (TmF, {"epsilon": 8.0, "mode": "topm", "delta": 1e-7},
     [dp_event.LaplaceDpEvent(1 / 0.8), dp_event.LaplaceDpEvent(1 / 7.2)]),
    (DP1K, {"epsilon": 1.5}, [dp_event.LaplaceDpEvent(1 / 1.5)]),
], ids=["tmf", "tmf-topm", "dp-1k"])
def test_privacy_report_is_what_dp_accounting_gives_for_the_same_events(cls, params, events, graph):
    est = cls(random_state=0, **params).fit(graph)
    report = est.privacy_report_
    delta = params.get("delta", 1e-5)
    assert report.unit == "edge" and report.neighboring_relation == "ADD_OR_REMOVE_ONE"
    assert "adding or removing one edge" in report.relation
    assert report.delta == delta and report.target_epsilon == params["epsilon"]
    assert report.epsilon == pytest.approx(_pld_epsilon(events, delta), rel=1e-12)
    assert report.epsilon <= params["epsilon"] + 1e-9  # pure DP: PLD never states more than the sum
    assert report.epsilon > 0.99 * params["epsilon"]
    assert [p.name for p in report.phases] == (["edge count", "cells"] if cls is TmF else ["degree sequence"])
    for phase, event in zip(report.phases, events):
        assert phase.epsilon == pytest.approx(_pld_epsilon([event], delta), rel=1e-12)
    assert any(note.startswith(f"pure ({params['epsilon']:g}, 0)-DP") for note in report.notes)
    assert est.epsilon_at(1e-3) == pytest.approx(_pld_epsilon(events, 1e-3), rel=1e-12)
    assert "edge-level" in est.privacy_statement_


@pytest.mark.parametrize("cls", GENERATORS, ids=lambda c: c.__name__)
def test_save_load_keeps_the_release_and_never_the_input(cls, graph, tmp_path):
    est = cls(epsilon=3.0, random_state=4).fit(graph)
    path = est.save(tmp_path / "gen.pt")
    loaded = Estimator.load(path)
    assert type(loaded) is cls and loaded.get_params() == est.get_params()
    assert loaded.privacy_report_ == est.privacy_report_ and loaded.info_ == est.info_
    assert loaded.num_nodes_ == 80
    if cls is TmF:
        assert loaded.released_.equals(est.released_)
    else:
        assert np.array_equal(loaded.released_, est.released_) and loaded.released_.dtype == np.int64
    assert torch.equal(loaded.generate(seed=9).edge_index, est.generate(seed=9).edge_index)
    state = torch.load(path, weights_only=True)["state"]
    assert set(state) == {"released", "num_nodes", "info"}
    if cls is DP1K:
        assert state["released"].shape == (80,)  # the degree sequence only
    else:  # the release, exactly: pairs u < v, neither the input's edge set nor a subset of it
        saved = state["released"].numpy()
        assert np.array_equal(saved, est.released_.pairs) and bool((saved[0] < saved[1]).all())
        true = {tuple(p) for p in undirected_pairs(graph.edge_index).T.tolist()}
        released = {tuple(p) for p in saved.T.tolist()}
        assert released != true and not released <= true  # noisy non-edges were released
    assert loaded.ledger_ is None
    with pytest.raises(PrivacyError, match="read from a file"):
        loaded.epsilon_at(1e-3)
    with pytest.raises(ModelFileError):
        (DP1K if cls is TmF else TmF).load(path)


@pytest.mark.parametrize("cls", GENERATORS, ids=lambda c: c.__name__)
def test_twins_and_seeds(cls, graph):
    a = cls(epsilon=3.0, random_state=7).fit(graph)
    twin = type(a)(**a.get_params()).fit(graph)
    other = cls(epsilon=3.0, random_state=8).fit(graph)
    same = a.released_.equals(twin.released_) if cls is TmF else np.array_equal(a.released_, twin.released_)
    differs = not (a.released_.equals(other.released_) if cls is TmF else np.array_equal(a.released_, other.released_))
    assert same and differs


def test_directed_input_is_symmetrised_and_the_report_does_not_say_so(graph, caplog):
    pairs = undirected_pairs(graph.edge_index)
    directed = Data(edge_index=torch.from_numpy(pairs.copy()), num_nodes=80)  # one direction only
    with_loops = Data(edge_index=torch.from_numpy(np.concatenate([pairs, [[0, 5], [0, 5]]], axis=1)), num_nodes=80)
    for cls in GENERATORS:
        reference = cls(epsilon=3.0, random_state=1).fit(graph)  # the symmetric graph: the same release
        for raw in (directed, with_loops):
            with caplog.at_level("INFO"):
                caplog.clear()
                est = cls(epsilon=3.0, random_state=1).fit(raw)
            # which normalisations applied is a fact of the raw input: logged, never in the report
            assert est.privacy_report_.notes == reference.privacy_report_.notes
            assert INPUT_NOTE in est.privacy_report_.notes
            assert "symmetris" in caplog.text
            if cls is TmF:
                assert est.released_.equals(reference.released_)
            else:
                assert np.array_equal(est.released_, reference.released_)
    assert directed.edge_index.shape == pairs.shape  # the user's Data is left as it was


@pytest.mark.parametrize("cls", GENERATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("edge_index", [torch.empty(2, 0, dtype=torch.long), torch.tensor([[3, 4], [3, 4]])],
                         ids=["no-edges", "self-loops-only"])
def test_a_graph_without_edges_is_a_clear_error(cls, edge_index):
    with pytest.raises(DatasetError, match=f"{cls.__name__} needs a graph with at least one edge.*pass the graph's "
                                           r"edges as edge_index \[2, E\]"):
        cls(epsilon=1.0, random_state=0).fit(Data(edge_index=edge_index, num_nodes=6))


@pytest.mark.parametrize("cls,params,match", [
    (TmF, {"epsilon": 0.0}, "epsilon: Input should be greater than 0"),
    (TmF, {"epsilon": -2.0}, "epsilon: Input should be greater than 0"),
    (DP1K, {"epsilon": 0.0}, "epsilon: Input should be greater than 0"),
    (DP1K, {"epsilon": float("inf")}, "epsilon: Input should be"),
    (DP1K, {"epsilon": 1e4}, "epsilon: Input should be less than or equal to 100"),
    (TmF, {"count_fraction": 0.0}, "count_fraction: Input should be greater than 0"),
    (TmF, {"count_fraction": 1.0}, "count_fraction: Input should be less than 1"),
    (TmF, {"mode": "fill"}, "mode: Input should be 'threshold' or 'topm'"),
    (DP1K, {"count_fraction": 0.5}, "unknown hyperparameter.*count_fraction"),
    (TmF, {"delta": 0.0}, "delta: Input should be greater than 0"),
])
def test_bad_hyperparameters(cls, params, match):
    with pytest.raises(ConfigError, match=match):
        cls(random_state=0, **params)


def test_other_errors(graph):
    est = DP1K(epsilon=1.0)
    with pytest.raises(NotFittedError):
        est.generate()
    with pytest.raises(NotFittedError):
        _ = est.released_
    with pytest.raises(DatasetError, match="TmF needs at least 3 nodes"):
        TmF(epsilon=1.0, random_state=0).fit(Data(edge_index=torch.tensor([[0, 1], [1, 0]]), num_nodes=2))
    with pytest.raises(DatasetError, match="node id 9 outside"):
        TmF(epsilon=1.0, random_state=0).fit(Data(edge_index=torch.tensor([[0], [9]]), num_nodes=5))
    with pytest.raises(ConfigError, match="seed must be an integer"):
        DP1K(epsilon=1.0, random_state=0).fit(graph).generate(seed=-1)
    fitted = TmF(epsilon=1.0, random_state=0).fit(graph)
    fitted.set_params(epsilon=2.0)  # changing a hyperparameter drops the release
    assert not fitted.is_fitted


def test_edge_weights_are_ignored_and_logged_not_reported(graph, caplog):
    weighted = graph.clone()
    weighted.edge_weight = torch.rand(graph.edge_index.size(1)) * 5
    for cls in GENERATORS:
        with caplog.at_level("INFO"):
            caplog.clear()
            est = cls(epsilon=3.0, random_state=1).fit(weighted)
        reference = cls(epsilon=3.0, random_state=1).fit(graph)
        assert "edge_weight ignored" in caplog.text
        assert est.privacy_report_.notes == reference.privacy_report_.notes
        same = est.released_.equals(reference.released_) if cls is TmF else np.array_equal(est.released_,
                                                                                              reference.released_)
        assert same  # the weights change nothing: every listed edge counts once


def test_a_tampered_tmf_file_is_refused(graph, tmp_path):
    path = TmF(epsilon=3.0, random_state=4).fit(graph).save(tmp_path / "tmf.pt")
    payload = torch.load(path, weights_only=True)
    good = payload["state"]["released"]
    for bad in (good.flip(0),  # v < u
                torch.cat([good, good], dim=1),  # duplicates
                good + 80):  # ids out of range
        payload["state"]["released"] = bad
        torch.save(payload, tmp_path / "bad.pt")
        with pytest.raises(ModelFileError):
            Estimator.load(tmp_path / "bad.pt")
