"""The graph publishers as estimators: release, files, twins, privacy reports, errors."""

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphpriv.attacks.graph import PublishedGraph as ReExported
from graphpriv.attacks.protocol import SensitiveLinkProtocol
from graphpriv.data.graph import undirected_pairs
from graphpriv.data.release import PublishedGraph
from graphpriv.errors import ConfigError, DatasetError, ModelFileError, NotFittedError
from graphpriv.evaluation import publishing
from graphpriv.evaluation.publishing import input_graph_metrics, publish_on_protocol, run_dice
from graphpriv.experiments.registry import make_config
from graphpriv.experiments.runner import run_method
from graphpriv.methods.estimator import Estimator
from graphpriv.methods.ppgsl import PPGSL
from graphpriv.methods.publishing import DICE, EdgeRand, GraphPublisher, LapGraph, RandomPerturb
from graphpriv.testing.graphs import labelled_sbm

pytestmark = pytest.mark.usefixtures("one_thread")

PARAMS = {
    RandomPerturb: {"ratio": 0.3},
    DICE: {"ratio": 0.3},
    EdgeRand: {"epsilon": 3.0},
    LapGraph: {"epsilon": 3.0},
    PPGSL: {"learner_steps": 2, "surrogate_epochs": 2},
}
ESTIMATORS = list(PARAMS)


@pytest.fixture(scope="module")
def split():
    """A 60-node labelled SBM with features, five of its edges taken out as the sensitive links."""
    full = labelled_sbm(60, 2, p_in=0.2, num_features=4, seed=1)
    pairs = undirected_pairs(full.edge_index)
    sensitive, kept = pairs[:, :5], pairs[:, 5:]
    graph = Data(edge_index=torch.from_numpy(np.concatenate([kept, kept[::-1]], axis=1)), num_nodes=60,
                 x=full.x, name="sbm60")
    return graph, sensitive


def _publish(cls, split, **extra):
    graph, sensitive = split
    est = cls(random_state=4, **PARAMS[cls], **extra)
    return est, est.publish(graph, sensitive_links=sensitive)


def _same(a: PublishedGraph, b: PublishedGraph) -> bool:
    return a.equals(b)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_publish_returns_an_undirected_graph_over_the_same_nodes(cls, split):
    graph, _ = split
    est, out = _publish(cls, split)
    assert isinstance(out, Data) and out.num_nodes == graph.num_nodes
    ei = out.edge_index
    assert ei.dtype == torch.int64 and ei.size(0) == 2 and int(ei.min()) >= 0 and int(ei.max()) < 60
    assert bool((ei[0] != ei[1]).all())
    forward = set(map(tuple, ei.T.tolist()))
    assert len(forward) == ei.size(1) and forward == {(v, u) for u, v in forward}  # both directions, once
    assert torch.equal(out.x, graph.x) and out.x.dtype == torch.float32
    assert isinstance(est.released_, PublishedGraph) and est.released_.num_edges == ei.size(1) // 2
    assert _same(PublishedGraph.from_data(out), est.released_)
    assert est.is_fitted and est.fit(graph, sensitive_links=split[1]) is est
    no_x = cls(random_state=4, use_features=False, **PARAMS[cls]).publish(graph, sensitive_links=split[1])
    assert getattr(no_x, "x", None) is None


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_save_load_and_twin_give_the_identical_release(cls, split, tmp_path):
    graph, sensitive = split
    est, _ = _publish(cls, split)
    loaded = cls.load(est.save(tmp_path / "est.pt"))
    assert type(loaded) is cls and loaded.get_params() == est.get_params()
    assert _same(loaded.released_, est.released_) and loaded.privacy_report_ == est.privacy_report_
    assert torch.equal(loaded.released_.to_data().edge_index, est.released_.to_data().edge_index)
    twin = type(est)(**est.get_params())
    twin.publish(graph, sensitive_links=sensitive)
    assert _same(twin.released_, est.released_)
    other = type(est)(**{**est.get_params(), "random_state": 5}).fit(graph, sensitive_links=sensitive)
    if cls is not PPGSL:  # two PPGSL steps may sample the same few changes
        assert not _same(other.released_, est.released_)
    if cls is PPGSL:
        assert loaded.history_ == est.history_ and loaded.num_parameters_ == est.num_parameters_
        assert loaded.weights_ is None and est.weights_[0].shape[1] == est.weights_[1].size


