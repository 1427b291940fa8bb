"""PrivDPR as an estimator: fit / generate, files, twins, the privacy report, errors."""

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphpriv.data.graph import undirected_pairs
from graphpriv.data.splits import link_split
from graphpriv.errors import ConfigError, DatasetError, ModelFileError, NotFittedError, PrivacyError
from graphpriv.evaluation.link import training_graph
from graphpriv.experiments.runner import run_method
from graphpriv.methods.estimator import Estimator
from graphpriv.methods.privdpr import PrivDPR
from graphpriv.methods.publishing import EdgeRand
from graphpriv.privacy.hooks import AuditHook
from graphpriv.testing.graphs import random_graph

pytestmark = pytest.mark.usefixtures("one_thread")

FAST = {"epochs": 1, "r": 8, "d": 4, "batch_nodes": 8, "samples_per_node": 5}


@pytest.fixture(scope="module")
def graph():
    return random_graph(40, 0.15, seed=2)


@pytest.fixture(scope="module")
def fitted(graph):
    return PrivDPR(random_state=3, epsilon=2.0, **FAST).fit(graph)


def _undirected(data: Data, n: int, edges: int) -> None:
    assert isinstance(data, Data) and data.num_nodes == n
    ei = data.edge_index
    assert ei.dtype == torch.int64 and ei.shape == (2, 2 * edges)
    assert int(ei.min()) >= 0 and int(ei.max()) < n and not bool((ei[0] == ei[1]).any())
    pairs = set(map(tuple, ei.t().tolist()))
    assert len(pairs) == 2 * edges and all((v, u) in pairs for u, v in pairs)


def test_fit_and_generate_give_an_undirected_graph_of_the_requested_size(fitted, graph):
    assert fitted.embeddings_.shape == (40, 8) and fitted.embeddings_.dtype == torch.float32
    assert fitted.info_["iterations"] == 5 and fitted.privacy_report_.unit == "node"
    _undirected(fitted.generate(num_edges=25), 40, 25)
    assert fitted.released_.num_edges == 25 and fitted.generation_info_["target_edges"] == 25
    default = fitted.generate()  # edge_count = "input" (the default): the fitted graph's |E|
    assert fitted.generation_info_["target_edges"] == fitted.input_edges_ == undirected_pairs(graph.edge_index).shape[1]
    _undirected(default, 40, fitted.input_edges_)
    model = PrivDPR(random_state=3, epsilon=2.0, edge_count="model", **FAST).fit(graph)
    model.generate()  # edge_count = "model": the model's own count
    assert model.generation_info_["target_edges"] == model.generation_info_["model_edges"]
    assert torch.equal(fitted.generate(seed=7).edge_index, fitted.generate(seed=7).edge_index)
    assert not fitted.generate(seed=7, num_edges=60).edge_index.equal(fitted.generate(seed=8, num_edges=60).edge_index)


def test_edge_count_settings_set_the_default_size(graph):
    est = PrivDPR(random_state=1, private=False, edge_count="input", **FAST).fit(graph)
    edges = undirected_pairs(graph.edge_index).shape[1]
    assert est.privacy_report_ is None and est.privacy_statement_.startswith("non-private")
    assert est.input_edges_ == edges and "treated as public" in " ".join(est.info_["notes"])
    _undirected(est.generate(), 40, edges)
    public = PrivDPR(random_state=1, private=False, edge_count="public", num_edges=20, **FAST).fit(graph)
    _undirected(public.generate(), 40, 20)
    assert public.input_edges_ is None


def test_save_and_load_generate_the_same_graph(fitted, tmp_path):
    released = fitted.generate(num_edges=30, seed=11)
    loaded = PrivDPR.load(fitted.save(tmp_path / "privdpr.pt"))
    assert isinstance(Estimator.load(tmp_path / "privdpr.pt"), PrivDPR)
    assert torch.equal(loaded.embeddings_, fitted.embeddings_) and loaded.info_ == fitted.info_
    assert loaded.privacy_report_ == fitted.privacy_report_ and loaded.released_.equals(fitted.released_)
    assert torch.equal(loaded.generate(num_edges=30, seed=11).edge_index, released.edge_index)
    assert torch.equal(loaded.generate().edge_index, fitted.generate().edge_index)
    blob = torch.load(tmp_path / "privdpr.pt", weights_only=True)
    assert "edge_index" not in str(sorted(blob["state"]))  # V and counts, never the input graph


def test_a_twin_from_get_params_gives_the_same_v_and_graph(fitted, graph, tmp_path):
    twin = type(fitted)(**fitted.get_params()).fit(graph)
    unsaved = PrivDPR.load(twin.save(tmp_path / "twin.pt"))  # saved before any generate
    with pytest.raises(AttributeError, match="released_"):  # fitted, but nothing generated yet
        unsaved.released_  # noqa: B018
    assert torch.equal(twin.embeddings_, fitted.embeddings_)
    assert torch.equal(twin.generate(num_edges=30).edge_index, fitted.generate(num_edges=30).edge_index)
    assert twin.privacy_report_ == fitted.privacy_report_
    assert torch.equal(unsaved.generate(num_edges=30).edge_index, twin.released_.edge_index)


def test_privacy_report_and_release_are_the_runs(graph):
    settings = {**FAST, "epsilon": 2.0, "edge_count": "input", "evaluate": False}
    result = run_method("privdpr", graph, seed=5, overrides=settings)
    split = link_split(graph, val_ratio=0.0, test_ratio=0.2, seed=5)
    est = PrivDPR(random_state=5, **settings).fit(training_graph(graph, split))
    assert est.privacy_report_ == result.privacy
    assert est.privacy_statement_.endswith("node-level, rigorous accounting")
    est.generate()
    assert np.array_equal(est.released_.pairs, result.release.pairs)
    assert isinstance(result.estimator, PrivDPR) and result.estimator.released_ is result.release


