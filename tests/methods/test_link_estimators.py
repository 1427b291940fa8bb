"""The link-prediction estimators: fit / predict_proba / score, twins, files, bad input, and the
privacy report against the protocol's run."""

import numpy as np
import pytest
import torch

from graphpriv.data.splits import link_split
from graphpriv.errors import ConfigError, DatasetError, GraphPrivError, ModelFileError, NotFittedError
from graphpriv.evaluation.link import training_graph
from graphpriv.linkpred.subgraphs import Extractor
from graphpriv.methods.dplp_subgraph import (
    DPLPLinkPredictor,
    SEALConfig,
    SEALDGCNNConfig,
    SEALGCNLinkPredictor,
    SEALLinkPredictor,
)
from graphpriv.methods.estimator import Estimator
from graphpriv.methods.heuristic import CommonNeighbours, NeighbourhoodHeuristic
from graphpriv.methods.lapgraph_sgnn import LapGraphConfig, LapGraphLinkPredictor
from graphpriv.testing.graphs import labelled_sbm

pytestmark = pytest.mark.usefixtures("one_thread")

SEED = 3
SMALL = {"epochs": 2, "batch_size": 32}
PRIVATE = {**SMALL, "k": 2, "theta": 4, "epsilon": 4.0}
ESTIMATORS = {
    "dplp": (DPLPLinkPredictor, PRIVATE),
    "seal": (SEALLinkPredictor, SMALL),
    "lapgraph": (LapGraphLinkPredictor, {**SMALL, "epsilon": 2.0}),
    "cn": (CommonNeighbours, {}),
    "aa": (NeighbourhoodHeuristic, {"heuristic": "aa"}),
    "ra": (NeighbourhoodHeuristic, {"heuristic": "ra"}),
}


@pytest.fixture(scope="module")
def graph():
    data = labelled_sbm(80, 2, p_in=0.2, num_features=4, seed=1)
    data.name = "sbm80"
    return data


@pytest.fixture(scope="module")
def split(graph):
    return link_split(graph, seed=SEED)


@pytest.fixture(scope="module")
def train(graph, split):
    return training_graph(graph, split)


@pytest.fixture(scope="module")
def fitted(train, split):
    out = {}
    for name, (cls, params) in ESTIMATORS.items():
        out[name] = cls(random_state=SEED, **params).fit(train, split.val_pos, split.val_neg)
    return out


def _pairs(split):
    return torch.from_numpy(np.concatenate([split.test_pos, split.test_neg], axis=1))


def _one_line(err) -> str:
    assert isinstance(err.value, GraphPrivError) and "\n" not in str(err.value)
    return str(err.value)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_fit_predict_round_trip(fitted, split, name):
    est = fitted[name]
    pairs = _pairs(split)
    scores = est.predict_proba(pairs)
    assert isinstance(scores, torch.Tensor) and scores.shape == (pairs.shape[1],)
    assert torch.equal(scores, est.predict_proba(pairs.numpy()))  # numpy pairs too
    if name not in ("cn", "aa", "ra"):  # the GNNs' sigmoid scores; CN's counts are scores, not probabilities
        assert scores.min() >= 0 and scores.max() <= 1
        assert est.model_ is not None and 1 <= est.best_epoch_ <= 2 and 0 <= est.val_auc_ <= 1
        assert est.graph_.shape[0] == 2 and est.num_nodes_ == 80
    else:  # counts (CN) or sums of per-neighbour weights (AA, RA): float64, not probabilities
        assert scores.dtype == torch.float64 and scores.min() >= 0
        assert torch.equal(scores, scores.round()) == (name == "cn") or not bool(scores.any())
    assert 0 <= est.score(split.test_pos, split.test_neg) <= 1
    assert est.predict_proba(torch.empty(2, 0, dtype=torch.long)).shape == (0,)


@pytest.mark.parametrize("name", sorted(set(ESTIMATORS) - {"cn", "aa", "ra"}))
def test_validation_auc_of_fit_is_the_score_of_the_kept_model(fitted, split, name):
    # the link protocol reports val_auc_ instead of scoring the validation pairs again: the same number
    est = fitted[name]
    assert est.val_auc_ == est.score(split.val_pos, split.val_neg)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_save_load_gives_identical_predictions(fitted, split, tmp_path, name):
    est = fitted[name]
    path = est.save(tmp_path / f"{name}.pt")
    loaded = Estimator.load(path)
    assert type(loaded) is type(est) and loaded.get_params() == est.get_params()
    assert torch.equal(loaded.predict_proba(_pairs(split)), est.predict_proba(_pairs(split)))
    assert loaded.privacy_report_ == est.privacy_report_
    if name not in ("cn", "aa", "ra"):
        assert (loaded.k_, loaded.theta_, loaded.best_epoch_) == (est.k_, est.theta_, est.best_epoch_)
        assert loaded.info_ == est.info_ and loaded.ledger_ is None


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_twin_from_get_params_fits_the_same_model(fitted, train, split, name):
    est = fitted[name]
    twin = type(est)(**est.get_params()).fit(train, split.val_pos, split.val_neg)
    assert torch.equal(twin.predict_proba(_pairs(split)), est.predict_proba(_pairs(split)))


