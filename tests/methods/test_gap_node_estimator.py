"""GAP-NDP and ProGAP-NDP: the whole fit's accounting against dp-accounting, the noise at the
bound's scale, the bounded-degree relation in the report, the round trip, bad input refused."""

import math

import pytest
import torch
from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant

from graphpriv.errors import ConfigError, DatasetError
from graphpriv.methods.gap import GAPClassifier, GAPNodeClassifier
from graphpriv.methods.progap import ProGAPNodeClassifier
from graphpriv.propagation.degree_bound import max_degree_of

FAST = {"encoder_epochs": 4, "epochs": 3, "batch_size": 32}


def _reference_epsilon(z, rate, sgd_steps, hops, delta, sgd_z=None):
    step = dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(z if sgd_z is None else sgd_z))
    return RdpAccountant().compose(step, sgd_steps).compose(dp_event.GaussianDpEvent(z), hops).get_epsilon(delta)


def test_gap_ndp_spends_what_the_accountant_gives_for_dp_sgd_and_the_hops(graph, split):
    train = split[0]
    est = GAPNodeClassifier(epsilon=3.0, hops=2, max_degree=9, random_state=0, **FAST).fit(graph, train)
    report, z, info = est.privacy_report_, est.noise_multiplier_, est.info_
    per_epoch = math.ceil(train.size / 32)
    encoder, classifier = 4 * per_epoch, 3 * per_epoch
    assert info["steps"] == {"encoder": encoder, "classifier": classifier}
    reference = _reference_epsilon(z, 32 / train.size, encoder + classifier, 2, 1e-5)
    assert report.epsilon == pytest.approx(reference, rel=1e-9) and 2.9 < report.epsilon <= 3.0
    assert report.unit == "node" and [p.name for p in report.phases] == ["encoder", "aggregation", "classifier"]
    assert [p.steps for p in report.phases] == [encoder, 2, classifier]
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


@pytest.mark.parametrize("ratio", [1.0, 2.5])
def test_the_noise_drawn_is_the_multiplier_times_the_bound(graph, split, monkeypatch, ratio):
    """What the hops and the DP-SGD steps actually draw: std z sqrt(D) per hop, r z C per step, and
    the report's epsilon is dp-accounting's for those two multipliers."""
    import graphpriv.propagation.aggregation_perturbation as hops
    from graphpriv.privacy import engine

    drawn = {"hops": [], "sgd": []}

    def spy(where, original):
        def draw(shape, std, **kwargs):
            drawn[where].append(std)
            return original(shape, std, **kwargs)
        return draw
    monkeypatch.setattr(hops, "gaussian_noise", spy("hops", hops.gaussian_noise))
    monkeypatch.setattr(engine, "gaussian_noise", spy("sgd", engine.gaussian_noise))
    est = GAPNodeClassifier(epsilon=2.0, hops=3, max_degree=16, max_grad_norm=0.5, sgd_noise_ratio=ratio,
                            random_state=0, **FAST)
    est.fit(graph, split[0])
    z = est.noise_multiplier_
    assert drawn["hops"] == pytest.approx([z * 4.0] * 3)
    assert drawn["sgd"] and all(std == pytest.approx(ratio * z * 0.5) for std in drawn["sgd"])
    assert est.info_["sgd_noise_multiplier"] == pytest.approx(ratio * z)
    steps = sum(est.info_["steps"].values())
    reference = _reference_epsilon(z, 32 / split[0].size, steps, 3, 1e-5, sgd_z=ratio * z)
    assert est.privacy_report_.epsilon == pytest.approx(reference, rel=1e-9) and 1.9 < reference <= 2.0
    assert (ratio == 1) == any("one noise multiplier for all" in note for note in est.privacy_report_.notes)