def test_an_empty_audit_hook_is_the_plain_fit_and_the_ledger_answers_other_deltas(fitted, graph, tmp_path):
    hooked = PrivDPR(random_state=3, epsilon=2.0, **FAST).fit(graph, audit_hook=AuditHook())
    assert torch.equal(hooked.embeddings_, fitted.embeddings_) and hooked.info_ == fitted.info_
    assert hooked.privacy_report_ == fitted.privacy_report_
    assert fitted.epsilon_at(fitted.delta) == pytest.approx(fitted.privacy_report_.epsilon, rel=1e-12)
    assert fitted.epsilon_at(1e-8) > fitted.privacy_report_.epsilon  # a smaller delta costs epsilon
    faulty = PrivDPR(random_state=3, epsilon=2.0, **FAST).fit(graph, audit_hook=AuditHook(noise_scale=0.01))
    assert faulty.info_["noise_std"] == pytest.approx(0.01 * fitted.info_["noise_std"])  # the std used
    assert faulty.privacy_report_ == fitted.privacy_report_ and not faulty.embeddings_.equal(fitted.embeddings_)
    dpr = PrivDPR(random_state=3, private=False, **FAST).fit(graph)
    assert dpr.ledger_ is None
    with pytest.raises(PrivacyError, match="non-private"):
        dpr.epsilon_at(1e-5)
    loaded = PrivDPR.load(fitted.save(tmp_path / "ledger.pt"))
    assert loaded.ledger_ is None
    with pytest.raises(PrivacyError, match="ledger"):
        loaded.epsilon_at(1e-5)
    with pytest.raises(ConfigError, match="AuditHook"):
        PrivDPR(**FAST).fit(graph, audit_hook={"noise_scale": 0.01})
    with pytest.raises(ConfigError, match="GradientCanary"):
        PrivDPR(**FAST).fit(graph, audit_hook=AuditHook(canaries=object()))


def test_not_fitted_before_fit():
    est = PrivDPR(**FAST)
    with pytest.raises(NotFittedError):
        est.generate()
    with pytest.raises(NotFittedError):
        est.embeddings_  # noqa: B018
    with pytest.raises(NotFittedError):
        est.save("never.pt")


def _one_line(exc_info) -> str:
    text = str(exc_info.value)
    assert "\n" not in text
    return text


def test_bad_input_is_one_graphpriv_error_line(fitted, graph):
    nan = Data(edge_index=graph.edge_index, num_nodes=40, x=torch.full((40, 2), float("nan")))
    with pytest.raises(DatasetError) as err:
        PrivDPR(**FAST).fit(nan)
    assert "finite" in _one_line(err)
    with pytest.raises(DatasetError) as err:
        PrivDPR(**FAST).fit(Data(edge_index=torch.empty(2, 0, dtype=torch.long), num_nodes=40))
    assert "edge" in _one_line(err)
    for bad in (0, -3, 40 * 39 // 2 + 1):
        with pytest.raises(ConfigError) as err:
            fitted.generate(num_edges=bad)
        assert "num_edges" in _one_line(err)
    with pytest.raises(ConfigError) as err:
        fitted.generate(num_edges=2.5)
    _one_line(err)
    with pytest.raises(ConfigError) as err:
        PrivDPR(edge_count="public", num_edges=10_000, **FAST).fit(graph)
    assert "node pairs" in _one_line(err)
    with pytest.raises(ConfigError) as err:
        PrivDPR(**{**FAST, "batch_nodes": 64}).fit(graph)
    _one_line(err)


def test_loading_another_class_is_a_model_file_error(graph, tmp_path):
    path = EdgeRand(epsilon=3.0, random_state=0).fit(graph).save(tmp_path / "edgerand.pt")
    with pytest.raises(ModelFileError, match="holds a EdgeRand, not a PrivDPR"):
        PrivDPR.load(path)


def test_the_tight_variant_is_shallower_with_the_same_noise_and_survives_save(graph, tmp_path):
    paper = PrivDPR(random_state=3, epsilon=2.0, **FAST).fit(graph)
    tight = PrivDPR(gradient_bound="sigmoid", random_state=3, epsilon=2.0, **FAST).fit(graph)
    assert tight.info_["depth"] < paper.info_["depth"]
    assert tight.info_["noise_std"] == paper.info_["noise_std"]  # the same S_grad / T, the same z
    assert tight.privacy_report_.epsilon == paper.privacy_report_.epsilon
    assert "1/(4s)" in " ".join(tight.privacy_report_.notes) and "1/(4s)" not in " ".join(paper.privacy_report_.notes)
    assert tight.get_params()["gradient_bound"] == "sigmoid"
    loaded = PrivDPR.load(tight.save(tmp_path / "tight.pt"))
    assert loaded.gradient_bound == "sigmoid" and torch.equal(loaded.embeddings_, tight.embeddings_)
    result = run_method("privdpr-tight", graph, seed=3, overrides={**FAST, "epsilon": 2.0, "evaluate": False})
    assert result.info["depth"] == tight.info_["depth"] and isinstance(result.estimator, PrivDPR)
    assert result.estimator.gradient_bound == "sigmoid"
    with pytest.raises(ConfigError, match="gradient_bound must be one of paper, sigmoid"):
        PrivDPR(gradient_bound="tight")
    with pytest.raises(ConfigError, match="gradient_bound"):
        tight.set_params(gradient_bound=4)
    assert tight.is_fitted  # a refused change leaves the estimator as it was
