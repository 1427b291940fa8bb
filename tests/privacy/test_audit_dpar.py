"""DPAR's node-level canary audit (issue 10): the one-sided guesser, the claim at the audit's delta,
and the verdicts on correct, broken and non-private runs."""

import math
import re

import numpy as np
import pytest

from graphpriv.errors import ConfigError, DatasetError
from graphpriv.privacy.audit import audit_from_scores, epsilon_lower_bound_one_run
from graphpriv.privacy.audit_dpar import audit_dpar
from graphpriv.testing.broken import broken_noise
from graphpriv.testing.graphs import labelled_sbm, random_graph

pytestmark = pytest.mark.usefixtures("one_thread")

#: The rigorous variant that learns (docs/dpar.md): q' = 1, one training row per node.
ONE_ROW = {"node_rate": 1.0, "max_rows": 1, "appr_share": 0.1}
AUDIT = {"epsilon": 1.0, "canaries": 200, "epochs": 15, **ONE_ROW}


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
    two = _scores(scores, inserted, guesses=4)  # the two-sided default is unchanged: top 2 in, bottom 2 out
    assert two.correct == 4 and two.notes[0] == "4 guesses of 10 canaries"
    # 100 right "inserted" guesses out of 1000 canaries: p^100 = 0.05 at the bound
    rng = np.random.default_rng(0)
    coins = rng.random(1000) < 0.5
    perfect = _scores(np.where(coins, rng.random(1000) + 1, rng.random(1000)), coins, guesses=100, one_sided=True)
    p = 0.05 ** (1 / 100)
    assert perfect.correct == 100 and perfect.epsilon_lower_bound == pytest.approx(math.log(p / (1 - p)), rel=1e-4)
    assert not perfect.passed  # 3.6 > the claimed 1


def test_claim_is_the_runs_own_accounting_at_the_audits_delta(data):
    import torch

    from graphpriv.data.splits import node_split
    from graphpriv.experiments.registry import make_config
    from graphpriv.methods.dpar import fit_epsilon, train_dpar

    split = node_split(data, train_ratio=0.8, seed=0, inductive=True)
    for method, accounting in (("dpar-gm", "rigorous"), ("dpar-em1", "paper")):
        config = make_config(method, {"epochs": 1, "epsilon": 4.0, "node_rate": 0.5, "seeds": 20,
                                      "accounting": accounting})
        fit = train_dpar(config, data.x, torch.as_tensor(data.y), split.train_idx, split.train_edge_index,
                         rng=np.random.default_rng(0), seed=0, appr=method.removeprefix("dpar-"))
        for mode in ("rigorous", "paper"):
            assert fit_epsilon(config, fit, config.delta, accounting=mode) == pytest.approx(
                fit.metrics[f"epsilon_{mode}"], rel=1e-9)
        assert fit_epsilon(config, fit, 1e-5, accounting=accounting) > fit.metrics[f"epsilon_{accounting}"]


def test_correct_one_row_dpar_passes_and_broken_noise_is_caught(data):
    correct = audit_dpar("dpar-gm", data, **AUDIT)
    assert correct.unit == "node" and correct.accounting.startswith("rigorous")
    assert 1.0 < correct.claimed_epsilon < 3.0  # eps 1 at the run's delta of 2e-3 is more at 1e-5
    assert correct.passed and correct.epsilon_lower_bound <= correct.claimed_epsilon
    with broken_noise(0.01):
        broken = audit_dpar("dpar-gm", data, **AUDIT)
    assert broken.claimed_epsilon == pytest.approx(correct.claimed_epsilon, rel=0.02)  # the same claim
    assert not broken.passed and broken.epsilon_lower_bound > broken.claimed_epsilon
    assert broken.tpr > correct.tpr + 0.1


def test_nonprivate_dpar_shows_a_large_lower_bound(data):
    report = audit_dpar("dpar-nodp", data, canaries=400, epochs=15)
    assert report.claimed_epsilon == math.inf and report.accounting == "non-private" and report.passed
    assert report.epsilon_lower_bound > 2.5 and report.tpr > 0.15 and report.fpr < 0.01


def test_sampled_paper_mode_run_with_connected_canaries(data):
    report = audit_dpar("dpar-em0", data, epsilon=2.0, canaries=60, epochs=2, node_rate=0.5, seeds=20,
                        accounting="paper", canary_edges=2)
    assert report.accounting.startswith("paper") and "NOT a guarantee" in report.accounting
    assert math.isfinite(report.claimed_epsilon) and report.notes[0] == "8 guesses (inserted only) of 60 canaries"
    assert "2 edges each" in report.notes[1]
    inserted, sampled = (int(g) for g in re.match(r"(\d+) inserted, (\d+) in the q' sample", report.notes[2]).groups())
    assert inserted == report.inserted and 0 < sampled < inserted  # only the q' sample's canaries are used


def test_bad_input(data):
    with pytest.raises(ConfigError, match="dpar-gm"):
        audit_dpar("dp-mlp", data)
    with pytest.raises(DatasetError, match="features"):
        audit_dpar("dpar-gm", random_graph(30, 0.2, seed=0))
    with pytest.raises(ValueError):
        audit_dpar("dpar-gm", data, canaries=1)
    with pytest.raises(ConfigError, match="unknown setting"):
        audit_dpar("dpar-gm", data, theta=3)
