"""The canary audit's statistics against known values."""

import math

import pytest
from scipy.stats import binom

from graphpriv.audit.statistics import (
    clopper_pearson,
    epsilon_lower_bound_cp,
    epsilon_lower_bound_one_run,
    one_run_p_value,
)


def test_clopper_pearson_known_values():
    assert clopper_pearson(0, 10, 0.05)[0] == 0.0 and clopper_pearson(10, 10, 0.05)[1] == 1.0
    # 0 of n: the upper end solves (1 - p)^n = alpha / 2
    assert clopper_pearson(0, 20, 0.05)[1] == pytest.approx(1 - 0.025 ** (1 / 20))
    lo, hi = clopper_pearson(50, 100, 0.05)
    assert lo == pytest.approx(0.3983, abs=1e-4) and hi == pytest.approx(0.6017, abs=1e-4)


def test_one_run_bound_is_the_binomial_tail_inversion():
    eps = epsilon_lower_bound_one_run(800, 1000)
    p = 1 / (1 + math.exp(-eps))
    assert binom.sf(799, 1000, p) == pytest.approx(0.05, rel=1e-3)
    assert epsilon_lower_bound_one_run(500, 1000) == 0.0  # chance level proves nothing
    p_all = 0.05 ** (1 / 1000)  # all 1000 right: p^1000 = 0.05
    assert epsilon_lower_bound_one_run(1000, 1000) == pytest.approx(math.log(p_all / (1 - p_all)), rel=1e-4)
    assert epsilon_lower_bound_cp(90, 10, 10, 90) > epsilon_lower_bound_cp(75, 25, 25, 75) > 0 == epsilon_lower_bound_cp(55, 45, 45, 55)
    with pytest.raises(ValueError):
        epsilon_lower_bound_one_run(11, 10)


def test_one_run_p_value_with_delta():
    pure = one_run_p_value(1000, 1000, 800, 1.0)
    assert pure == pytest.approx(binom.sf(799, 1000, 1 / (1 + math.exp(-1.0))))
    with_delta = one_run_p_value(1000, 1000, 800, 1.0, delta=1e-5)
    assert with_delta > pure  # delta can only make a count more plausible
    # abstaining guessers: r < m; delta's term scales with m
    assert one_run_p_value(2000, 500, 400, 1.0, 1e-5) > one_run_p_value(1000, 500, 400, 1.0, 1e-5)
    assert epsilon_lower_bound_one_run(800, 1000, delta=1e-4) < epsilon_lower_bound_one_run(800, 1000)
    with pytest.raises(ValueError):
        one_run_p_value(10, 20, 5, 1.0)


def test_minimum_guesses_is_where_a_perfect_attack_first_shows_something():
    from graphpriv.audit.statistics import guesses_made, minimum_guesses

    for confidence in (0.9, 0.95, 0.975, 0.99):
        r = minimum_guesses(confidence)
        assert epsilon_lower_bound_one_run(r, r, confidence=confidence) > 0
        assert epsilon_lower_bound_one_run(r - 1, r - 1, confidence=confidence) == 0 if r > 1 else True
    assert minimum_guesses(0.95) == 5 and minimum_guesses(0.975) == 6
    assert guesses_made(100) == 20 and guesses_made(9) == 2 and guesses_made(100, 7, one_sided=True) == 7


def test_presence_guessers_take_the_better_bound_at_half_the_error_level_each():
    import numpy as np

    from graphpriv.audit.statistics import audit_from_presence

    inserted = np.arange(40) % 2 == 0
    perfect = audit_from_presence(inserted, inserted, method="m", dataset="d", unit="edge", claimed_epsilon=1.0,
                                  accounting="a", attack="t")
    assert perfect.correct == 40 and perfect.tpr == 1.0 and perfect.fpr == 0.0 and perfect.epsilon_estimate == math.inf
    assert perfect.epsilon_lower_bound == epsilon_lower_bound_one_run(40, 40, confidence=0.975)
    # present only on 10 of the inserted ones: the abstaining guesser (10 of 10 right) wins
    some = inserted & (np.arange(40) < 20)
    report = audit_from_presence(some, inserted, method="m", dataset="d", unit="edge", claimed_epsilon=1.0,
                                 accounting="a", attack="t")
    assert report.epsilon_lower_bound == max(epsilon_lower_bound_one_run(30, 40, confidence=0.975),
                                             epsilon_lower_bound_one_run(10, 10, confidence=0.975, canaries=40))
    with pytest.raises(ValueError):
        audit_from_presence(inserted[:1], inserted[:1], method="m", dataset="d", unit="edge", claimed_epsilon=1.0,
                            accounting="a", attack="t")
