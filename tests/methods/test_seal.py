"""SEAL with its own DGCNN (seal) beside the private models' GCN (seal-gcn): settings, the
SortPooling size, uniform negatives, files."""

from pathlib import Path

import numpy as np
import pytest
import torch

from graphpriv.data.graph import pair_codes, undirected_pairs
from graphpriv.data.splits import link_split
from graphpriv.errors import ConfigError
from graphpriv.evaluation.link import training_graph
from graphpriv.experiments.registry import ESTIMATORS, make_config
from graphpriv.linkpred.examples import uniform_training_links
from graphpriv.methods.dplp_subgraph import SEALGCNLinkPredictor, SEALLinkPredictor, sort_pool_size
from graphpriv.methods.estimator import Estimator
from graphpriv.nn.subgraph_gnn import Backbone
from graphpriv.testing.graphs import random_graph
from tests.conftest import needs_data

pytestmark = pytest.mark.usefixtures("one_thread")


def test_the_two_ids_fit_the_two_models():
    assert ESTIMATORS["seal"] is SEALLinkPredictor and ESTIMATORS["seal-gcn"] is SEALGCNLinkPredictor
    seal = make_config("seal", {})
    assert (seal.backbone, seal.h, seal.gcn_layers, seal.dense, seal.sort_k, seal.lr, seal.batch_size, seal.negatives) == \
        (Backbone.DGCNN, 2, 3, 128, "auto", 1e-4, 32, "uniform")
    gcn = make_config("seal-gcn", {})
    assert (gcn.backbone, gcn.h, gcn.lr) == (Backbone.GCN, 1, 0.001)


def test_sort_pool_size_is_the_percentile_with_a_floor():
    sizes = np.array([3, 50, 12, 40, 7, 33, 21, 18, 9, 60])  # sorted: 3 7 9 12 18 21 33 40 50 60
    assert sort_pool_size(sizes, 0.6) == 21  # the 6th smallest: 60% are no larger
    assert sort_pool_size(sizes, 0.1) == 10  # 3, raised to the floor of 10
    assert sort_pool_size(sizes, 1.0) == 60


def test_uniform_negatives_are_as_many_non_edges():
    graph = random_graph(40, 0.15, seed=1)
    pairs = undirected_pairs(graph.edge_index)
    links, labels = uniform_training_links(pairs, 40, rng=np.random.default_rng(0))
    assert labels.sum() == pairs.shape[1] == (labels == 0).sum()
    negatives = links[:, labels == 0]
    assert not np.isin(pair_codes(np.sort(negatives, axis=0), 40), pair_codes(pairs, 40)).any()
    assert (negatives[0] != negatives[1]).all()


def test_seal_fits_dgcnn_with_its_own_sort_k_and_reloads(tmp_path):
    graph = random_graph(50, 0.15, seed=3)
    split = link_split(graph, seed=0)
    model = SEALLinkPredictor(epochs=1, h=1, random_state=0).fit(training_graph(graph, split), split.val_pos,
                                                                   split.val_neg)
    assert model.info_["sort_k"] >= 10 and model._fit_config.sort_k == model.info_["sort_k"]
    assert model.model_.lin1.out_features == 128 and len(model.model_.convs) == 4
    loaded = Estimator.load(model.save(tmp_path / "seal.pt"))
    assert torch.equal(loaded.predict_proba(split.test_pos), model.predict_proba(split.test_pos))


def test_a_seal_file_of_the_gcn_model_still_loads(tmp_path):
    """Files saved when ``seal`` was the subgraph GCN hold a GCN fit config: gcn_layers applies to the
    DGCNN only, so such a file rebuilds its one-layer GCN."""
    graph = random_graph(40, 0.2, seed=4)
    split = link_split(graph, seed=0)
    old = SEALLinkPredictor(backbone="gcn", h=1, sort_k=10, epochs=1, random_state=0).fit(training_graph(graph, split))
    assert len(old.model_.convs) == 1
    loaded = Estimator.load(old.save(tmp_path / "old-seal.pt"))
    assert torch.equal(loaded.predict_proba(split.test_pos), old.predict_proba(split.test_pos))


def test_max_train_links_caps_the_positive_examples_and_keeps_the_stored_runs_keys():
    from graphpriv.experiments.store import config_hash

    graph = random_graph(60, 0.12, seed=2)
    split = link_split(graph, val_ratio=0.05, test_ratio=0.1, seed=0)
    model = SEALLinkPredictor(epochs=1, h=1, max_train_links=30, random_state=0).fit(training_graph(graph, split))
    assert model.info_["num_train_examples"] == 60 and model.info_["train_edges"] > 30
    whole = SEALLinkPredictor(epochs=1, h=1, random_state=0).fit(training_graph(graph, split))
    assert whole.info_["num_train_examples"] == 2 * whole.info_["train_edges"]
    # the setting came after SEAL runs were stored: at None it leaves their key as it was
    config = make_config("seal", {}).model_dump(mode="json")
    assert config["max_train_links"] is None
    without = {key: value for key, value in config.items() if key != "max_train_links"}
    assert config_hash(config) == config_hash(without)
    assert config_hash({**config, "max_train_links": 30}) != config_hash(without)
    with pytest.raises(ConfigError, match="max_train_links"):
        make_config("seal", {"max_train_links": 0})


@needs_data
def test_the_seal_cell_of_the_leaderboard_keeps_the_key_of_its_committed_runs():
    from graphpriv.experiments.grid import load_grid
    from graphpriv.experiments.results import read_results
    from graphpriv.experiments.sweep import make_run

    # the committed results of both tables hold USAir's SEAL runs under this key: a rerun reuses them
    key = make_run("seal", "usair", 0, {}).key[3]
    assert key == "1722d3070d61336c"
    results = Path(__file__).resolve().parents[2] / "docs" / "results"
    for table in ("linkpred-leaderboard", "seal-table2"):
        records, _ = read_results(results / f"{table}.csv", load_grid(table))
        hashes = {r.config_hash for r in records if r.method == "seal" and r.dataset == "usair" and r.settings == "{}"}
        assert hashes == {key}, table