def test_private_report_equals_the_protocol_run(graph, fitted, split):
    from graphpriv.experiments.runner import run_method

    result = run_method("dplp-ps", graph, seed=SEED, overrides=PRIVATE)
    est = fitted["dplp"]
    report = est.privacy_report_
    assert report is not None and report.unit == "edge"
    assert (report.epsilon, report.delta) == (result.privacy.epsilon, result.privacy.delta)
    assert report.phases == result.privacy.phases and report == result.privacy
    assert result.metrics["test_auc"] == est.score(split.test_pos, split.test_neg)
    assert result.metrics["val_auc"] == est.val_auc_
    assert result.info == {**est.info_, "input_normalisations": []}
    assert "edge-level" in est.privacy_statement_


def test_non_private_estimators_report_nothing(fitted):
    assert fitted["seal"].privacy_report_ is None and fitted["cn"].privacy_report_ is None
    assert "non-private" in fitted["seal"].privacy_statement_
    lap = fitted["lapgraph"].privacy_report_
    assert [p.name for p in lap.phases] == ["edge count", "perturbation"] and lap.epsilon <= 2.0 + 1e-3


def test_preset_defaults_are_the_registrys():
    from graphpriv.experiments.registry import make_config

    assert SEALDGCNNConfig() == make_config("seal", {}) and SEALConfig() == make_config("seal-gcn", {})
    assert LapGraphConfig() == make_config("lapgraph-sgnn", {})
    assert SEALLinkPredictor().get_params() == {"random_state": None, **make_config("seal", {}).model_dump(mode="json")}
    assert SEALGCNLinkPredictor().get_params() == {"random_state": None,
                                                   **make_config("seal-gcn", {}).model_dump(mode="json")}


def test_without_validation_the_last_epoch_is_kept(train):
    est = SEALLinkPredictor(random_state=SEED, **SMALL).fit(train)
    assert est.best_epoch_ == 2 and est.val_auc_ is None
    with pytest.raises(ConfigError, match="both val_pos and val_neg"):
        SEALLinkPredictor(**SMALL).fit(train, val_pos=np.array([[0], [1]]))


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_not_fitted(name):
    cls, params = ESTIMATORS[name]
    est = cls(**params)
    with pytest.raises(NotFittedError, match="not fitted"):
        est.predict_proba(np.array([[0], [1]]))
    with pytest.raises(NotFittedError):
        est.graph_  # noqa: B018


@pytest.mark.parametrize("name", ["dplp", "cn"])
def test_bad_pairs(fitted, name):
    est = fitted[name]
    with pytest.raises(DatasetError, match=r"pairs has node id 80 outside \[0, 80\)") as err:
        est.predict_proba(torch.tensor([[0, 80], [1, 2]]))
    _one_line(err)
    with pytest.raises(DatasetError, match=r"pairs must have shape \[2, P\], got \[3, 4\]") as err:
        est.predict_proba(np.zeros((3, 4), dtype=np.int64))
    _one_line(err)
    with pytest.raises(DatasetError, match="integer node ids") as err:
        est.predict_proba(np.zeros((2, 4)))
    _one_line(err)
    with pytest.raises(DatasetError, match="neg") as err:
        est.score(np.array([[0], [1]]), np.zeros((2, 0), dtype=np.int64))
    _one_line(err)
    if name == "dplp":  # a subgraph needs two distinct endpoints
        with pytest.raises(DatasetError, match=r"pairs a node with itself \(4, 4\) at column 1") as err:
            est.predict_proba(np.array([[0, 4], [1, 4]]))
        _one_line(err)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_bad_training_graph(train, name):
    from torch_geometric.data import Data

    cls, params = ESTIMATORS[name]
    nan = train.clone()
    nan.x = train.x.clone()
    nan.x[3, 1] = float("nan")
    with pytest.raises(DatasetError, match="finite") as err:
        cls(**params).fit(nan)
    _one_line(err)
    with pytest.raises(DatasetError, match="no edges") as err:
        cls(**params).fit(Data(edge_index=torch.empty(2, 0, dtype=torch.long), num_nodes=5, name="empty"))
    _one_line(err)
    with pytest.raises(DatasetError, match="val_pos has node id 99") as err:
        cls(**params).fit(train, np.array([[0], [99]]), np.array([[0], [2]]))
    _one_line(err)