def test_a_larger_sgd_noise_ratio_moves_budget_to_the_hops(graph, split):
    one = GAPNodeClassifier(epsilon=2.0, max_degree=16, random_state=0, **FAST).fit(graph, split[0])
    moved = GAPNodeClassifier(epsilon=2.0, max_degree=16, sgd_noise_ratio=3.0, random_state=0, **FAST)
    moved.fit(graph, split[0])
    assert moved.noise_multiplier_ < one.noise_multiplier_ < moved.info_["sgd_noise_multiplier"]
    with pytest.raises(ConfigError, match="sgd_noise_ratio"):
        GAPNodeClassifier(sgd_noise_ratio=0)


def test_every_random_stream_of_a_fit_and_a_prediction_is_its_own(graph, split, monkeypatch):
    """Two noisy releases sharing their draws would not compose as the accountant assumes."""
    seeds = []
    real = torch.Generator

    class Seeding:  # torch.Generator() as graphpriv calls it: seeded at once, the seed recorded
        def __init__(self, *args, **kwargs):
            self.generator = real(*args, **kwargs)

        def manual_seed(self, seed):
            seeds.append(int(seed))
            return self.generator.manual_seed(seed)

        def __getattr__(self, name):
            return getattr(self.generator, name)
    monkeypatch.setattr(torch, "Generator", Seeding)
    for cls, params in ((GAPNodeClassifier, FAST), (ProGAPNodeClassifier, {"epochs": 2, "batch_size": 40})):
        seeds.clear()
        est = cls(max_degree=6, random_state=5, **params).fit(graph, split[0])
        est.predict(graph)
        assert len(seeds) == len(set(seeds)), (cls.__name__, seeds)


@pytest.mark.parametrize("cls", [GAPNodeClassifier, ProGAPNodeClassifier])
def test_a_graph_without_features_is_refused(cls, graph, split):
    from torch_geometric.data import Data

    with pytest.raises(DatasetError, match="x"):
        cls(epochs=1).fit(Data(edge_index=graph.edge_index, y=graph.y, num_nodes=graph.num_nodes), split[0])


def test_dp_sgd_restores_every_parameter_flag_even_when_it_fails(graph):
    from graphpriv.methods.node_level_aggregation import NodeBudget, train_dp_sgd
    from graphpriv.nn.gap import Encoder

    config = GAPNodeClassifier(**FAST).config
    module = Encoder(graph.x.shape[1], 4, 3, layers=2, batch_norm=False)
    module.head.bias.requires_grad_(False)  # a flag of the caller's, kept
    budget = NodeBudget(config, 100, {"encoder": 1}, 1)
    with pytest.raises(KeyError):
        train_dp_sgd(module, (graph.x[:100],), graph.y[:100], config=config, budget=budget, phase="no such phase",
                     seed=0, progress=lambda *a, **k: None, parameters=list(module.head.parameters()))
    assert [p.requires_grad for p in module.parameters()][-2:] == [True, False]
    assert all(p.requires_grad for p in module.body.parameters())


@pytest.mark.parametrize("cls", [GAPNodeClassifier, GAPClassifier])
def test_without_an_encoder_the_features_are_h0_and_nothing_is_trained_before_the_hops(cls, graph, split, tmp_path):
    est = cls(encoder_layers=0, epochs=3, random_state=0, **({"batch_size": 40} if cls is GAPNodeClassifier else {}))
    est.fit(graph, split[0])
    assert est.aggregates_.shape == (graph.num_nodes, graph.x.shape[1], 3)
    rows = torch.nn.functional.normalize(graph.x.float(), dim=1)
    assert torch.allclose(est.aggregates_[..., 0], rows)
    assert "encoder" not in est.timings_ and "encoder" not in [p.name for p in est.privacy_report_.phases]
    if cls is GAPNodeClassifier:
        steps = 3 * math.ceil(split[0].size / 40)
        assert est.info_["steps"] == {"classifier": steps}
        reference = _reference_epsilon(est.noise_multiplier_, 40 / split[0].size, steps, 2, 1e-5)
        assert est.privacy_report_.epsilon == pytest.approx(reference, rel=1e-9)
    loaded = cls.load(est.save(tmp_path / "no-encoder.pt"))
    assert torch.equal(loaded.predict_proba(nodes=split[1]), est.predict_proba(nodes=split[1]))
