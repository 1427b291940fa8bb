"""GAELinkPredictor (gae, edgerand-gae, lapgraph-gae): the release is the publisher's own, the
GAE's scores, files, twins, the protocol's run, the audit and bad input."""

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphpriv.audit import audit
from graphpriv.data.graph import undirected_pairs
from graphpriv.data.splits import link_split
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.evaluation.link import training_graph
from graphpriv.experiments.runner import run_method
from graphpriv.methods.estimator import Estimator
from graphpriv.methods.gae_link import GAELinkPredictor
from graphpriv.methods.publishing import EdgeRand, LapGraph
from graphpriv.nn.gae import gae_embeddings
from graphpriv.testing.graphs import labelled_sbm

pytestmark = pytest.mark.usefixtures("one_thread")

FAST = {"epochs": 20}


@pytest.fixture(scope="module")
def graph():
    data = labelled_sbm(90, 3, p_in=0.2, num_features=5, seed=2)
    data.name = "sbm90"
    return data


@pytest.fixture(scope="module")
def split(graph):
    return link_split(graph, seed=4)


@pytest.fixture(scope="module")
def train(graph, split):
    return training_graph(graph, split)


@pytest.mark.parametrize("publisher,cls", [("edgerand", EdgeRand), ("lapgraph", LapGraph)])
def test_the_release_and_the_report_are_the_publishers(train, publisher, cls):
    # the guarantee is the publisher's (its mechanism's sensitivity is brute-forced in its own tests):
    # the estimator must release exactly what the publisher releases, with the same report
    est = GAELinkPredictor(publisher=publisher, random_state=7, epsilon=3.0, **FAST).fit(train)
    alone = cls(random_state=7, epsilon=3.0, use_features=False).fit(Data(edge_index=train.edge_index,
                                                                             num_nodes=train.num_nodes))
    assert np.array_equal(est.graph_.numpy(), alone.released_.pairs)
    assert est.privacy_report_ == alone.privacy_report_ and est.privacy_report_.unit == "edge"
    # the GAE is trained on the release only (post-processing): the same embeddings from the release alone
    z = gae_embeddings(alone.released_.edge_index, train.num_nodes, train.x.float(), hidden=128, out=64, epochs=20,
                       lr=0.001, seed=7)
    assert torch.equal(est.embeddings_, z)


def test_gae_on_the_training_graph_scores_and_survives_a_file(train, split, tmp_path):
    est = GAELinkPredictor(random_state=1, **FAST).fit(train, split.val_pos, split.val_neg)
    assert est.privacy_report_ is None and est.privacy_statement_.startswith("non-private")
    assert np.array_equal(est.graph_.numpy(), undirected_pairs(train.edge_index))
    pairs = np.concatenate([split.test_pos, split.test_neg], axis=1)
    scores = est.predict_proba(pairs)
    z = est.embeddings_
    expected = torch.sigmoid((z[torch.from_numpy(pairs[0])] * z[torch.from_numpy(pairs[1])]).sum(1))
    assert torch.equal(scores, expected) and 0 <= est.score(split.test_pos, split.test_neg) <= 1
    loaded = Estimator.load(est.save(tmp_path / "gae.pt"))
    assert isinstance(loaded, GAELinkPredictor) and loaded.get_params() == est.get_params()
    assert torch.equal(loaded.predict_proba(pairs), scores) and loaded.info_ == est.info_
    twin = type(est)(**est.get_params()).fit(train)
    assert torch.equal(twin.embeddings_, est.embeddings_)
    bare = GAELinkPredictor(random_state=1, use_features=False, **FAST).fit(train)
    assert est.info_["used_features"] and not bare.info_["used_features"]


def test_runs_through_the_link_protocol(graph):
    private = run_method("edgerand-gae", graph, seed=3, overrides={**FAST, "epsilon": 4.0})
    assert private.privacy.unit == "edge" and private.privacy.epsilon == pytest.approx(4.0, abs=1e-3)
    assert private.estimator.publisher == "edgerand" and "test_auc" in private.metrics
    (baseline,) = private.baselines
    assert baseline.name == "common neighbours" and "not private" in baseline.note
    plain = run_method("gae", graph, seed=3, overrides=FAST)
    assert plain.privacy is None and plain.estimator.publisher == "none"
    with pytest.raises(ConfigError, match="epsilon"):  # gae spends nothing: an epsilon is refused
        run_method("gae", graph, seed=3, overrides={"epsilon": 1.0})


def test_the_audit_reads_the_release(graph):
    (correct,) = audit(GAELinkPredictor(publisher="edgerand", epsilon=1.0, epochs=1), graph, canaries=1000, seed=2)
    assert correct.passed and correct.claimed_epsilon == 1.0
    (broken,) = audit(GAELinkPredictor(publisher="edgerand", epsilon=1.0, epochs=1), graph, canaries=1000, seed=2,
                      noise_scale=0.01)
    assert not broken.passed


def test_bad_input(train):
    with pytest.raises(ConfigError, match="publisher must be one of none, edgerand, lapgraph"):
        GAELinkPredictor(publisher="dice")
    est = GAELinkPredictor(random_state=0, **FAST).fit(train)
    with pytest.raises(ConfigError, match="publisher"):
        est.set_params(publisher=3)
    assert est.is_fitted
    with pytest.raises(DatasetError, match="pairs"):
        est.predict_proba(np.array([[0, 1, 2]]))
    with pytest.raises(DatasetError, match="at least one"):
        est.score(np.zeros((2, 0), dtype=np.int64), np.array([[0], [1]]))
    with pytest.raises(ConfigError, match="max_edges"):
        GAELinkPredictor(publisher="edgerand", epsilon=0.1, max_edges=10, random_state=0).fit(train)
