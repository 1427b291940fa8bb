"""DPAR and the feature-only baselines end to end on a small labelled graph."""

import pytest

from graphpriv.errors import ConfigError, DatasetError
from graphpriv.experiments.registry import make_config, method_spec
from graphpriv.testing.graphs import labelled_sbm, random_graph


@pytest.fixture(scope="module")
def sbm():
    return labelled_sbm(300, 3, seed=0)


def _run(method, data, **overrides):
    config = make_config(method, {"epochs": 10, **overrides})
    return method_spec(method).run(config, data, seed=0, method=method)


@pytest.mark.parametrize("method", ["dpar-em0", "dpar-em1", "dpar-gm"])
@pytest.mark.parametrize("accounting", ["rigorous", "paper"])
def test_private_runs_report_both_phases_and_stay_within_the_claim(sbm, method, accounting):
    result = _run(method, sbm, epsilon=4.0, node_rate=0.5, seeds=20, accounting=accounting)
    privacy = result.privacy
    assert privacy.unit == "node" and privacy.accounting == accounting
    assert [p.name for p in privacy.phases] == ["dp-appr", "dp-sgd"]
    assert privacy.epsilon <= 4.0 * (1 + 1e-6)
    assert privacy.epsilon == pytest.approx(result.metrics[f"epsilon_{accounting}"])
    other = "paper" if accounting == "rigorous" else "rigorous"
    assert f"epsilon_{other}" in result.metrics
    if accounting == "paper":  # the paper's analysis understates what the same noise spends
        assert result.metrics["epsilon_rigorous"] > 4.0
    assert 0 <= result.metrics["accuracy"] <= 1
    assert result.info["rows_per_node"] >= 1


def test_rigorous_noise_grows_with_the_rows_a_node_reaches(sbm):
    capped = _run("dpar-gm", sbm, epsilon=4.0, node_rate=0.5, seeds=40, k=4, max_rows=1)
    free = _run("dpar-gm", sbm, epsilon=4.0, node_rate=0.5, seeds=40, k=4, max_rows=None)
    assert capped.info["rows_per_node"] == 1 < free.info["rows_per_node"]
    assert free.info["sgd_noise_std"] > 2 * capped.info["sgd_noise_std"]


def test_nonprivate_dpar_and_mlp_learn_an_easy_graph(sbm):
    nodp = _run("dpar-nodp", sbm, epochs=60)
    mlp = _run("mlp", sbm, epochs=60)
    assert nodp.privacy is None and mlp.privacy is None
    assert nodp.metrics["accuracy"] > 0.8 and mlp.metrics["accuracy"] > 0.6


def test_dp_mlp_accounting_matches_opacus(sbm):
    from opacus.accountants import RDPAccountant

    result = _run("dp-mlp", sbm, epsilon=2.0, epochs=5)
    z, steps = result.info["noise_multiplier"], result.info["steps"]
    rate = 60 / result.info["train_nodes"]
    opacus = RDPAccountant()
    opacus.history = [(z, rate, steps)]
    theirs = opacus.get_epsilon(delta=result.privacy.delta)
    assert result.privacy.epsilon == pytest.approx(theirs, rel=0.03)
    assert result.privacy.epsilon <= 2.0 * (1 + 1e-6)


def test_inference_uses_only_the_test_graph(sbm):
    from graphpriv.data.splits import node_split

    split = node_split(sbm, train_ratio=0.8, seed=0, inductive=True)
    test = set(split.test_idx.tolist())
    assert all(u in test and v in test for u, v in split.test_edge_index.T.tolist())
    train = set(split.train_idx.tolist())
    assert all(u in train and v in train for u, v in split.train_edge_index.T.tolist())


def test_bad_input(sbm):
    with pytest.raises(DatasetError, match="features"):
        _run("dpar-gm", random_graph(30, 0.2, seed=0))
    with pytest.raises(ConfigError):
        make_config("dpar-gm", {"node_rate": 0.0})
    with pytest.raises(ConfigError, match="unknown setting"):
        make_config("dpar-em0", {"theta": 3})
    with pytest.raises(ValueError, match="delta / q'"):
        _run("dpar-gm", sbm, delta=0.5, node_rate=0.5)


def test_private_false_uses_exact_rows_without_noise(sbm):
    result = _run("dpar-gm", sbm, private=False, node_rate=0.5, seeds=20, epochs=20)
    assert result.privacy is None and "gm_noise_std" not in result.info and "sgd_noise_std" not in result.info


def test_unlabelled_nodes_are_left_out_of_training_and_scoring(sbm):
    data = sbm.clone()
    data.y = data.y.clone()
    data.y[::7] = -1  # e.g. CiteSeer's unlabelled nodes
    for method in ("dpar-gm", "dp-mlp", "mlp"):
        result = _run(method, data, epsilon=4.0, node_rate=0.5, seeds=20) if method == "dpar-gm" else \
            _run(method, data, epsilon=4.0)
        assert 0 <= result.metrics["accuracy"] <= 1


@pytest.mark.parametrize(("appr", "accounting"), [("em1", "rigorous"), ("gm", "paper")])
def test_the_fits_ledger_builds_its_report_and_survives_save_and_load(sbm, tmp_path, appr, accounting):
    from graphpriv.methods.dpar import DPARClassifier
    from graphpriv.privacy import dpar_accounting as acc

    est = DPARClassifier(appr=appr, epochs=2, epsilon=4.0, node_rate=0.5, seeds=20, accounting=accounting,
                         random_state=0).fit(sbm)
    report, record, config = est.privacy_report_, est._noise_record, est._config
    # the report is the ledger's: the fit's ledger, rebuilt from its record, gives it back exactly
    again = acc.spent_ledger(record, delta=config.delta, node_rate=config.node_rate, c1=config.c1,
                             max_grad_norm=config.max_grad_norm, r=config.r, accounting=accounting)
    assert again.report(target_epsilon=config.epsilon, notes=report.notes) == report
    assert report.accountant == "rdp + (eps, delta) composition" and report.neighboring_relation == "ADD_OR_REMOVE_ONE"
    assert [p.steps for p in report.phases] == [record["appr_info"]["num_rows"], record["steps"]]
    assert est.epsilons_[f"epsilon_{accounting}"] == report.epsilon
    assert est.epsilons_["epsilon_appr"] == report.phases[0].epsilon
    assert est.epsilons_["epsilon_sgd"] == report.phases[1].epsilon
    loaded = DPARClassifier.load(est.save(tmp_path / "dpar.pt"))
    for mode in ("rigorous", "paper"):
        assert loaded.epsilon_at(est.delta, accounting=mode) == est.epsilons_[f"epsilon_{mode}"]
        assert loaded.epsilon_at(1e-6, accounting=mode) == est.epsilon_at(1e-6, accounting=mode)
    assert loaded.epsilon_at(est.delta) == report.epsilon
