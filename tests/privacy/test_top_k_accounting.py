import math

import pytest

from graphpriv.privacy.analysis.top_k import (
    amplified_by_subsampling,
    compose_approx_dp,
    one_shot_top_k_epsilon,
)


def test_one_shot_top_k_bound_known_values():
    assert one_shot_top_k_epsilon(0.5, 4, 0.0) == 2.0  # pure: K eps
    e = math.exp(0.01)
    expected = 100 * 0.01 * (e - 1) / (e + 1) + 0.01 * math.sqrt(2 * 100 * math.log(1e5))
    assert one_shot_top_k_epsilon(0.01, 100, 1e-5) == pytest.approx(expected)  # small eps: the sqrt(K) branch
    assert expected < 1.0
    assert one_shot_top_k_epsilon(2.0, 2, 1e-5) == 4.0  # large eps: K eps is smaller
    with pytest.raises(ValueError):
        one_shot_top_k_epsilon(0.0, 2, 1e-5)


def test_composition_takes_the_best_valid_bound():
    eps, method = compose_approx_dp(0.5, 0.0, 1, target_delta=1e-6)
    assert eps == pytest.approx(0.5, abs=1e-3) and eps <= 0.5 + 1e-9
    many, method = compose_approx_dp(0.05, 1e-7, 70, target_delta=1e-4)
    assert method in ("advanced", "pld") and many < 70 * 0.05
    basic_only, _ = compose_approx_dp(2.0, 0.0, 3, target_delta=1e-9)
    assert basic_only <= 6.0 + 1e-9
    with pytest.raises(ValueError, match="target_delta"):
        compose_approx_dp(0.1, 1e-5, 10, target_delta=1e-5)


def test_subsampling_amplification_matches_the_spec_example():
    eps, delta = amplified_by_subsampling(8.0, 1e-3, 0.09)
    assert eps == pytest.approx(math.log(1 + 0.09 * (math.exp(8) - 1))) and 5.5 < eps < 5.7  # paper: 0.72
    assert delta == pytest.approx(9e-5)
    assert amplified_by_subsampling(1.0, 0.0, 1.0) == (pytest.approx(1.0), 0.0)
