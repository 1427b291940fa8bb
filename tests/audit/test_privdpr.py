"""PrivDPR's canary audit through ``PrivDPR.fit``: the white-box Dirac gradient canaries pass a
correct run, catch noise 100x too small (``noise_scale=0.01``) and show a large bound without
noise (DPR); the black-box canary nodes have no power (the measured finding documented in
:mod:`graphpriv.audit.privdpr`)."""

import math

import numpy as np
import pytest

from graphpriv.audit.privdpr import DiracCanaries, audit_privdpr
from graphpriv.data.graph import to_csr
from graphpriv.errors import ConfigError, PrivacyError
from graphpriv.methods.privdpr import PrivDPR
from graphpriv.methods.publishing import EdgeRand
from graphpriv.synthesis.privdpr import train_embeddings
from graphpriv.testing.graphs import random_graph

pytestmark = pytest.mark.usefixtures("one_thread")

PRIVATE = PrivDPR(epsilon=2.0, epochs=1)


@pytest.fixture(scope="module")
def graph():
    return random_graph(400, 0.02, seed=5)


def test_dirac_canaries_see_every_step_and_leave_the_model_alone(graph):
    n = int(graph.num_nodes)
    adj = to_csr(graph.edge_index.numpy(), n)
    inserted = np.random.default_rng(0).random(300) < 0.5
    kwargs = {"epochs": 1, "r": 16, "d": 8, "seed": 1}
    hook = DiracCanaries(inserted, r=16, step_value=5.0 / (n // 16))
    plain = train_embeddings(adj, epsilon=None, **kwargs)
    with_canaries = train_embeddings(adj, epsilon=None, canary=hook, **kwargs)
    assert hook.rows == 19 and hook.steps == with_canaries.iterations == n // 16
    assert with_canaries.V.shape == plain.V.shape == (n, 16)
    # no noise: the released sums are exactly +-S_grad (T steps of +-S_grad / T)
    np.testing.assert_allclose(hook.released_sum, np.where(inserted, 5.0, -5.0), rtol=1e-4)
    noisy = train_embeddings(adj, epsilon=2.0, **kwargs)
    broken = train_embeddings(adj, epsilon=2.0, noise_scale=0.01, **kwargs)
    assert broken.noise_std == pytest.approx(0.01 * noisy.noise_std)
    assert broken.noise_multiplier == noisy.noise_multiplier and broken.ledger.epsilon() == noisy.ledger.epsilon()
    with pytest.raises(ValueError, match="coins"):
        DiracCanaries(np.zeros(0, bool), r=16, step_value=1.0)


def test_white_box_audit_passes_a_correct_run_and_catches_noise_too_small(graph):
    correct = audit_privdpr(PRIVATE, graph, canaries=4000, seed=1)
    assert correct.unit == "node" and correct.method == "PrivDPR" and correct.dataset == "gnp-400-0.02-5"
    assert correct.claimed_epsilon == pytest.approx(2.0, rel=1e-3)  # audit_delta = the estimator's delta
    assert correct.passed and 0.3 < correct.epsilon_lower_bound <= correct.claimed_epsilon  # power, no violation
    assert "Dirac" in correct.attack and "25 steps" in " ".join(correct.notes)  # T = 1 epoch x floor(400 / 16)
    broken = audit_privdpr(PRIVATE, graph, canaries=4000, seed=1, noise_scale=0.01, name="privdpr")
    assert broken.method == "privdpr"
    assert broken.claimed_epsilon == correct.claimed_epsilon  # the ledger still claims the guarantee
    assert not broken.passed and broken.epsilon_lower_bound > broken.claimed_epsilon + 2
    assert "NOISE SCALED BY 0.01" in broken.accounting
    dpr = audit_privdpr(PrivDPR(private=False, epochs=1), graph, canaries=4000, seed=1, name="dpr")
    assert dpr.method == "dpr" and dpr.claimed_epsilon == math.inf and dpr.passed
    assert dpr.epsilon_lower_bound > 3 and dpr.correct == 800


def test_the_audit_fits_a_copy_with_its_own_seed(graph):
    fitted = PrivDPR(epsilon=2.0, epochs=1, random_state=9).fit(graph)
    before = fitted.embeddings_.clone()
    # a fitted estimator is only a description of the run: the audit's seed decides, not random_state
    assert audit_privdpr(fitted, graph, canaries=500, seed=3) == audit_privdpr(PRIVATE, graph, canaries=500, seed=3)
    assert fitted.embeddings_.equal(before)


def test_black_box_canary_nodes_have_no_power(graph):
    kwargs = {"canaries": 200, "seed": 2, "attack": "node-embedding"}
    correct = audit_privdpr(PRIVATE, graph, **kwargs)
    assert correct.passed and "canary nodes" in correct.attack
    assert correct.claimed_epsilon == pytest.approx(2.0, rel=1e-3)
    broken = audit_privdpr(PRIVATE, graph, noise_scale=0.01, **kwargs)
    # measured: V's true gradients (~1e-14) leave no trace, broken noise or not
    assert broken.passed and broken.epsilon_lower_bound < 1
    # the node-graph attack generates with the model's edge count (no private |E| to read)
    dpr = audit_privdpr(PrivDPR(private=False, epochs=1, edge_count="input"), graph, canaries=200, seed=2,
                        attack="node-graph")
    assert dpr.claimed_epsilon == math.inf and dpr.epsilon_lower_bound < 1
    assert "generated graph" in dpr.attack and "N + m = 600" in " ".join(dpr.notes)


def test_bad_input(graph):
    with pytest.raises(ConfigError, match="PrivDPR"):
        audit_privdpr(EdgeRand(epsilon=1.0), graph)
    with pytest.raises(ConfigError, match="gradient"):
        audit_privdpr(PRIVATE, graph, attack="loss")
    with pytest.raises(ConfigError, match="at least 2"):
        audit_privdpr(PRIVATE, graph, canaries=1)
    with pytest.raises(ConfigError, match="partners"):
        audit_privdpr(PRIVATE, graph, attack="node-embedding", partners=400)
    with pytest.raises(ConfigError, match="partners"):
        audit_privdpr(PRIVATE, graph, attack="node-graph", partners=0)
    with pytest.raises(ConfigError, match="noise_scale"):
        audit_privdpr(PRIVATE, graph, noise_scale=-1.0)
    with pytest.raises(ConfigError, match="confidence"):
        audit_privdpr(PRIVATE, graph, confidence=1.0)
    with pytest.raises(PrivacyError):
        audit_privdpr(PRIVATE, graph, audit_delta=1.0)
    with pytest.raises(ConfigError, match="fewer than a batch"):
        audit_privdpr(PRIVATE, random_graph(10, 0.5, seed=0))
