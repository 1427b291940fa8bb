"""The canary-edge audit of GAP's aggregates: it passes on correct runs and catches the noise at
1/100 of its scale."""

import math

import pytest

from graphpriv.audit import audit
from graphpriv.errors import ConfigError
from graphpriv.methods.gap import GAPClassifier
from graphpriv.testing.graphs import labelled_sbm

FAST = {"encoder_epochs": 10, "epochs": 5}


@pytest.fixture(scope="module")
def graph():
    return labelled_sbm(200, 3, p_in=0.1, seed=4)


def test_correct_runs_pass_and_a_hundredfold_smaller_noise_is_caught(graph):
    (correct,) = audit(GAPClassifier(epsilon=1.0, **FAST), graph, canaries=500, seed=1)
    assert correct.passed and correct.claimed_epsilon == pytest.approx(1.0, rel=0.01)
    assert correct.epsilon_lower_bound <= correct.claimed_epsilon
    (faulty,) = audit(GAPClassifier(epsilon=1.0, **FAST), graph, canaries=500, seed=1, noise_scale=0.01)
    assert not faulty.passed and faulty.epsilon_lower_bound > 1.0
    assert "NOISE SCALED BY 0.01" in faulty.accounting
    (open_run,) = audit(GAPClassifier(private=False, **FAST), graph, canaries=500, seed=1)
    assert open_run.claimed_epsilon == math.inf and open_run.passed and open_run.epsilon_lower_bound > 1.0


def test_a_run_that_picks_its_epochs_on_validation_is_audited_as_configured(graph):
    (report,) = audit(GAPClassifier(epsilon=1.0, model_selection="best_val", **FAST), graph, canaries=500, seed=1)
    assert report.passed and report.claimed_epsilon == pytest.approx(1.0, rel=0.01)


def test_the_audit_refuses_what_it_cannot_show(graph):
    with pytest.raises(ConfigError, match="at least 2"):
        audit(GAPClassifier(**FAST), graph, canaries=1)
    with pytest.raises(ConfigError, match="canaries give"):
        audit(GAPClassifier(**FAST), graph, canaries=10)
