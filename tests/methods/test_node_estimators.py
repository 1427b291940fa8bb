"""The node-classification estimators (DPARClassifier per variant, MLPClassifier private and not):
fit / predict, files, twins, the privacy report against the protocol, and bad input."""

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphpriv.errors import ConfigError, DatasetError, ModelFileError, NotFittedError
from graphpriv.evaluation.node import DPAR_APPR, accuracy, inductive_sides, run_dpar
from graphpriv.experiments.registry import make_config
from graphpriv.experiments.runner import run_method
from graphpriv.methods.dpar import DPARClassifier, DPARConfig
from graphpriv.methods.estimator import Estimator
from graphpriv.methods.mlp import MLPClassifier
from graphpriv.testing.graphs import labelled_sbm

pytestmark = pytest.mark.usefixtures("one_thread")

SEED = 3
#: method id -> the overrides of a small cell (the registry adds its presets).
CELLS = {
    "dpar-em0": {"epochs": 2, "node_rate": 0.5, "seeds": 20},
    "dpar-em1": {"epochs": 2, "node_rate": 0.5, "seeds": 20, "accounting": "paper"},
    "dpar-gm": {"epochs": 2, "node_rate": 0.5, "seeds": 20},
    "dpar-nodp": {"epochs": 2},
    "dp-mlp": {"epochs": 2},
    "mlp": {"epochs": 2},
}


def _estimator(method: str):
    """The estimator a cell of ``method`` runs (its registry presets and CELLS' overrides)."""
    params = make_config(method, CELLS[method]).model_dump()
    if method in DPAR_APPR:
        return DPARClassifier(appr=DPAR_APPR[method], random_state=SEED, **params)
    return MLPClassifier(random_state=SEED, **params)


def _one_line(err) -> str:
    message = str(err.value)
    assert "\n" not in message, message
    return message


@pytest.fixture(scope="module")
def graph():
    data = labelled_sbm(120, 3, p_in=0.1, seed=1)
    data.name = "sbm120"
    return data


@pytest.fixture(scope="module")
def fitted(graph):
    """method -> (the estimator fitted on the training side of a protocol split, the sides)."""
    sides = inductive_sides(graph, test_ratio=0.2, seed=SEED)
    return {m: (_estimator(m).fit(sides.train, num_classes=sides.num_classes), sides) for m in CELLS}


@pytest.mark.parametrize("method", list(CELLS))
def test_fit_predict_round_trip(fitted, graph, method):
    est, sides = fitted[method]
    assert est.is_fitted and est.n_features_in_ == 20 and est.n_classes_ == 3
    proba = est.predict_proba(sides.test)
    assert proba.shape == (sides.test.num_nodes, 3) and proba.dtype == torch.float32
    assert torch.allclose(proba.sum(1), torch.ones(len(proba)))
    pred = est.predict(sides.test)
    assert pred.dtype == torch.long and pred.shape == (sides.test.num_nodes,)
    assert torch.equal(pred, proba.argmax(1))
    nodes = torch.tensor([5, 0, 7])
    assert torch.equal(est.predict_proba(sides.test, nodes), proba[nodes])
    # inductive: the whole graph, another graph of the same width, a graph without edges
    assert est.predict(graph).shape == (120,)
    assert est.predict(labelled_sbm(30, 2, seed=9)).shape == (30,)
    edgeless = Data(x=graph.x[:10], edge_index=torch.empty(2, 0, dtype=torch.long), num_nodes=10)
    assert est.predict_proba(edgeless).shape == (10, 3)
    private = method not in ("dpar-nodp", "mlp")
    assert (est.privacy_report_ is not None) == private
    assert est.privacy_statement_.startswith("(" if private else "non-private")


@pytest.mark.parametrize("method", list(CELLS))
def test_save_load_and_twin_give_identical_predictions(fitted, tmp_path, method):
    est, sides = fitted[method]
    path = est.save(tmp_path / "est.pt")
    for loaded in (type(est).load(path), Estimator.load(path)):
        assert type(loaded) is type(est) and loaded.get_params() == est.get_params()
        assert torch.equal(loaded.predict_proba(sides.test), est.predict_proba(sides.test))
        assert loaded.privacy_report_ == est.privacy_report_ and loaded.info_ == est.info_
    twin = type(est)(**est.get_params()).fit(sides.train, num_classes=sides.num_classes)
    assert torch.equal(twin.predict_proba(sides.test), est.predict_proba(sides.test))
    assert twin.privacy_report_ == est.privacy_report_


@pytest.mark.parametrize("method", list(CELLS))
def test_the_protocol_reports_what_the_estimator_fitted(fitted, graph, method):
    est, sides = fitted[method]
    result = run_method(method, graph, seed=SEED, overrides=CELLS[method])
    assert result.privacy == est.privacy_report_
    assert result.metrics["accuracy"] == accuracy(est, sides.test)
    assert result.info == {**est.info_, "input_normalisations": []}
    if method in DPAR_APPR:
        assert "appr" not in result.config and result.config == make_config(method, CELLS[method]).model_dump(
            mode="json")
        assert {k: v for k, v in result.metrics.items() if k != "accuracy"} == est.epsilons_


def test_not_fitted_before_fit(graph, tmp_path):
    for est in (DPARClassifier(), MLPClassifier(private=False)):
        with pytest.raises(NotFittedError, match="not fitted"):
            est.predict(graph)
        with pytest.raises(NotFittedError, match="not fitted"):
            est.predict_proba(graph)
        with pytest.raises(NotFittedError):
            est.model_  # noqa: B018
        with pytest.raises(NotFittedError):
            est.save(tmp_path / "x.pt")


