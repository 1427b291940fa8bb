"""The node-level canary audit through DPARClassifier.fit and MLPClassifier.fit: the one-sided
guesser, the claim at the audit's delta, and the verdicts on correct, faulty and non-private runs."""

import math
import re

import numpy as np
import pytest

from graphpriv.audit import audit
from graphpriv.audit.node import audit_node_classifier
from graphpriv.audit.statistics import audit_from_scores, epsilon_lower_bound_one_run
from graphpriv.errors import ConfigError, DatasetError, PrivacyError
from graphpriv.methods.dpar import DPARClassifier
from graphpriv.methods.mlp import MLPClassifier
from graphpriv.methods.publishing import EdgeRand
from graphpriv.testing.graphs import labelled_sbm, random_graph

pytestmark = pytest.mark.usefixtures("one_thread")

#: The rigorous variant that learns: q' = 1, one training row per node; noise calibrated at delta 2e-3.
ONE_ROW = {"node_rate": 1.0, "max_rows": 1, "appr_share": 0.1, "delta": 2e-3}


@pytest.fixture(scope="module")
def data():
    graph = labelled_sbm(300, 6, num_features=600, seed=0)  # 6 classes: few chance matches of a random label
    graph.x = (graph.x > 1.5).float()  # sparse binary features, like bag-of-words
    return graph


def _scores(scores, inserted, **kwargs):
    return audit_from_scores(np.asarray(scores, dtype=float), np.asarray(inserted, dtype=bool), method="m",
                             dataset="d", unit="node", claimed_epsilon=1.0, accounting="a", attack="t", **kwargs)


def test_one_sided_guesser_counts_only_its_inserted_guesses():
    inserted = [1, 1, 1, 0, 1, 0, 0, 1, 0, 0]
    scores = -np.arange(10.0)  # canary 0 scores highest
    one = _scores(scores, inserted, guesses=4, one_sided=True)
    assert one.correct == 3 and one.notes[0] == "4 guesses (inserted only) of 10 canaries"
    assert one.tpr == pytest.approx(3 / 5) and one.fpr == pytest.approx(1 / 5)  # abstentions count as "out"
    assert one.epsilon_lower_bound == epsilon_lower_bound_one_run(3, 4, canaries=10)
    two = _scores(scores, inserted, guesses=4)  # the two-sided default: top 2 in, bottom 2 out
    assert two.correct == 4 and two.notes[0] == "4 guesses of 10 canaries"
    rng = np.random.default_rng(0)
    coins = rng.random(1000) < 0.5
    perfect = _scores(np.where(coins, rng.random(1000) + 1, rng.random(1000)), coins, guesses=100, one_sided=True)
    p = 0.05 ** (1 / 100)  # 100 right "inserted" guesses: p^100 = 0.05 at the bound
    assert perfect.correct == 100 and perfect.epsilon_lower_bound == pytest.approx(math.log(p / (1 - p)), rel=1e-4)
    assert not perfect.passed  # 3.6 > the claimed 1


def test_epsilon_at_is_the_fits_own_accounting_at_another_delta(data):
    for appr, accounting in (("gm", "rigorous"), ("em1", "paper")):
        est = DPARClassifier(appr=appr, epochs=1, epsilon=4.0, node_rate=0.5, seeds=20, accounting=accounting,
                             random_state=0).fit(data)
        for mode in ("rigorous", "paper"):
            assert est.epsilon_at(est.delta, accounting=mode) == pytest.approx(est.epsilons_[f"epsilon_{mode}"],
                                                                               rel=1e-9)
        assert est.epsilon_at(est.delta) == pytest.approx(est.privacy_report_.epsilon, rel=1e-9)
        assert est.epsilon_at(1e-6) > est.privacy_report_.epsilon
    mlp = MLPClassifier(epochs=2, random_state=0).fit(data)
    assert mlp.epsilon_at(mlp.delta) == pytest.approx(mlp.privacy_report_.epsilon, rel=1e-9)
    assert mlp.epsilon_at(1e-7) > mlp.privacy_report_.epsilon
    with pytest.raises(PrivacyError, match="non-private"):
        MLPClassifier(private=False, epochs=1).fit(data).epsilon_at(1e-5)


