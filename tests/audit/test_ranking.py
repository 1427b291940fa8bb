"""The canary audit of DPLPRanker through its own fit and recommend: a correct ranking passes, a
deliberate noise fault is caught, a non-private ranking shows a large bound, each canary moves its
own query's list only, and the hook at scale 1 is the ranking a user gets."""

import math

import numpy as np
import pytest
import torch

from graphpriv.audit.ranking import UNIT, audit_ranker, plan_canaries
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.methods.dplp_rank import DPLPRanker
from graphpriv.methods.publishing import EdgeRand
from graphpriv.privacy.hooks import AuditHook
from graphpriv.ranking.protocol import ranking_split
from graphpriv.testing.graphs import random_graph

pytestmark = pytest.mark.usefixtures("one_thread")

DPLP = {"lin_epochs": 1, "umnn_epochs": 1, "max_negatives": 30}


@pytest.fixture(scope="module")
def graph():
    return random_graph(600, 0.004, seed=3)


def test_a_correct_ranking_passes(graph):
    (exponential,) = audit_ranker(DPLPRanker(transform="none", base="cn", top_k=1), graph, seed=1)
    assert exponential.passed and exponential.claimed_epsilon == pytest.approx(0.1)
    assert exponential.epsilon_lower_bound <= 0.1 and exponential.unit == UNIT == "protected_pair"
    assert exponential.canaries >= 100 and "rigorous" in exponential.accounting
    (dplp,) = audit_ranker(DPLPRanker(top_k=1, **DPLP), graph, seed=1, name="dplp-rank")
    assert dplp.passed and dplp.method == "dplp-rank" and dplp.claimed_epsilon == pytest.approx(0.1)
    (lists,) = audit_ranker(DPLPRanker(transform="none", base="cn", top_k=3), graph, canaries=300, seed=1)
    assert lists.passed and lists.claimed_epsilon == pytest.approx(0.3) and lists.canaries == 300


def test_noise_fault_is_caught(graph):
    for estimator in (DPLPRanker(transform="none", base="cn", top_k=1), DPLPRanker(top_k=1, **DPLP),
                      DPLPRanker(transform="none", noise="laplace", top_k=1)):
        (broken,) = audit_ranker(estimator, graph, seed=2, noise_scale=0.01)
        assert not broken.passed and broken.epsilon_lower_bound > 5 * broken.claimed_epsilon
        assert broken.claimed_epsilon == pytest.approx(0.1) and "NOISE SCALED BY 0.01" in broken.accounting
        assert broken.tpr > 0.5 and broken.fpr < 0.1


def test_a_non_private_ranking_claims_nothing_and_shows_a_large_bound(graph):
    (plain,) = audit_ranker(DPLPRanker(transform="none", noise="none", base="cn", top_k=1), graph, seed=3)
    assert plain.claimed_epsilon == math.inf and plain.accounting == "non-private" and plain.passed
    assert plain.tpr == 1.0 and plain.epsilon_lower_bound > 2
    (no_noise,) = audit_ranker(DPLPRanker(transform="none", base="cn", top_k=1), graph, seed=3, noise_scale=0.0)
    assert no_noise.claimed_epsilon == math.inf and no_noise.tpr == 1.0
    (ranked,) = audit_ranker(DPLPRanker(transform="none", noise="none", base="cn", top_k=1), graph, seed=3,
                             guesses=40)
    assert ranked.correct >= 34 and ranked.epsilon_lower_bound > 1 and "40 guesses" in ranked.notes[0]