@pytest.mark.parametrize("cls,method", [(EdgeRand, "edgerand"), (LapGraph, "lapgraph")])
def test_dp_publishers_report_what_the_run_reports(cls, method, split):
    graph, _ = split
    est = cls(random_state=3, epsilon=2.0, delta=1e-6).fit(graph)
    result = run_method(method, labelled_sbm(60, 2, p_in=0.2, num_features=4, seed=1), seed=3,
                        overrides={"epsilon": 2.0, "delta": 1e-6, "attacks": "none", "utility": False})
    assert est.privacy_report_ == result.privacy
    assert est.privacy_report_.unit == "edge" and est.privacy_report_.epsilon == pytest.approx(2.0, abs=5e-3)
    assert est.privacy_statement_.endswith("edge-level, rigorous accounting")


@pytest.mark.parametrize("cls", [RandomPerturb, DICE, PPGSL], ids=lambda c: c.__name__)
def test_empirical_publishers_have_no_privacy_report(cls, split):
    est, _ = _publish(cls, split)
    assert est.privacy_report_ is None and est.privacy_statement_.startswith("non-private")


def test_the_run_publishes_what_the_estimator_publishes_on_the_protocol_graph():
    data = labelled_sbm(80, 2, p_in=0.2, num_features=4, seed=2)
    config = make_config("dice", {"ratio": 0.4, "attacks": "none", "utility": False})
    result = run_dice(config, data, seed=6)
    protocol = SensitiveLinkProtocol(data, seed=6)
    est = publish_on_protocol(DICE(random_state=6, ratio=0.4), protocol)
    assert _same(est.released_, result.release) and result.privacy is None


def test_the_input_graphs_baseline_is_computed_once_per_split_and_equals_a_fresh_one():
    data = labelled_sbm(80, 2, p_in=0.2, num_features=4, seed=2)
    publishing._INPUT_METRICS.items.clear()
    runs = [run_dice(make_config("dice", {"ratio": r, "attacks": "cn,gae-sim"}), data, seed=6) for r in (0.2, 0.6)]
    assert len(publishing._INPUT_METRICS.items) == 1  # the second run read the first one's baseline
    protocol = SensitiveLinkProtocol(data, seed=6)
    fresh = protocol.evaluate(protocol.input_graph, attacks=["cn", "gae-sim"]).metrics()
    want = {k: v for k, v in fresh.items() if k != "published_edges"}
    for result in runs:
        assert {b.metric: b.value for b in result.baselines if b.name == "input graph"} == want
    # another seed, attack list or utility flag is another key
    other = SensitiveLinkProtocol(data, seed=7)
    input_graph_metrics(other, ["cn", "gae-sim"])
    input_graph_metrics(protocol, ["cn"])
    input_graph_metrics(protocol, ["cn"], utility=False)
    assert len(publishing._INPUT_METRICS.items) == 4
    assert input_graph_metrics(protocol, "cn,gae-sim") == fresh  # ids as one string: the same key


def test_a_release_equal_to_the_input_graph_is_its_own_baseline():
    data = labelled_sbm(80, 2, p_in=0.2, num_features=4, seed=2)
    publishing._INPUT_METRICS.items.clear()
    result = run_method("random-perturb", data, seed=3, overrides={"ratio": 0.0, "attacks": "cn,gae-sim"})
    assert len(publishing._INPUT_METRICS.items) == 1  # the release's metrics, kept as the baseline's
    protocol = SensitiveLinkProtocol(data, seed=3)
    fresh = protocol.evaluate(protocol.input_graph, attacks=["cn", "gae-sim"]).metrics()
    assert {b.metric: b.value for b in result.baselines if b.name == "input graph"} == \
        {k: v for k, v in fresh.items() if k != "published_edges"}
    assert {k: result.metrics[k] for k in fresh} == fresh


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_not_fitted_before_fit(cls, tmp_path):
    est = cls(**PARAMS[cls])
    for name in ("released_", "privacy_report_"):
        with pytest.raises(NotFittedError, match=name):
            getattr(est, name)
    with pytest.raises(NotFittedError, match="call fit"):
        est.save(tmp_path / "x.pt")


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_bad_input_is_one_line_graphpriv_error(cls, split):
    graph, sensitive = split
    bad_x = graph.x.clone()
    bad_x[3, 1] = float("nan")
    cases = [Data(edge_index=graph.edge_index, num_nodes=60, x=bad_x),
             Data(edge_index=torch.empty(2, 0, dtype=torch.long), num_nodes=60)]
    for data in cases:
        with pytest.raises(DatasetError) as err:
            cls(**PARAMS[cls]).publish(data, sensitive_links=sensitive)
        assert "\n" not in str(err.value) and ("not finite" in str(err.value) or "no edges" in str(err.value))
    with pytest.raises(DatasetError, match=r"outside \[0, 60\)"):
        cls(**PARAMS[cls]).publish(graph, sensitive_links=np.array([[0], [60]]))
    if cls.needs_sensitive_links:
        with pytest.raises(DatasetError, match="needs sensitive_links") as err:
            cls(**PARAMS[cls]).publish(graph)
        assert "\n" not in str(err.value)