def test_the_variant_is_an_argument_checked_against_private():
    est = DPARClassifier(appr="em1", epsilon=2.0)
    assert est.get_params()["appr"] == "em1" and "appr" not in est.config.model_dump()
    assert "appr" not in DPARConfig.model_fields
    with pytest.raises(ConfigError, match="appr must be one of em0, em1, gm, exact"):
        DPARClassifier(appr="dpar-gm")
    with pytest.raises(ConfigError, match="appr='exact' .* pass private=False"):
        DPARClassifier(appr="exact")
    exact = DPARClassifier(appr="exact", private=False)
    with pytest.raises(ConfigError, match="appr='exact'"):
        exact.set_params(private=True, epochs=3)
    assert exact.private is False and exact.epochs == 200 and exact.appr == "exact"  # nothing changed
    assert exact.set_params(appr="gm", private=True).appr == "gm" and exact.private
    with pytest.raises(ConfigError, match="run_dpar runs dpar-em0"):
        run_dpar(DPARConfig(), labelled_sbm(40, 2, seed=0), seed=0, method="dpar-xx")
    with pytest.raises(ConfigError, match="dpar-nodp trains without differential privacy"):
        run_dpar(DPARConfig(), labelled_sbm(40, 2, seed=0), seed=0, method="dpar-nodp")


@pytest.mark.parametrize("cls", [DPARClassifier, MLPClassifier])
def test_bad_input_is_one_line(graph, cls):
    est = cls(private=False, epochs=1, **({"appr": "exact"} if cls is DPARClassifier else {}))
    no_labels = Data(x=graph.x, edge_index=graph.edge_index, num_nodes=120)
    with pytest.raises(DatasetError, match="data.y is missing"):
        est.fit(no_labels)
    one_class = Data(x=graph.x, y=torch.zeros(120, dtype=torch.long), edge_index=graph.edge_index, num_nodes=120)
    assert "one class" in _one_line(pytest.raises(DatasetError, est.fit, one_class))
    nan = graph.x.clone()
    nan[4, 2] = float("nan")
    bad_x = Data(x=nan, y=graph.y, edge_index=graph.edge_index, num_nodes=120)
    assert "not finite" in _one_line(pytest.raises(DatasetError, est.fit, bad_x))
    for nodes, match in (([0, 0, 1], "more than once"), ([0, 500], "node id 500 outside"),
                         (np.array([0.5, 1.0]), "integer node ids")):
        assert match in _one_line(pytest.raises(DatasetError, est.fit, graph, nodes))
    est.fit(graph)
    wide = labelled_sbm(30, 2, num_features=25, seed=0)
    message = _one_line(pytest.raises(DatasetError, est.predict, wide))
    assert "25 features" in message and "fitted on 20" in message
    assert "node id 120 outside [0, 120)" in _one_line(pytest.raises(DatasetError, est.predict_proba, graph, [3, 120]))
    assert "node id -1 outside" in _one_line(pytest.raises(DatasetError, est.predict, graph, torch.tensor([-1])))


def test_dpar_needs_edges_the_mlp_does_not(graph):
    features_only = Data(x=graph.x, y=graph.y, num_nodes=120)
    with pytest.raises(DatasetError, match="edge_index is missing: DPARClassifier propagates"):
        DPARClassifier(appr="exact", private=False, epochs=1).fit(features_only)
    mlp = MLPClassifier(private=False, epochs=1).fit(features_only)
    assert mlp.predict(Data(x=graph.x[:5])).shape == (5,)


def test_loading_another_class_is_a_model_file_error(fitted, tmp_path):
    path = fitted["dpar-gm"][0].save(tmp_path / "dpar.pt")
    with pytest.raises(ModelFileError, match="holds a DPARClassifier, not a MLPClassifier"):
        MLPClassifier.load(path)


def test_delta_above_the_node_rate_is_a_privacy_error(graph):
    from graphpriv.errors import PrivacyError

    with pytest.raises(PrivacyError) as err:
        DPARClassifier(delta=0.5, node_rate=0.09, epochs=1).fit(graph)
    message = _one_line(err)
    assert "delta" in message and "node_rate" in message and "lower delta" in message and "raise node_rate" in message


@pytest.mark.parametrize("cls", [DPARClassifier, MLPClassifier])
def test_set_params_after_fit_needs_a_new_fit_before_save(graph, tmp_path, cls):
    params = {"epochs": 1, **({"node_rate": 0.5, "seeds": 20} if cls is DPARClassifier else {})}
    est = cls(random_state=SEED, **params).fit(graph, progress=None)
    est.set_params(hidden=64)
    with pytest.raises(NotFittedError):
        est.save(tmp_path / "stale.pt")
    est.fit(graph)
    loaded = cls.load(est.save(tmp_path / "refit.pt"))
    assert loaded.get_params()["hidden"] == 64 and loaded.model_.mlp[0].out_features == 64
    assert torch.equal(loaded.predict_proba(graph), est.predict_proba(graph))


def test_a_refused_variant_change_keeps_the_fitted_model(graph):
    est = DPARClassifier(appr="exact", private=False, epochs=1).fit(graph)
    with pytest.raises(ConfigError, match="appr='exact'"):
        est.set_params(private=True)
    assert est.is_fitted and est.private is False and est.predict(graph).shape == (120,)