def test_epsilon_at_survives_save_and_load(data, tmp_path):
    est = DPARClassifier(epochs=1, node_rate=0.5, seeds=20, random_state=0).fit(data)
    loaded = DPARClassifier.load(est.save(tmp_path / "dpar.pt"))
    assert loaded.epsilon_at(1e-6) == est.epsilon_at(1e-6)
    mlp = MLPClassifier(epochs=1, random_state=0).fit(data)
    with pytest.raises(PrivacyError, match="fit it again"):
        MLPClassifier.load(mlp.save(tmp_path / "mlp.pt")).epsilon_at(1e-6)


def test_correct_one_row_dpar_passes_and_the_noise_fault_is_caught(data):
    estimator = DPARClassifier(appr="gm", epsilon=1.0, epochs=15, **ONE_ROW)
    (correct,) = audit(estimator, data, canaries=200, seed=0)
    assert correct.unit == "node" and correct.accounting.startswith("rigorous")
    assert 1.0 < correct.claimed_epsilon < 3.0  # eps 1 at the run's delta of 2e-3 is more at 1e-5
    assert correct.passed and correct.epsilon_lower_bound <= correct.claimed_epsilon
    (broken,) = audit(estimator, data, canaries=200, seed=0, noise_scale=0.01)
    assert broken.claimed_epsilon == pytest.approx(correct.claimed_epsilon, rel=0.02)  # the same claim
    assert not broken.passed and broken.epsilon_lower_bound > broken.claimed_epsilon
    assert broken.tpr > correct.tpr + 0.1


def test_nonprivate_dpar_shows_a_large_lower_bound(data):
    exact = DPARClassifier(appr="exact", private=False, node_rate=1.0, seeds=None, epochs=15)
    (report,) = audit(exact, data, canaries=400, seed=0)
    assert report.claimed_epsilon == math.inf and report.accounting == "non-private" and report.passed
    assert report.epsilon_lower_bound > 2.5 and report.tpr > 0.15 and report.fpr < 0.01


def test_sampled_paper_mode_run_with_connected_canaries(data):
    estimator = DPARClassifier(appr="em0", epsilon=2.0, epochs=2, node_rate=0.5, seeds=20, accounting="paper")
    (report,) = audit_node_classifier(estimator, data, canaries=60, seed=0, canary_edges=2)
    assert report.accounting.startswith("paper") and "NOT a guarantee" in report.accounting
    assert math.isfinite(report.claimed_epsilon) and report.notes[0] == "8 guesses (inserted only) of 60 canaries"
    assert "2 edges each" in report.notes[1]
    inserted, sampled = (int(g) for g in re.match(r"(\d+) inserted, (\d+) in the q' sample", report.notes[2]).groups())
    assert inserted == report.inserted and 0 < sampled < inserted  # only the q' sample's canaries are used


def test_node_level_dp_mlp_audit_passes_and_catches_the_noise_fault(data):
    estimator = MLPClassifier(epsilon=1.0, epochs=60, delta=2e-3)
    (correct,) = audit(estimator, data, canaries=100, seed=0, guesses=40)
    assert correct.unit == "node" and correct.passed and correct.epsilon_lower_bound <= correct.claimed_epsilon
    assert correct.notes[0] == "40 guesses of 100 canaries"  # two-sided for the MLP
    (broken,) = audit(estimator, data, canaries=100, seed=0, guesses=40, noise_scale=0.01)
    assert not broken.passed and broken.epsilon_lower_bound > broken.claimed_epsilon


def test_bad_input(data):
    with pytest.raises(ConfigError, match="DPARClassifier and MLPClassifier"):
        audit_node_classifier(EdgeRand(), data)
    with pytest.raises(DatasetError, match="features"):
        audit(DPARClassifier(), random_graph(30, 0.2, seed=0))
    with pytest.raises(ConfigError, match="at least 2"):
        audit(DPARClassifier(), data, canaries=1)
    with pytest.raises(ConfigError, match="reads none"):
        audit_node_classifier(MLPClassifier(), data, canary_edges=2)
    with pytest.raises(ConfigError, match="takes no option canary_edges"):
        audit(MLPClassifier(), data, canary_edges=2)
    with pytest.raises(PrivacyError):
        audit(MLPClassifier(), data, audit_delta=2.0)
