"""HeuristicMixLinkPredictor (dp-heuristic-mix): the selection, its report, files, the protocol's
run and bad input."""

import math

import numpy as np
import pytest
import torch

from graphpriv.data.splits import link_split
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.evaluation.link import training_graph
from graphpriv.experiments.runner import run_method
from graphpriv.linkpred.ramp_auc import ramp_auc_sum
from graphpriv.methods.estimator import Estimator
from graphpriv.methods.heuristic_mix import (
    HeuristicMixLinkPredictor,
    directions,
    mix_features,
    positive_sample,
    reference_pairs,
)
from graphpriv.privacy.hooks import AuditHook
from graphpriv.testing.graphs import labelled_sbm


@pytest.fixture(scope="module")
def graph():
    data = labelled_sbm(120, 3, p_in=0.15, num_features=4, seed=5)
    data.name = "sbm120"
    return data


@pytest.fixture(scope="module")
def split(graph):
    return link_split(graph, seed=1)


@pytest.fixture(scope="module")
def train(graph, split):
    return training_graph(graph, split)


def test_fit_chooses_a_direction_and_reports_pure_edge_dp(train, split):
    model = HeuristicMixLinkPredictor(epsilon=2.0, random_state=0).fit(train, split.val_pos, split.val_neg)
    assert model.fit(train) is model
    report = model.privacy_report_
    assert (report.epsilon, report.delta, report.unit) == (2.0, 0.0, "edge")
    assert 0 <= model.choice_ < 16 and model.theta_ == pytest.approx(math.pi / 2 * model.choice_ / 15)
    np.testing.assert_allclose(model.weights_, [math.cos(model.theta_), math.sin(model.theta_)])
    assert model.info_["gumbel_scale"] == pytest.approx(2 * model.info_["sensitivity"] / 2.0)
    scores = model.predict_proba(split.test_pos)
    adj_scores = mix_features(model._adjacency(), split.test_pos) @ model.weights_
    np.testing.assert_allclose(scores.numpy(), adj_scores)


def test_without_noise_the_choice_is_the_utility_argmax(train):
    """noise_scale 0 (an audit's fault) leaves the exponential mechanism's argmax: the best ramp
    AUC of the keyed sample against the reference pairs, computed here from the public pieces."""
    model = HeuristicMixLinkPredictor(angles=8, random_state=3).fit(train, audit_hook=AuditHook(noise_scale=0.0))
    from graphpriv.data.graph import to_csr, undirected_pairs

    edges = undirected_pairs(train.edge_index)
    n = int(train.num_nodes)
    limit = min(20_000, n * (n - 1) // 2)
    refs = reference_pairs(n, 2 * limit, np.random.default_rng([3, 1]))
    adj = to_csr(edges, n)
    pos, ref = mix_features(adj, positive_sample(edges, limit, 3)), mix_features(adj, refs)
    utility = [ramp_auc_sum(pos @ w, ref @ w, margin=1.0) for w in directions(8)]
    assert model.choice_ == int(np.argmax(utility))


def test_same_seed_same_choice_and_the_noise_varies_it(train):
    picks = [HeuristicMixLinkPredictor(epsilon=0.01, random_state=s).fit(train).choice_ for s in range(12)]
    again = [HeuristicMixLinkPredictor(epsilon=0.01, random_state=s).fit(train).choice_ for s in range(12)]
    assert picks == again and len(set(picks)) > 3  # at epsilon 0.01 the draw is near uniform


def test_save_load_round_trip(train, split, tmp_path):
    model = HeuristicMixLinkPredictor(random_state=2).fit(train)
    path = model.save(tmp_path / "mix.pt")
    loaded = Estimator.load(path)
    assert isinstance(loaded, HeuristicMixLinkPredictor) and loaded.choice_ == model.choice_
    assert torch.equal(loaded.predict_proba(split.test_neg), model.predict_proba(split.test_neg))
    assert loaded.score(split.test_pos, split.test_neg) == model.score(split.test_pos, split.test_neg)


def test_protocol_run_beats_chance_and_names_its_baseline(graph):
    result = run_method("dp-heuristic-mix", graph, seed=0)
    assert result.privacy.epsilon == 4.0 and result.baselines[0].name == "common neighbours"
    assert result.metrics["test_auc"] > 0.6


def test_ra3_heuristic_run(graph):
    result = run_method("ra3", graph, seed=0)
    assert result.privacy is None and result.metrics["test_auc"] > 0.6


def test_bad_input_is_refused(train):
    with pytest.raises(ConfigError, match="epsilon"):
        HeuristicMixLinkPredictor(epsilon=0)
    with pytest.raises(ConfigError, match="angles"):
        HeuristicMixLinkPredictor(angles=1)
    with pytest.raises(ConfigError, match="UtilityCanaries"):
        HeuristicMixLinkPredictor().fit(train, audit_hook=AuditHook(canaries=object()))
    with pytest.raises(DatasetError, match="val_pos"):
        HeuristicMixLinkPredictor().fit(train, val_pos=np.array([[0], [10_000]]))
    with pytest.raises(DatasetError):
        HeuristicMixLinkPredictor().fit(train).predict_proba(np.array([[0, 1, 2]]))
