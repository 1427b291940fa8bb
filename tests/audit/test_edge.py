"""The edge-release audit through the publishers' own fit: correct releases pass (and nearly tightly
for EdgeRand), a deliberate noise fault is caught, a non-private release shows a large bound."""

import math

import pytest

from graphpriv.audit import audit
from graphpriv.audit.edge import audit_edge_release
from graphpriv.errors import ConfigError
from graphpriv.methods.dp_1k import DP1K
from graphpriv.methods.privgraph import PrivGraph
from graphpriv.methods.publishing import DICE, EdgeRand, LapGraph, RandomPerturb
from graphpriv.methods.tmf import TmF
from graphpriv.privacy.hooks import AuditHook
from graphpriv.testing.graphs import random_graph


@pytest.fixture(scope="module")
def graph():
    return random_graph(400, 0.02, seed=3)


def test_correct_edgerand_stays_within_its_claim_and_is_nearly_tight(graph):
    for epsilon in (1.0, 3.0):
        (report,) = audit_edge_release(EdgeRand(epsilon=epsilon), graph, canaries=4000, seed=1)
        assert report.passed and report.claimed_epsilon == epsilon and report.epsilon_lower_bound <= epsilon
        assert report.epsilon_lower_bound > 0.8 * epsilon  # the presence attack is optimal for RR
        assert report.method == "EdgeRand" and report.unit == "edge"


def test_noise_fault_is_caught_and_a_non_private_release_shows_a_large_bound(graph):
    (broken,) = audit(EdgeRand(epsilon=1.0), graph, canaries=4000, seed=2, noise_scale=0.01)
    (broken_lap,) = audit(LapGraph(epsilon=1.0), graph, canaries=2000, seed=2, noise_scale=0.01)
    assert not broken.passed and broken.epsilon_lower_bound > 4 * broken.claimed_epsilon
    assert "NOISE SCALED BY 0.01" in broken.accounting
    assert not broken_lap.passed and broken_lap.claimed_epsilon == 1.0
    (correct_lap,) = audit(LapGraph(epsilon=1.0), graph, canaries=2000, seed=2, name="lapgraph")
    assert correct_lap.passed and correct_lap.method == "lapgraph"
    (open_release,) = audit(RandomPerturb(ratio=0.0), graph, canaries=4000, seed=2)
    assert open_release.claimed_epsilon == math.inf and open_release.epsilon_lower_bound > 6
    (no_noise,) = audit(EdgeRand(epsilon=1.0), graph, canaries=1000, seed=2, noise_scale=0.0)
    assert no_noise.claimed_epsilon == math.inf and no_noise.tpr == 1.0 and no_noise.fpr == 0.0


def test_the_audit_fits_the_publishers_own_release(graph):
    """Scale 1 through the hook is the release a user gets, bit for bit."""
    plain = EdgeRand(epsilon=2.0, random_state=5).publish(graph)
    hooked = EdgeRand(epsilon=2.0, random_state=5).fit(graph, audit_hook=AuditHook()).released_.to_data()
    assert plain.edge_index.equal(hooked.edge_index)


def test_bad_input(graph):
    with pytest.raises(ConfigError, match="EdgeRand, LapGraph, RandomPerturb"):
        audit_edge_release(DICE(), graph)
    with pytest.raises(ConfigError, match="no audit covers DICE"):
        audit(DICE(), graph)
    with pytest.raises(ConfigError, match="at least 2"):
        audit(EdgeRand(), graph, canaries=1)
    with pytest.raises(ConfigError, match="noise_scale"):
        audit(EdgeRand(), graph, noise_scale=-1.0)
    with pytest.raises(ConfigError, match="takes no option attack"):
        audit(EdgeRand(), graph, attack="gradient")
    with pytest.raises(ConfigError, match="covers EdgeRand"):
        audit_edge_release("edgerand", graph)


def test_the_lapgraph_link_predictor_is_audited_on_the_release_it_trains_on(graph):
    from graphpriv.methods.lapgraph_sgnn import LapGraphLinkPredictor

    estimator = LapGraphLinkPredictor(epsilon=4.0, epochs=1)
    (correct,) = audit(estimator, graph, canaries=2000, seed=4)
    (faulty,) = audit(estimator, graph, canaries=2000, seed=4, noise_scale=0.01)
    assert correct.passed and correct.claimed_epsilon == 4.0 and correct.epsilon_lower_bound > 1
    assert not faulty.passed and faulty.epsilon_lower_bound > 5
    with pytest.raises(ConfigError, match="without canaries"):
        LapGraphLinkPredictor(epochs=1).fit(graph, audit_hook=AuditHook(canaries=object()))


@pytest.mark.parametrize("cls", [TmF, DP1K, PrivGraph])
def test_generators_pass_their_audit_on_one_generated_graph(graph, cls):
    (report,) = audit(cls(epsilon=2.0), graph, canaries=2000, seed=4)
    assert report.passed and report.claimed_epsilon == 2.0 and report.epsilon_lower_bound <= 2.0
    assert report.unit == "edge" and "one graph generated from it" in " ".join(report.notes)
    with pytest.raises(ConfigError, match="takes no noise fault"):
        audit(cls(epsilon=2.0), graph, canaries=2000, seed=4, noise_scale=0.0)


def test_the_generator_audit_reads_the_graph_its_seed_generates(graph):
    # the audited copy releases with random_state = seed and generates with that seed: a TmF run
    # at a large epsilon keeps the input nearly as is, so the inserted canaries show and the bound
    # rises with epsilon, up to what 2,000 canaries can certify
    low, high = (audit(TmF(epsilon=eps), graph, canaries=2000, seed=4)[0] for eps in (0.5, 50.0))
    assert low.passed and high.passed
    assert high.tpr > 0.9 and high.fpr < 0.01 and high.epsilon_lower_bound > 4 > low.epsilon_lower_bound
