"""The Poisson multi-term bound (DPAR's DP-SGD) against exact Rényi divergences in one dimension."""

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import logsumexp
from scipy.stats import binom, norm

from graphpriv.privacy.accountant import GraphRdpAccountant, Ledger
from graphpriv.privacy.analysis.binomial_group import binomial_group_gaussian_rdp
from graphpriv.privacy.events import BinomialGroupGaussianDpEvent
from graphpriv.privacy.units import PrivacyUnit


def _renyi(log_p, log_q, alpha, lo, hi):
    """D_alpha(P || Q) of two log-densities on the real line, by quadrature over [lo, hi]."""
    value, _ = quad(lambda x: np.exp(alpha * log_p(x) + (1 - alpha) * log_q(x)), lo, hi, limit=400)
    return np.log(value) / (alpha - 1)


@pytest.mark.parametrize("group_size,rate,z", [(1, 0.3, 1.0), (3, 0.2, 0.8), (5, 0.5, 1.5)])
def test_bound_covers_the_collinear_worst_case(group_size, rate, z):
    # r changed examples each move the sum by 2C = 1 in the same direction; std z * 2C * K
    sigma = z * group_size
    pmf = binom.pmf(np.arange(group_size + 1), group_size, rate)

    def mixture(x):
        return logsumexp([np.log(p) + norm.logpdf(x, loc=r, scale=sigma) for r, p in enumerate(pmf)])

    def base(x):
        return norm.logpdf(x, scale=sigma)

    lo, hi = -12 * sigma, group_size + 12 * sigma

    orders = [2.0, 4.0, 8.0]
    bound = binomial_group_gaussian_rdp(orders, noise_multiplier=z, sample_rate=rate, group_size=group_size)
    for alpha, b in zip(orders, bound):
        exact = max(_renyi(mixture, base, alpha, lo, hi), _renyi(base, mixture, alpha, lo, hi))
        assert exact <= b + 1e-9
        # and the bound is the convexity bound, not something looser: equal when all mass is on r = K
    full = binomial_group_gaussian_rdp([3.0], noise_multiplier=z, sample_rate=1.0, group_size=group_size)
    assert full[0] == pytest.approx(3.0 / (2 * z**2))


def test_group_of_one_is_the_convexity_bound_of_the_subsampled_gaussian():
    alpha, q, z = 5.0, 0.1, 1.2
    expected = np.log(1 - q + q * np.exp(alpha * (alpha - 1) / (2 * z**2))) / (alpha - 1)
    got = binomial_group_gaussian_rdp([alpha], noise_multiplier=z, sample_rate=q, group_size=1)[0]
    assert got == pytest.approx(expected)


def test_accountant_composes_the_event_and_epsilon_grows_with_the_group():
    eps = []
    for k in (1, 2, 4, 8):
        # the same noise std (2C x 8) for every K: a unit that reaches more examples leaks more
        acc = GraphRdpAccountant().compose(BinomialGroupGaussianDpEvent(8.0 / k, 0.05, k), 100)
        eps.append(acc.get_epsilon(1e-5))
    assert all(np.isfinite(eps))
    assert eps == sorted(eps) and eps[-1] > 2 * eps[0]
    ledger = Ledger(PrivacyUnit.NODE, delta=1e-5)
    ledger.spend(BinomialGroupGaussianDpEvent(2.0, 0.05, 4), phase="training", count=100)
    assert ledger.epsilon() == pytest.approx(eps[2])


@pytest.mark.parametrize("kwargs,match", [({"sample_rate": 0.0}, "sample_rate"), ({"group_size": 0}, "group_size"),
                                         ({"noise_multiplier": 0.0}, "noise_multiplier")])
def test_bad_arguments(kwargs, match):
    args = {"noise_multiplier": 1.0, "sample_rate": 0.1, "group_size": 2, **kwargs}
    with pytest.raises(ValueError, match=match):
        binomial_group_gaussian_rdp([2.0], **args)
