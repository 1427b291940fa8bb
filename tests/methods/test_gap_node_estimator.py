"""GAP-NDP and ProGAP-NDP: the whole fit's accounting against dp-accounting, the noise at the
bound's scale, the bounded-degree relation in the report, the round trip, bad input refused."""

import math

import pytest
import torch
from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant

from graphpriv.errors import ConfigError, DatasetError
from graphpriv.methods.gap import GAPNodeClassifier
from graphpriv.methods.progap import ProGAPNodeClassifier
from graphpriv.propagation.degree_bound import max_degree_of

FAST = {"encoder_epochs": 4, "epochs": 4, "batch_size": 32}


def _reference_epsilon(z, rate, sgd_steps, hops, delta):
    step = dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(z))
    return RdpAccountant().compose(step, sgd_steps).compose(dp_event.GaussianDpEvent(z), hops).get_epsilon(delta)


def test_gap_ndp_spends_what_the_accountant_gives_for_dp_sgd_and_the_hops(graph, split):
    train = split[0]
    est = GAPNodeClassifier(epsilon=3.0, hops=2, max_degree=9, random_state=0, **FAST).fit(graph, train)
    report, z, info = est.privacy_report_, est.noise_multiplier_, est.info_
    steps = FAST["encoder_epochs"] * math.ceil(train.size / 32)
    assert info["steps"] == {"encoder": steps, "classifier": steps}
    reference = _reference_epsilon(z, 32 / train.size, 2 * steps, 2, 1e-5)
    assert report.epsilon == pytest.approx(reference, rel=1e-9) and 2.9 < report.epsilon <= 3.0
    assert report.unit == "node" and [p.name for p in report.phases] == ["encoder", "aggregation", "classifier"]
    assert [p.steps for p in report.phases] == [steps, 2, steps]
    assert info["noise_std"] == pytest.approx(z * 3.0) and info["sgd_noise_std"] == pytest.approx(z)
    assert any("at most D = 9" in note and "sqrt(D)" in note for note in report.notes)


def test_progap_ndp_spends_every_stage_and_every_aggregation(graph, split):
    train = split[0]
    est = ProGAPNodeClassifier(epsilon=2.0, depth=2, max_degree=4, random_state=0, epochs=3, batch_size=40)
    est.fit(graph, train)
    steps = 3 * math.ceil(train.size / 40)
    assert est.info_["steps"] == {"stage 0": steps, "stage 1": steps, "stage 2": steps}
    reference = _reference_epsilon(est.noise_multiplier_, 40 / train.size, 3 * steps, 2, 1e-5)
    assert est.privacy_report_.epsilon == pytest.approx(reference, rel=1e-9)
    assert est.info_["noise_std"] == pytest.approx(est.noise_multiplier_ * 2.0)


def test_the_report_says_when_the_graph_is_above_the_degree_bound(graph, split):
    degree = max_degree_of(graph.edge_index, graph.num_nodes)
    within = GAPNodeClassifier(max_degree=degree, random_state=0, **FAST).fit(graph, split[0])
    above = GAPNodeClassifier(max_degree=degree - 1, random_state=0, **FAST).fit(graph, split[0])
    assert within.info_["within_degree_bound"] and not above.info_["within_degree_bound"]
    assert not any("does not cover it" in note for note in within.privacy_report_.notes)
    assert any("does not cover it" in note for note in above.privacy_report_.notes)


def test_more_noise_costs_accuracy_and_the_modules_are_trained_privately(graph, split):
    train, test = split
    y = graph.y[torch.from_numpy(test)]
    loose = GAPNodeClassifier(epsilon=100.0, max_degree=12, random_state=0, epochs=30, encoder_epochs=30,
                              batch_size=32).fit(graph, train)
    tight = GAPNodeClassifier(epsilon=0.05, max_degree=12, random_state=0, epochs=30, encoder_epochs=30,
                              batch_size=32).fit(graph, train)
    loose_accuracy = float((loose.predict(nodes=test) == y).float().mean())
    assert loose_accuracy > 0.55  # three balanced classes: chance is 1/3
    assert float((tight.predict(nodes=test) == y).float().mean()) < loose_accuracy - 0.1


@pytest.mark.parametrize("cls", [GAPNodeClassifier, ProGAPNodeClassifier])
def test_fit_predict_save_load_round_trip(cls, graph, split, tmp_path):
    params = {"epochs": 3, "max_degree": 8, "batch_size": 40, **({"encoder_epochs": 3} if cls is GAPNodeClassifier else {})}
    est = cls(epsilon=4.0, random_state=3, **params).fit(graph, split[0])
    again = cls(epsilon=4.0, random_state=3, **params).fit(graph, split[0])
    assert torch.equal(est.predict_proba(), again.predict_proba())
    loaded = cls.load(est.save(tmp_path / "ndp.pt"))
    assert type(loaded) is cls and loaded.get_params() == est.get_params()
    assert torch.equal(loaded.predict_proba(nodes=split[1]), est.predict_proba(nodes=split[1]))
    assert loaded.privacy_report_ == est.privacy_report_
    assert est.predict(graph).shape == (graph.num_nodes,)


@pytest.mark.parametrize("params, message", [({"max_degree": 0}, "max_degree"), ({"epsilon": 0.0}, "epsilon"),
                                             ({"private": False}, "gap-inf"), ({"batch_norm": True}, "batch_norm"),
                                             ({"max_grad_norm": 0.0}, "max_grad_norm")])
@pytest.mark.parametrize("cls", [GAPNodeClassifier, ProGAPNodeClassifier])
def test_bad_hyperparameters_are_refused_at_construction(cls, params, message):
    with pytest.raises(ConfigError, match=message):
        cls(**params)


def test_bad_graphs_are_refused_before_training(graph, split):
    from torch_geometric.data import Data

    with pytest.raises(DatasetError, match="x"):
        GAPNodeClassifier(**FAST).fit(Data(edge_index=graph.edge_index, y=graph.y, num_nodes=graph.num_nodes))
    unlabelled = graph.clone()
    y = unlabelled.y.clone()
    y[int(split[0][0])] = -1
    unlabelled.y = y
    with pytest.raises(DatasetError, match="unlabelled"):
        ProGAPNodeClassifier(epochs=2).fit(unlabelled, split[0])


def test_the_registry_runs_the_node_level_ids(graph):
    from graphpriv.evaluation.transductive import run_gap
    from graphpriv.methods.gap import GAPNodeConfig
    from graphpriv.methods.progap import ProGAPNodeConfig

    result = run_gap(GAPNodeConfig(epsilon=8.0, max_degree=12, **FAST), graph, seed=1, method="gap-ndp")
    assert result.privacy.unit == "node" and result.privacy.epsilon <= 8.0 and "epsilon_directed" not in result.metrics
    result = run_gap(ProGAPNodeConfig(epsilon=8.0, max_degree=12, epochs=2), graph, seed=1, method="progap-ndp")
    assert result.privacy.unit == "node" and "stage 2" in result.timings
