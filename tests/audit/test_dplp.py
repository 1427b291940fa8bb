"""The canary audit of DPLP's DP-SGD link predictor through its own fit: distance-2 canaries, the
likelihood ratio, the three verdicts (correct, noise 100x too small, no noise), bad input."""

import math

import numpy as np
import pytest
import torch

from graphpriv.audit.dplp import DiracCanaries, audit_dplp, canary_llr, distance_two_non_edges
from graphpriv.data.graph import pair_codes, to_csr, undirected_pairs
from graphpriv.errors import ConfigError
from graphpriv.methods.dplp_subgraph import DPLPLinkPredictor, SEALLinkPredictor
from graphpriv.testing.graphs import random_graph

pytestmark = pytest.mark.usefixtures("one_thread")

FAST = {"canaries": 500, "edge_canaries": 60}


@pytest.fixture(scope="module")
def graph():
    return random_graph(150, 0.08, seed=5)


@pytest.fixture(scope="module")
def estimator():
    return DPLPLinkPredictor(epsilon=1.0, epochs=1, batch_size=64)


def test_distance_two_canaries_are_friends_of_friends_and_not_forbidden(graph):
    pairs = undirected_pairs(graph.edge_index)
    n = int(graph.num_nodes)
    rng = np.random.default_rng(0)
    canaries = distance_two_non_edges(pairs, n, 200, forbidden=pairs, rng=rng)
    assert canaries.shape == (2, 200) and (canaries[0] < canaries[1]).all()
    codes = pair_codes(canaries, n)
    assert np.unique(codes).size == 200 and not np.isin(codes, pair_codes(pairs, n)).any()
    adj = to_csr(pairs, n)
    two_hop = (adj @ adj).tocsr()
    assert all(two_hop[u, v] > 0 for u, v in canaries.T)
    with pytest.raises(ConfigError, match="distance-2"):
        distance_two_non_edges(pairs[:, :3], n, 500, forbidden=pairs, rng=rng)


def test_dirac_canaries_add_signed_counts_and_the_step_noise():
    slots = DiracCanaries(np.array([True, False, True]), generator=torch.Generator().manual_seed(0))
    assert slots.attach(group_size=2, max_grad_norm=0.5) == 6
    slots.step(torch.tensor([0, 1, 3, 4]), 0.0)  # slot 0 twice, slot 1 once, slot 2 once
    np.testing.assert_array_equal(slots.released_array(), [[1.0, -0.5, 0.5]])
    slots.step(torch.tensor([], dtype=torch.int64), 2.0)
    assert slots.noise_std == 2.0 and slots.released_array().shape == (2, 3)
    assert np.abs(slots.released_array()[1]).min() > 0


def test_correct_run_passes_small_noise_is_caught_no_noise_is_large(graph, estimator):
    correct = audit_dplp(estimator, graph, seed=1, **FAST)
    assert [r.attack.split(" ")[0] for r in correct] == ["gradient", "canary"]
    assert all(r.passed and r.claimed_epsilon == pytest.approx(1.0, rel=0.02) for r in correct)
    assert correct[0].canaries == 500 and correct[1].canaries == 60
    assert all(r.method == "DPLPLinkPredictor" and r.unit == "edge" and r.confidence == 0.975 for r in correct)
    broken = audit_dplp(estimator, graph, seed=1, noise_scale=0.01, **FAST)
    assert broken[0].claimed_epsilon == pytest.approx(1.0, rel=0.02) and "NOISE SCALED" in broken[0].accounting
    assert not broken[0].passed and broken[0].epsilon_lower_bound > 2 * broken[0].claimed_epsilon
    open_run = audit_dplp(estimator, graph, seed=1, noise_scale=0, name="dplp-ps", **FAST)
    assert open_run[0].claimed_epsilon == math.inf and open_run[0].epsilon_lower_bound > 2.5
    assert open_run[0].method == "dplp-ps"


def test_bad_input(graph, estimator):
    with pytest.raises(ConfigError, match="private"):
        audit_dplp(DPLPLinkPredictor(private=False), graph)
    with pytest.raises(ConfigError, match="fixed k and theta"):
        audit_dplp(DPLPLinkPredictor(theta="auto"), graph)
    with pytest.raises(ConfigError, match="at least 2"):
        audit_dplp(estimator, graph, canaries=1)
    with pytest.raises(ConfigError, match="edge_canaries"):
        audit_dplp(estimator, graph, edge_canaries=1)
    with pytest.raises(ConfigError, match="covers DPLPLinkPredictor"):
        audit_dplp(SEALLinkPredictor(), graph)


def test_canary_llr_equals_the_brute_force_mixture_ratio():
    from scipy.stats import hypergeom, norm

    y = np.random.default_rng(0).normal(size=(5, 3))
    got = canary_llr(y, std=0.7, max_grad_norm=1.0, population=50, group=3, batch=10)
    p = hypergeom.pmf(np.arange(4), 50, 3, 10)
    plus = (p[:, None, None] * norm.pdf(y[None], np.arange(4)[:, None, None], 0.7)).sum(0)
    minus = (p[:, None, None] * norm.pdf(y[None], -np.arange(4)[:, None, None], 0.7)).sum(0)
    np.testing.assert_allclose(got, np.log(plus / minus).sum(0), rtol=1e-10)
    np.testing.assert_array_equal(canary_llr(y, std=0.0, max_grad_norm=1.0, population=50, group=3, batch=10),
                                  y.sum(0))
