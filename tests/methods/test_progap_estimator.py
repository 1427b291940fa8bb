"""ProGAPClassifier: the depth aggregations on the ledger against dp-accounting, learning, the
fit / predict / save / load round trip."""

import math

import pytest
import torch
from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant

from graphpriv.errors import ConfigError, DatasetError
from graphpriv.methods.progap import ProGAPClassifier

FAST = {"epochs": 30}


def test_progap_edp_spends_one_gaussian_aggregation_per_stage_transition(graph, split):
    est = ProGAPClassifier(epsilon=2.0, depth=3, random_state=0, **FAST).fit(graph, split[0])
    report, z = est.privacy_report_, est.noise_multiplier_
    assert report.epsilon == pytest.approx(RdpAccountant().compose(dp_event.GaussianDpEvent(z), 3).get_epsilon(1e-5),
                                           rel=1e-9)
    assert 1.9 < report.epsilon <= 2.0 and report.phases[0].steps == 3 and len(est.aggregates_) == 3
    assert est.info_["noise_std"] == pytest.approx(z * math.sqrt(2))
    assert est.info_["epsilon_directed"] < report.epsilon


def test_progap_learns_and_round_trips(graph, split, tmp_path):
    train, test = split
    inf = ProGAPClassifier(private=False, random_state=0, **FAST).fit(graph, train)
    accuracy = float((inf.predict(nodes=test) == graph.y[torch.from_numpy(test)]).float().mean())
    assert inf.privacy_report_ is None and accuracy > 0.9
    est = ProGAPClassifier(epsilon=4.0, random_state=1, **FAST).fit(graph, train)
    loaded = ProGAPClassifier.load(est.save(tmp_path / "progap.pt"))
    assert torch.equal(loaded.predict_proba(nodes=test), est.predict_proba(nodes=test))
    assert loaded.privacy_report_ == est.privacy_report_
    fresh = est.predict_proba(graph)  # the stages' aggregations afresh: another release
    assert fresh.shape == (graph.num_nodes, 3) and torch.allclose(fresh.sum(1), torch.ones(graph.num_nodes))


def test_bad_input_is_refused(graph):
    with pytest.raises(ConfigError, match="depth"):
        ProGAPClassifier(depth=0)
    with pytest.raises(DatasetError, match="labelled"):
        ProGAPClassifier(**FAST).fit(graph, [0])
