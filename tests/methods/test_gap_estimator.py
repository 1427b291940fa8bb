"""GAPClassifier: GAP-EDP's accounting against dp-accounting, learning where structure matters,
the fit / predict / save / load round trip, and bad input refused before any work."""

import math

import pytest
import torch
from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant

from graphpriv.errors import ConfigError, DatasetError
from graphpriv.methods.gap import GAPClassifier

FAST = {"encoder_epochs": 30, "epochs": 30}


def _accuracy(est, graph, test):
    return float((est.predict(nodes=test) == graph.y[torch.from_numpy(test)]).float().mean())


def test_gap_edp_spends_what_the_accountant_gives_for_k_gaussian_hops(graph, split):
    est = GAPClassifier(epsilon=2.0, hops=3, random_state=0, **FAST).fit(graph, split[0])
    report, z = est.privacy_report_, est.noise_multiplier_
    reference = RdpAccountant().compose(dp_event.GaussianDpEvent(z), 3).get_epsilon(1e-5)
    assert report.epsilon == pytest.approx(reference, rel=1e-9) and 1.9 < report.epsilon <= 2.0
    assert report.unit == "edge" and report.phases[0].steps == 3 and report.delta == 1e-5
    assert est.info_["noise_std"] == pytest.approx(z * math.sqrt(2))
    assert any("sqrt(2)" in note for note in report.notes)
    directed = RdpAccountant().compose(dp_event.GaussianDpEvent(z * math.sqrt(2)), 3).get_epsilon(1e-5)
    assert est.info_["epsilon_directed"] == pytest.approx(directed, rel=1e-9) and directed < report.epsilon


def test_the_aggregates_carry_the_structure_and_the_noise_costs_accuracy(graph, split):
    train, test = split
    inf = GAPClassifier(private=False, random_state=0, **FAST).fit(graph, train)
    tight = GAPClassifier(epsilon=0.1, random_state=0, **FAST).fit(graph, train)
    assert inf.privacy_report_ is None and inf.noise_multiplier_ == 0.0
    assert _accuracy(inf, graph, test) > 0.9  # the communities, through the hops
    assert _accuracy(tight, graph, test) < _accuracy(inf, graph, test)
    rows = torch.linalg.norm(inf.aggregates_, dim=1)
    assert torch.allclose(rows[rows > 0], torch.ones_like(rows[rows > 0]), atol=1e-5)  # every hop row-normalised


def test_fit_predict_save_load_round_trip(graph, split, tmp_path):
    est = GAPClassifier(epsilon=4.0, random_state=3, **FAST).fit(graph, split[0])
    again = GAPClassifier(epsilon=4.0, random_state=3, **FAST).fit(graph, split[0])
    assert torch.equal(est.predict_proba(), again.predict_proba())  # reproducible from random_state
    loaded = GAPClassifier.load(est.save(tmp_path / "gap.pt"))
    assert torch.equal(loaded.predict_proba(nodes=split[1]), est.predict_proba(nodes=split[1]))
    assert loaded.privacy_report_ == est.privacy_report_ and loaded.get_params() == est.get_params()
    fresh = est.predict_proba(graph)  # another release of the graph: fresh noise, same shape
    assert fresh.shape == (graph.num_nodes, 3) and torch.allclose(fresh.sum(1), torch.ones(graph.num_nodes))


@pytest.mark.parametrize("params, message", [({"hops": 0}, "hops"), ({"epsilon": 0.0}, "epsilon"),
                                             ({"delta": 1.0}, "delta")])
def test_bad_hyperparameters_are_refused_at_construction(params, message):
    with pytest.raises(ConfigError, match=message):
        GAPClassifier(**params)


def test_bad_graphs_are_refused_before_training(graph, split):
    from torch_geometric.data import Data

    with pytest.raises(DatasetError, match="x"):
        GAPClassifier(**FAST).fit(Data(edge_index=graph.edge_index, y=graph.y, num_nodes=graph.num_nodes))
    only_two = split[0][graph.y.numpy()[split[0]] < 2]
    with pytest.raises(DatasetError, match="class 2 has no training node"):
        GAPClassifier(**FAST).fit(graph, only_two)
    fitted = GAPClassifier(private=False, **FAST).fit(graph, split[0])
    with pytest.raises(DatasetError, match="features per node"):
        fitted.predict(Data(x=torch.ones(3, 5), edge_index=torch.zeros(2, 0, dtype=torch.long), num_nodes=3))


def test_the_transductive_protocol_refuses_what_it_cannot_run(graph):
    from graphpriv.evaluation.transductive import run_gap
    from graphpriv.methods.gap import GAPConfig

    with pytest.raises(ConfigError, match="val_ratio \\+ test_ratio must be < 1"):
        GAPClassifier(val_ratio=0.5, test_ratio=0.5)
    with pytest.raises(ConfigError, match="run_gap runs gap-edp, gap-inf"):
        run_gap(GAPConfig(), graph, seed=0, method="dp-mlp")
    with pytest.raises(ConfigError, match="gap-inf trains without differential privacy"):
        run_gap(GAPConfig(private=True), graph, seed=0, method="gap-inf")
    result = run_gap(GAPConfig(epsilon=4.0, **FAST), graph, seed=1)
    (baseline,) = result.baselines
    assert result.metrics["accuracy"] > baseline.value and result.privacy.epsilon <= 4.0
    assert result.metrics["epsilon_directed"] < result.privacy.epsilon


def test_a_class_without_a_training_node_is_refused_before_any_fit(graph, monkeypatch):
    import graphpriv.methods.gap as gap_module
    from graphpriv.evaluation.transductive import run_gap
    from graphpriv.methods.gap import GAPConfig

    rare = graph.clone()
    y = rare.y.clone()
    y[5] = 3  # one node of a fourth class, outside the training nodes of the seed chosen below
    rare.y = y

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before refusing")
    monkeypatch.setattr(gap_module.GAPClassifier, "fit", no_fit)
    from graphpriv.data.splits import node_split

    seed = next(s for s in range(50) if 5 not in node_split(rare, train_ratio=0.75, val_ratio=0.1, seed=s).train_idx)
    with pytest.raises(DatasetError, match="class 3 has no training node"):
        run_gap(GAPConfig(**FAST), rare, seed=seed)


def test_nothing_outside_the_guarantee_reads_the_edges(graph, split):
    """info_ and the timings may be published beside the model: no fact of the edges in them."""
    from graphpriv.methods.progap import ProGAPClassifier

    for est in (GAPClassifier(epsilon=4.0, **FAST), ProGAPClassifier(epsilon=4.0, epochs=5)):
        fitted = est.fit(graph, split[0])
        assert set(fitted.info_) == {"train_nodes", "noise_multiplier", "noise_std", "epsilon_directed"}