def test_a_file_of_another_class_is_refused(fitted, tmp_path):
    cn_file = fitted["cn"].save(tmp_path / "cn.pt")
    with pytest.raises(ModelFileError, match="holds a CommonNeighbours, not a DPLPLinkPredictor"):
        DPLPLinkPredictor.load(cn_file)
    dplp_file = fitted["dplp"].save(tmp_path / "dplp.pt")
    with pytest.raises(ModelFileError, match="not a LapGraphLinkPredictor"):
        LapGraphLinkPredictor.load(dplp_file)
    assert isinstance(DPLPLinkPredictor.load(fitted["seal"].save(tmp_path / "seal.pt")), SEALLinkPredictor)


@pytest.mark.parametrize("cls", [DPLPLinkPredictor, LapGraphLinkPredictor])
def test_validation_pairs_that_are_training_edges_are_refused(train, split, cls):
    from graphpriv.data.graph import undirected_pairs

    edge = undirected_pairs(train.edge_index)[:, 3:4]
    for name, val in (("val_pos", (np.concatenate([split.val_pos, edge[::-1]], axis=1), split.val_neg)),
                      ("val_neg", (split.val_pos, np.concatenate([edge, split.val_neg], axis=1)))):
        with pytest.raises(DatasetError, match=rf"^{name} pair .* is an edge of the training graph") as err:
            cls(**PRIVATE if cls is DPLPLinkPredictor else SMALL).fit(train, *val)
        _one_line(err)


def test_progress_none_is_no_progress(train, split):
    for cls, params in ((SEALLinkPredictor, {**SMALL, "epochs": 1}), (CommonNeighbours, {})):
        est = cls(random_state=SEED, **params).fit(train, split.val_pos, split.val_neg, progress=None)
        assert est.is_fitted


def test_lapgraph_refuses_the_hyperparameters_it_cannot_honour():
    from graphpriv.methods.dplp_subgraph import DPLPConfig

    for params, field in (({"k": "auto"}, "k"), ({"theta": "auto"}, "theta"),
                          ({"extractor": "path", "k": "auto"}, "k"), ({"private": False}, "private")):
        with pytest.raises(ConfigError, match=rf"invalid hyperparameter for LapGraphLinkPredictor: {field}:") as err:
            LapGraphLinkPredictor(**params)
        _one_line(err)
    # valid configs dump as before (stored configs keep their hash): DPLP's fields, the preset's values
    before = {**DPLPConfig().model_dump(), "extractor": Extractor.NEIGHBOURHOOD, "optimizer": "adam", "lr": 0.001,
              "count_fraction": 0.01}
    assert LapGraphConfig().model_dump() == {**before, "max_train_links": None}
    from graphpriv.experiments.store import config_hash
    assert config_hash(LapGraphConfig().model_dump(mode="json")) == config_hash(
        LapGraphConfig().model_dump(mode="json", exclude={"max_train_links"}))
    assert LapGraphLinkPredictor(private=True, k=3, extractor="path").get_params()["k"] == 3


def test_an_empty_audit_hook_changes_nothing_and_noise_scale_reaches_the_engine(train, split, fitted):
    from graphpriv.privacy.hooks import AuditHook

    hooked = DPLPLinkPredictor(random_state=SEED, **PRIVATE).fit(train, split.val_pos, split.val_neg,
                                                                audit_hook=AuditHook())
    pairs = _pairs(split)
    assert torch.equal(hooked.predict_proba(pairs), fitted["dplp"].predict_proba(pairs))
    assert hooked.info_ == fitted["dplp"].info_ and hooked.privacy_report_ == fitted["dplp"].privacy_report_
    faulty = DPLPLinkPredictor(random_state=SEED, **PRIVATE).fit(train, split.val_pos, split.val_neg,
                                                                audit_hook=AuditHook(noise_scale=0.5))
    assert faulty.privacy_report_ == fitted["dplp"].privacy_report_  # the ledger still claims the calibration
    assert not torch.equal(faulty.predict_proba(pairs), fitted["dplp"].predict_proba(pairs))


