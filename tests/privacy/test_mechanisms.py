import math

import numpy as np
import pytest
import torch
from dp_accounting import dp_event
from scipy import stats

from graphpriv.privacy.accountant import GraphRdpAccountant
from graphpriv.privacy.mechanisms import (
    gaussian_mechanism,
    gaussian_noise_multiplier,
    gumbel_top_k,
    laplace_mechanism,
    randomized_response_edges,
)


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_laplace_scale_event_and_no_mutation():
    values = torch.zeros(200_000, dtype=torch.float64)
    noisy, event = laplace_mechanism(values, sensitivity=2.0, epsilon=0.5, generator=gen())
    assert torch.count_nonzero(values) == 0
    assert noisy.abs().mean().item() == pytest.approx(4.0, rel=0.02)  # E|Lap(b)| = b = 2/0.5
    assert isinstance(event, dp_event.LaplaceDpEvent) and event.noise_multiplier == 2.0
    again, _ = laplace_mechanism(values, sensitivity=2.0, epsilon=0.5, generator=gen())
    assert torch.equal(noisy, again)


def test_gaussian_std_and_event():
    noisy, event = gaussian_mechanism(torch.zeros(200_000), sensitivity=3.0, noise_multiplier=0.5, generator=gen())
    assert noisy.std().item() == pytest.approx(1.5, rel=0.02)
    assert event == dp_event.GaussianDpEvent(0.5)


def test_analytic_gaussian_meets_epsilon_above_one():
    z = gaussian_noise_multiplier(epsilon=4.0, delta=1e-5)
    classic = math.sqrt(2 * math.log(1.25 / 1e-5)) / 4.0
    assert z < classic  # the classic formula is loose (and invalid above eps = 1)
    from dp_accounting.pld import PLDAccountant

    eps = PLDAccountant().compose(dp_event.GaussianDpEvent(z)).get_epsilon(1e-5)
    assert eps == pytest.approx(4.0, abs=0.02)


@pytest.mark.parametrize("bad", [0.0, -2.0])
def test_mechanisms_reject_bad_input(bad):
    with pytest.raises(ValueError, match="epsilon"):
        laplace_mechanism(torch.zeros(3), sensitivity=1.0, epsilon=bad, generator=gen())
    with pytest.raises(ValueError, match="sensitivity"):
        laplace_mechanism(torch.zeros(3), sensitivity=bad, epsilon=1.0, generator=gen())
    with pytest.raises(ValueError, match="noise_multiplier"):
        gaussian_mechanism(torch.zeros(3), sensitivity=1.0, noise_multiplier=bad, generator=gen())


def iterated_exponential_mechanism_pmf(scores, k, eps_round, sensitivity):
    """Exact distribution of k rounds of the exponential mechanism (ordered selections)."""
    import itertools

    weights = np.exp(eps_round * np.asarray(scores, dtype=np.float64) / (2 * sensitivity))
    pmf = {}
    for seq in itertools.permutations(range(len(scores)), k):
        p, left = 1.0, set(range(len(scores)))
        for i in seq:
            p *= weights[i] / sum(weights[j] for j in left)
            left.remove(i)
        pmf[seq] = p
    return pmf


def test_gumbel_top_k_matches_iterated_exponential_mechanism():
    scores = torch.tensor([0.0, 1.0, 2.0, 0.5])
    k, epsilon, trials = 2, 2.0, 40_000
    pmf = iterated_exponential_mechanism_pmf(scores.numpy(), k, epsilon / k, 1.0)
    g = gen(1)
    counts = {seq: 0 for seq in pmf}
    for _ in range(trials):
        picked, event = gumbel_top_k(scores, k=k, epsilon=epsilon, sensitivity=1.0, generator=g)
        counts[tuple(picked.tolist())] += 1
    observed = np.array([counts[s] for s in pmf], dtype=np.float64)
    expected = np.array([pmf[s] for s in pmf])
    expected = expected / expected.sum() * observed.sum()
    _, p_value = stats.chisquare(observed, expected)
    assert p_value > 1e-3
    assert GraphRdpAccountant().supports(event)


def test_randomized_response_flip_rates_and_event():
    n, eps = 60, 1.0
    rng = np.random.default_rng(0)
    pairs = np.array([[0, 0, 1, 2], [1, 2, 2, 3]])
    flip = 1 / (1 + math.exp(eps))
    kept = added = 0
    runs = 300
    for _ in range(runs):
        out, event = randomized_response_edges(pairs, n, epsilon=eps, rng=rng)
        assert (out[0] < out[1]).all()
        codes = set(map(tuple, out.T.tolist()))
        k = sum((a, b) in codes for a, b in pairs.T.tolist())
        kept += k
        added += len(codes) - k
    assert kept / (runs * 4) == pytest.approx(1 - flip, abs=0.03)
    non_edges = n * (n - 1) // 2 - 4
    assert added / (runs * non_edges) == pytest.approx(flip, rel=0.02)
    assert event.noise_parameter == pytest.approx(2 * flip) and event.num_buckets == 2
    with pytest.raises(ValueError, match="must lie in"):
        randomized_response_edges(np.array([[0], [99]]), 10, epsilon=1.0, rng=rng)


def test_non_edge_offsets_match_brute_force():
    from graphpriv.privacy.mechanisms import non_edge_offsets

    rng = np.random.default_rng(0)
    for _ in range(50):
        size = int(rng.integers(1, 60))
        occupied = np.sort(rng.choice(size, int(rng.integers(0, size)), replace=False))
        free = np.setdiff1d(np.arange(size), occupied)
        np.testing.assert_array_equal(non_edge_offsets(occupied, np.arange(free.size)), free)


def test_randomized_response_blocks_do_not_change_the_distribution():
    # Tiny blocks (7 codes) must give the same flip rates as one block, and never a duplicate or an
    # original edge among the switched-on pairs.
    n, eps = 40, 0.5
    pairs = np.array([[0, 0, 1, 5, 7], [1, 9, 2, 6, 30]])
    flip = 1 / (1 + math.exp(eps))
    non_edges = n * (n - 1) // 2 - pairs.shape[1]
    for block in (7, 1 << 24):
        rng = np.random.default_rng(1)
        added, runs = 0, 200
        for _ in range(runs):
            out, _ = randomized_response_edges(pairs, n, epsilon=eps, rng=rng, block_entries=block)
            codes = out[0] * n + out[1]
            assert np.unique(codes).size == codes.size and (out[0] < out[1]).all()
            added += int((~np.isin(codes, pairs[0] * n + pairs[1])).sum())
        assert added / (runs * non_edges) == pytest.approx(flip, rel=0.02)


def test_randomized_response_is_accounted_as_pure_epsilon_over_bits():
    from dp_accounting.privacy_accountant import NeighboringRelation

    from graphpriv.privacy.accountant import Ledger
    from graphpriv.privacy.units import PrivacyUnit

    for eps in (0.5, 2.0, 6.0):
        _, event = randomized_response_edges(np.array([[0], [1]]), 5, epsilon=eps, rng=np.random.default_rng(0))
        ledger = Ledger(PrivacyUnit.EDGE, delta=1e-5, accountant="pld",
                        neighboring_relation=NeighboringRelation.REPLACE_ONE)
        ledger.spend(event, phase="rr")
        # binary randomized response with flip 1/(1+e^eps) is exactly eps-DP: the PLD is tight
        assert ledger.epsilon() == pytest.approx(eps, abs=2e-3)
