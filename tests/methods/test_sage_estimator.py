"""SAGEClassifier (sage-ndp; with D = 0 the feature-only baselines on GAP's split): the rows one
node reaches against the group size, the accounting, the round trip, bad input."""

import math

import numpy as np
import pytest
import torch
from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant

from graphpriv.errors import ConfigError
from graphpriv.methods.node_level_aggregation import bounded_edges
from graphpriv.methods.sage import SAGEClassifier, SAGEConfig, closed_neighbourhood_rows

FAST = {"epochs": 3, "batch_size": 40}


def test_a_node_reaches_at_most_d_plus_one_training_rows(graph, split):
    """The group size K = D + 1 by brute force: every node's column in the training rows of Pi."""
    for d in (1, 3, 8):
        edges = bounded_edges(graph.edge_index, graph.num_nodes, d, seed=0, info=None)
        pi = closed_neighbourhood_rows(edges, graph.num_nodes)
        assert np.allclose(np.asarray(pi.sum(1)).ravel(), 1.0)
        reached = np.diff(pi[split[0]].tocsc().indptr)
        assert reached.max() <= d + 1 and reached.max() == d + 1  # the bound holds and is reached


def test_the_feature_only_fit_is_ordinary_poisson_dp_sgd(graph, split):
    train = split[0]
    est = SAGEClassifier(max_degree=0, epsilon=2.0, random_state=0, **FAST).fit(graph, train)
    steps, rate = 3 * math.ceil(train.size / 40), 40 / train.size
    reference = RdpAccountant().compose(
        dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(est.noise_multiplier_)), steps).get_epsilon(1e-5)
    assert est.privacy_report_.epsilon == pytest.approx(reference, rel=1e-9) and est.info_["group_size"] == 1
    assert est.info_["noise_std"] == pytest.approx(est.noise_multiplier_)  # C = 1, one example per node
    assert any("no edge is read" in note for note in est.privacy_report_.notes)


def test_the_one_hop_fit_pays_for_d_plus_one_examples_per_node(graph, split):
    from graphpriv.privacy.accountant import GraphRdpAccountant
    from graphpriv.privacy.events import BinomialGroupGaussianDpEvent

    est = SAGEClassifier(max_degree=4, epsilon=2.0, random_state=0, **FAST).fit(graph, split[0])
    steps, rate = 3 * math.ceil(split[0].size / 40), 40 / split[0].size
    reference = GraphRdpAccountant().compose(BinomialGroupGaussianDpEvent(est.noise_multiplier_, rate, 5), steps)
    assert est.privacy_report_.epsilon == pytest.approx(reference.get_epsilon(1e-5), rel=1e-9)
    flat = SAGEClassifier(max_degree=0, epsilon=2.0, random_state=0, **FAST).fit(graph, split[0])
    assert est.info_["group_size"] == 5 and est.noise_multiplier_ > 0
    assert est.info_["noise_std"] == pytest.approx(est.noise_multiplier_ * 2 * 5)  # 2 C K
    assert est.info_["noise_std"] > flat.info_["noise_std"]
    assert est.privacy_report_.epsilon <= 2.0 and est.privacy_report_.unit == "node"
    assert not est.info_["within_degree_bound"]
    assert any("does not cover it" in note for note in est.privacy_report_.notes)


def test_without_noise_the_neighbourhood_carries_the_structure(graph, split):
    train, test = split
    y = graph.y[torch.from_numpy(test)]
    one_hop = SAGEClassifier(private=False, max_degree=30, random_state=0, epochs=30).fit(graph, train)
    features = SAGEClassifier(private=False, max_degree=0, random_state=0, epochs=30).fit(graph, train)
    assert one_hop.privacy_report_ is None
    assert float((one_hop.predict(nodes=test) == y).float().mean()) > float((features.predict(nodes=test) == y)
                                                                            .float().mean()) + 0.1


def test_fit_predict_save_load_round_trip(graph, split, tmp_path):
    est = SAGEClassifier(max_degree=5, epsilon=4.0, random_state=2, **FAST).fit(graph, split[0])
    again = SAGEClassifier(max_degree=5, epsilon=4.0, random_state=2, **FAST).fit(graph, split[0])
    assert torch.equal(est.predict_proba(), again.predict_proba())
    loaded = SAGEClassifier.load(est.save(tmp_path / "sage.pt"))
    assert torch.equal(loaded.predict_proba(nodes=split[1]), est.predict_proba(nodes=split[1]))
    assert loaded.privacy_report_ == est.privacy_report_ and loaded.get_params() == est.get_params()
    assert est.predict(graph).shape == (graph.num_nodes,)


def test_bad_input_is_refused(graph):
    from graphpriv.evaluation.transductive import run_sage

    with pytest.raises(ConfigError, match="max_degree"):
        SAGEClassifier(max_degree=-1)
    with pytest.raises(ConfigError, match="run_sage runs sage-ndp"):
        run_sage(SAGEConfig(), graph, seed=0, method="gap-edp")
    with pytest.raises(ConfigError, match="reads no edge"):
        run_sage(SAGEConfig(max_degree=3), graph, seed=0, method="dp-mlp-transductive")
    with pytest.raises(ConfigError, match="without differential privacy"):
        run_sage(SAGEConfig(max_degree=0), graph, seed=0, method="mlp-transductive")
    result = run_sage(SAGEConfig(max_degree=0, **FAST), graph, seed=0, method="dp-mlp-transductive")
    assert result.privacy.unit == "node" and result.baselines[0].metric == "accuracy"


def test_a_graph_without_features_is_refused(graph, split):
    from torch_geometric.data import Data

    from graphpriv.errors import DatasetError

    with pytest.raises(DatasetError, match="x"):
        SAGEClassifier(epochs=1).fit(Data(edge_index=graph.edge_index, y=graph.y, num_nodes=graph.num_nodes),
                                     split[0])