def test_bad_hyperparameters_and_edgerand_cap():
    with pytest.raises(ConfigError, match="ratio"):
        RandomPerturb(ratio=2.0)
    with pytest.raises(ConfigError, match="unknown hyperparameter"):
        EdgeRand(sigma=1.0)
    graph = labelled_sbm(60, 2, num_features=4, seed=0)
    with pytest.raises(ConfigError, match="max_edges"):
        EdgeRand(epsilon=0.1, max_edges=100).fit(graph)


def test_published_graph_data_round_trip():
    g = PublishedGraph(np.array([[3, 1, 2, 0], [1, 4, 0, 4]]), 6, np.arange(12, dtype=np.float64).reshape(6, 2))
    data = g.to_data()
    assert data.num_nodes == 6 and data.edge_index.shape == (2, 8) and data.x.dtype == torch.float32
    back = PublishedGraph.from_data(data)
    assert back.equals(g) and np.array_equal(back.pairs, g.pairs) and np.array_equal(back.x, g.x)
    assert PublishedGraph.from_data(data, with_features=False).x is None
    data.edge_index[0, 0], data.x[0, 0] = 5, 99.0  # to_data copies: the graph is unchanged
    assert g.equals(back)
    one_way = PublishedGraph.from_data(Data(edge_index=torch.tensor([[1, 2], [0, 1]]), num_nodes=3))
    assert one_way.pairs.tolist() == [[0, 1], [1, 2]] and one_way.x is None and "x" not in one_way.to_data()
    assert ReExported is PublishedGraph
    with pytest.raises(DatasetError, match="expected a torch_geometric"):
        PublishedGraph.from_data("graph")


def test_loading_another_class_is_a_model_file_error(split, tmp_path):
    est, _ = _publish(EdgeRand, split)
    path = est.save(tmp_path / "edgerand.pt")
    with pytest.raises(ModelFileError, match="holds a EdgeRand, not a LapGraph"):
        LapGraph.load(path)
    with pytest.raises(ModelFileError):
        PPGSL.load(path)
    assert isinstance(GraphPublisher.load(path), EdgeRand) and isinstance(Estimator.load(path), EdgeRand)


def test_dice_without_room_to_add_edges_is_a_one_line_dataset_error(split):
    graph, _ = split
    everyone = np.array([np.arange(0, 60, 2), np.arange(1, 60, 2)])  # every node is an endpoint
    with pytest.raises(DatasetError, match="cannot add .* edges") as err:
        DICE(ratio=0.3).publish(graph, sensitive_links=everyone)
    assert "\n" not in str(err.value) and "lower ratio" in str(err.value)
    pairs = torch.combinations(torch.arange(10)).T  # K_10: no non-edge left to add
    complete = Data(edge_index=torch.cat([pairs, pairs.flip(0)], dim=1), num_nodes=10)
    with pytest.raises(DatasetError, match="cannot add .* edges") as err:
        DICE(ratio=0.3).publish(complete, sensitive_links=np.array([[0], [1]]))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_ragged_sensitive_links_are_a_dataset_error(cls, split):
    graph, _ = split
    with pytest.raises(DatasetError, match="^sensitive_links ") as err:
        cls(**PARAMS[cls]).publish(graph, sensitive_links=[[0, 1], [2]])
    assert "\n" not in str(err.value)


def test_each_release_states_its_neighbouring_relation(split):
    graph, _ = split
    # EdgeRand: one edge added or removed replaces one adjacency bit (REPLACE_ONE over the bits, stated
    # explicitly); LapGraph: the edge unit's add/remove
    edgerand = EdgeRand(epsilon=3.0, random_state=0).fit(graph).privacy_report_
    lapgraph = LapGraph(epsilon=3.0, random_state=0).fit(graph).privacy_report_
    assert edgerand.neighboring_relation == "REPLACE_ONE" and "adjacency bit" in edgerand.relation
    assert lapgraph.neighboring_relation == "ADD_OR_REMOVE_ONE" and edgerand.unit == lapgraph.unit == "edge"