@pytest.mark.parametrize("base", ["cn", "aa", "jc", "pa"])
def test_each_canary_moves_its_own_querys_utilities_only(graph, base):
    """The claim is one list's k eps_p because a canary's coin changes no other audited list."""
    estimator = DPLPRanker(transform="none", noise="none", base=base, degree_cap=5.0, top_k=2)
    split = ranking_split(graph, sigma_prot=0.3, query_fraction=0.8, holdout=0.2, seed=0)
    plan = plan_canaries(split, estimator.config, 60, np.random.default_rng(0))
    coins = np.random.default_rng(1).random(plan.owner.size) < 0.5
    segment = np.repeat(np.arange(plan.queries.size), np.diff(plan.ptr))

    def utilities(inserted):
        return estimator.fit(plan.split(inserted))._rank(plan.queries, (plan.ptr, plan.nodes), k=2)[1]

    before = utilities(coins)
    for i in range(plan.owner.size):
        flipped = coins.copy()
        flipped[i] = not flipped[i]
        after = utilities(flipped)
        assert np.unique(segment[before != after]).tolist() == [plan.owner[i]]  # its own query's list only
        own = plan.nodes == plan.canary_ids[i]
        assert (before[own] > 0) != (after[own] > 0)  # the canary scores above 0 exactly when inserted


@pytest.mark.parametrize(("transform", "noise"), [("umnn", "gumbel"), ("none", "gumbel"), ("none", "laplace"),
                                                  ("none", "staircase"), ("none", "none")])
def test_the_hook_at_scale_one_is_the_ranking_a_user_gets(graph, transform, noise):
    params = {"transform": transform, "noise": noise, "random_state": 4, "top_k": 3, **DPLP}
    plain, hooked = DPLPRanker(**params).fit(graph), DPLPRanker(**params).fit(graph, audit_hook=AuditHook())
    queries = plain.queries_[:20]
    assert torch.equal(plain.recommend(queries), hooked.recommend(queries))
    candidates = (np.array([0, 50]), np.setdiff1d(np.arange(60), [queries[0]])[:50])
    assert np.array_equal(plain._rank(queries[:1], candidates, k=3)[1], hooked._rank(queries[:1], candidates, k=3)[1])
    assert plain.privacy_report_ == hooked.privacy_report_


def test_the_fault_scales_the_noise_and_is_never_saved(graph, tmp_path):
    faulty = DPLPRanker(transform="none", random_state=4).fit(graph, audit_hook=AuditHook(noise_scale=0.0))
    exact = DPLPRanker(transform="none", noise="none", random_state=4).fit(graph)
    queries = exact.queries_[:5]
    candidates = (np.array([0, 40]), np.setdiff1d(np.arange(45), [queries[0]])[:40])
    assert np.array_equal(faulty._rank(queries[:1], candidates, k=1)[1], exact._rank(queries[:1], candidates, k=1)[1])
    assert faulty.privacy_report_.epsilon == pytest.approx(0.1)  # the ledger still claims the calibrated draw
    loaded = DPLPRanker.load(faulty.save(tmp_path / "ranker.pt"))
    assert loaded._noise_fault == 1.0
    with pytest.raises(ConfigError, match="without canaries"):
        DPLPRanker().fit(graph, audit_hook=AuditHook(canaries=object()))
    with pytest.raises(ConfigError, match="AuditHook"):
        DPLPRanker().fit(graph, audit_hook=0.01)


def test_bad_input(graph):
    with pytest.raises(ConfigError, match="covers DPLPRanker"):
        audit_ranker(EdgeRand(), graph)
    with pytest.raises(ConfigError, match="at least 2"):
        audit_ranker(DPLPRanker(), graph, canaries=1)
    with pytest.raises(ConfigError, match="the one-run bound needs"):
        audit_ranker(DPLPRanker(), graph, canaries=4)
    with pytest.raises(ConfigError, match="triad base"):
        audit_ranker(DPLPRanker(base="node2vec"), graph)
    with pytest.raises(ConfigError, match="guesses must be"):
        audit_ranker(DPLPRanker(), graph, guesses=0)
    with pytest.raises(ConfigError, match="noise_scale"):
        audit_ranker(DPLPRanker(), graph, noise_scale=-1.0)
    with pytest.raises(DatasetError, match="too few for the one-run bound"):
        audit_ranker(DPLPRanker(transform="none", top_k=1), random_graph(30, 0.3, seed=0))