def test_audit_hook_canaries_join_the_population_and_bad_hooks_are_refused(train):
    from graphpriv.privacy.hooks import AuditHook

    class Canaries:
        def attach(self, *, group_size, max_grad_norm):
            self.group, self.seen = group_size, []
            return 3 * group_size

        def step(self, indices, noise_std):
            self.seen.append((indices.clone(), noise_std))

    canaries = Canaries()
    est = DPLPLinkPredictor(random_state=SEED, **PRIVATE).fit(train, audit_hook=AuditHook(0.5, canaries))
    info = est.info_
    assert canaries.group == info["group_size"]
    assert info["steps"] == len(canaries.seen) == 2 * -(-(info["num_train_examples"] + 3 * canaries.group) // 32)
    drawn = torch.cat([i for i, _ in canaries.seen])
    assert drawn.numel() > 0 and 0 <= int(drawn.min()) and int(drawn.max()) < 3 * canaries.group
    assert [s for _, s in canaries.seen] == pytest.approx([0.5 * info["noise_std"]] * info["steps"])
    for cls, params, hook, match in (
            (SEALLinkPredictor, SMALL, AuditHook(canaries=Canaries()), "non-private"),
            (DPLPLinkPredictor, {**PRIVATE, "theta": "auto"}, AuditHook(noise_scale=0.1), "fixed k and theta"),
            (DPLPLinkPredictor, PRIVATE, {"noise_scale": 0.1}, "AuditHook")):
        with pytest.raises(ConfigError, match=match) as err:
            cls(**params).fit(train, audit_hook=hook)
        _one_line(err)


@pytest.mark.parametrize("name", ["dplp", "lapgraph"])
def test_predict_proba_on_a_given_graph(fitted, train, split, name):
    from torch_geometric.data import Data

    est, pairs = fitted[name], _pairs(split)
    same = Data(edge_index=torch.cat([est.graph_, est.graph_.flip(0)], dim=1), num_nodes=est.num_nodes_)
    assert torch.equal(est.predict_proba(pairs, data=same), est.predict_proba(pairs))
    assert est.score(split.test_pos, split.test_neg, data=same) == est.score(split.test_pos, split.test_neg)
    sparser = Data(edge_index=same.edge_index[:, ::2], num_nodes=est.num_nodes_)
    assert est.predict_proba(pairs, data=sparser).shape == (pairs.shape[1],)
    with pytest.raises(DatasetError, match="nodes but this .* was fitted on a graph of 80") as err:
        est.predict_proba(pairs, data=Data(edge_index=same.edge_index, num_nodes=90))
    _one_line(err)


@pytest.mark.parametrize("heuristic", ["cn", "aa", "ra"])
def test_heuristics_equal_networkx_and_their_runs(fitted, train, split, graph, heuristic):
    import networkx as nx

    from graphpriv.data.graph import undirected_pairs
    from graphpriv.experiments.runner import run_method

    g = nx.Graph()
    g.add_nodes_from(range(int(train.num_nodes)))
    g.add_edges_from(map(tuple, undirected_pairs(train.edge_index).T.tolist()))
    pairs = _pairs(split)
    ebunch = list(map(tuple, pairs.T.tolist()))
    if heuristic == "cn":
        expected = [len(list(nx.common_neighbors(g, u, v))) for u, v in ebunch]
    else:
        index = nx.adamic_adar_index if heuristic == "aa" else nx.resource_allocation_index
        expected = [p for _, _, p in index(g, ebunch)]
    got = fitted[heuristic].predict_proba(pairs).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert fitted[heuristic].heuristic == heuristic and fitted[heuristic].get_params()["heuristic"] == heuristic
    result = run_method(heuristic, graph, seed=SEED)
    assert result.metrics["test_auc"] == fitted[heuristic].score(split.test_pos, split.test_neg)
    assert result.privacy is None and isinstance(result.estimator, NeighbourhoodHeuristic)
    assert result.estimator.heuristic == heuristic
    (baseline,) = result.baselines
    assert baseline.name == ("chance" if heuristic == "cn" else "common neighbours")


def test_an_unknown_heuristic_is_refused(fitted):
    with pytest.raises(ConfigError, match="heuristic must be one of cn, aa, ra"):
        NeighbourhoodHeuristic(heuristic="jc")
    with pytest.raises(ConfigError, match="heuristic"):
        fitted["aa"].set_params(heuristic="pa")
    assert fitted["aa"].is_fitted and fitted["aa"].heuristic == "aa"  # a refused change leaves it as it was


def test_lapgraph_max_train_links_trains_on_that_many_released_edges(train):
    whole = LapGraphLinkPredictor(random_state=SEED, **SMALL, epsilon=8.0).fit(train)
    capped = LapGraphLinkPredictor(random_state=SEED, **SMALL, epsilon=8.0, max_train_links=20).fit(train)
    released = whole.info_["released_edges"]
    assert capped.info_["released_edges"] == released > 20  # the same release: the cap draws after it
    assert whole.info_["num_train_examples"] > capped.info_["num_train_examples"]
    negatives = whole.info_["num_train_examples"] - released
    assert capped.info_["num_train_examples"] == 20 + round(negatives * 20 / released)
