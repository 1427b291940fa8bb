"""PrivDPR's canary audit (issue 10): the white-box Dirac gradient canaries pass a correct run,
catch ``broken_noise(0.01)`` and show a large bound without noise; the black-box canary nodes have
no power (the measured finding documented in :mod:`graphpriv.privacy.audit_privdpr`)."""

import math

import numpy as np
import pytest

from graphpriv.data.graph import to_csr
from graphpriv.errors import ConfigError, PrivacyError
from graphpriv.privacy.audit_privdpr import DiracCanaries, audit_privdpr
from graphpriv.synthesis.privdpr import train_embeddings
from graphpriv.testing.broken import broken_noise
from graphpriv.testing.graphs import random_graph

pytestmark = pytest.mark.usefixtures("one_thread")


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
    with broken_noise(0.01):
        broken = train_embeddings(adj, epsilon=2.0, **kwargs)
    assert broken.noise_std == pytest.approx(0.01 * noisy.noise_std)
    assert broken.noise_multiplier == noisy.noise_multiplier and broken.ledger.epsilon() == noisy.ledger.epsilon()


def test_white_box_audit_passes_a_correct_run_and_catches_broken_noise(graph):
    kwargs = {"epsilon": 2.0, "canaries": 4000, "seed": 1}
    correct = audit_privdpr(graph, **kwargs)
    assert correct.unit == "node" and correct.method == "privdpr"
    assert correct.claimed_epsilon == pytest.approx(2.0, rel=1e-3)  # audit_delta = the method's delta
    assert correct.passed and 0.3 < correct.epsilon_lower_bound <= correct.claimed_epsilon  # power, no violation
    with broken_noise(0.01):
        broken = audit_privdpr(graph, **kwargs)
    assert broken.claimed_epsilon == correct.claimed_epsilon  # the ledger still claims the guarantee
    assert not broken.passed and broken.epsilon_lower_bound > broken.claimed_epsilon + 2
    open_run = audit_privdpr(graph, private=False, canaries=4000, seed=1)
    assert open_run.method == "dpr" and open_run.claimed_epsilon == math.inf
    assert open_run.epsilon_lower_bound > 3 and open_run.correct == 800


def test_black_box_canary_nodes_have_no_power(graph):
    kwargs = {"epsilon": 2.0, "canaries": 200, "seed": 2, "attack": "node-embedding"}
    correct = audit_privdpr(graph, **kwargs)
    assert correct.passed and "canary nodes" in correct.attack
    with broken_noise(0.01):
        broken = audit_privdpr(graph, **kwargs)
    # measured: V's true gradients (~1e-14) leave no trace, broken noise or not
    assert broken.passed and broken.epsilon_lower_bound < 1
    dpr = audit_privdpr(graph, private=False, canaries=200, seed=2, attack="node-graph")
    assert dpr.claimed_epsilon == math.inf and dpr.epsilon_lower_bound < 1


def test_bad_input(graph):
    with pytest.raises(ConfigError, match="gradient"):
        audit_privdpr(graph, attack="loss")
    with pytest.raises(ConfigError, match="2 canaries"):
        audit_privdpr(graph, canaries=1)
    with pytest.raises(ConfigError, match="partners"):
        audit_privdpr(graph, attack="node-embedding", partners=400)
    with pytest.raises(ConfigError, match="epochs"):
        audit_privdpr(graph, epochs=0)
    with pytest.raises(PrivacyError):
        audit_privdpr(graph, epsilon=0.0)
    with pytest.raises(PrivacyError):
        audit_privdpr(graph, audit_delta=1.0)
    with pytest.raises(ConfigError, match="fewer than a batch"):
        audit_privdpr(random_graph(10, 0.5, seed=0))
