"""The canary audit of the DP-SGD link predictors (issue 10): distance-2 canaries, the three verdicts."""

import math

import numpy as np
import pytest

from graphpriv.data.graph import pair_codes, to_csr, undirected_pairs
from graphpriv.errors import ConfigError
from graphpriv.privacy.audit_dplp import audit_dplp, distance_two_non_edges
from graphpriv.testing.broken import broken_noise
from graphpriv.testing.graphs import random_graph

pytestmark = pytest.mark.usefixtures("one_thread")

FAST = {"epochs": 1, "gradient_canaries": 500, "edge_canaries": 60, "batch_size": 64}


@pytest.fixture(scope="module")
def graph():
    return random_graph(150, 0.08, seed=5)


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


def test_correct_run_passes_broken_noise_is_caught_non_private_is_large(graph):
    correct = audit_dplp("dplp-ps", graph, epsilon=1.0, seed=1, **FAST)
    assert [r.attack.split(" ")[0] for r in correct] == ["gradient", "canary"]
    assert all(r.passed and r.claimed_epsilon == pytest.approx(1.0, rel=0.02) for r in correct)
    assert correct[0].canaries == 500 and correct[1].canaries == 60
    with broken_noise(0.01):
        broken = audit_dplp("dplp-ps", graph, epsilon=1.0, seed=1, **FAST)
    assert not broken[0].passed and broken[0].epsilon_lower_bound > 2 * broken[0].claimed_epsilon
    open_run = audit_dplp("dplp-ps", graph, epsilon=1.0, seed=1, private=False, **FAST)
    assert open_run[0].claimed_epsilon == math.inf and open_run[0].epsilon_lower_bound > 2.5


def test_bad_input(graph):
    with pytest.raises(ConfigError, match="covers"):
        audit_dplp("seal", graph)
    with pytest.raises(ConfigError, match="fixed k and theta"):
        audit_dplp("dplp-ps", graph, theta="auto")
    with pytest.raises(ConfigError, match="at least 2"):
        audit_dplp("dplp-ps", graph, gradient_canaries=1)


def test_canary_llr_equals_the_brute_force_mixture_ratio():
    from scipy.stats import hypergeom, norm

    from graphpriv.privacy.audit_dplp import canary_llr

    y = np.random.default_rng(0).normal(size=(5, 3))
    got = canary_llr(y, std=0.7, max_grad_norm=1.0, population=50, group=3, batch=10)
    p = hypergeom.pmf(np.arange(4), 50, 3, 10)
    plus = (p[:, None, None] * norm.pdf(y[None], np.arange(4)[:, None, None], 0.7)).sum(0)
    minus = (p[:, None, None] * norm.pdf(y[None], -np.arange(4)[:, None, None], 0.7)).sum(0)
    np.testing.assert_allclose(got, np.log(plus / minus).sum(0), rtol=1e-10)
    np.testing.assert_array_equal(canary_llr(y, std=0.0, max_grad_norm=1.0, population=50, group=3, batch=10),
                                  y.sum(0))
