"""DPAR's accounting: budget split, amplification, per-phase calibration, both modes."""

import math

import pytest

from graphpriv.privacy import dpar_accounting as acc
from graphpriv.privacy.analysis.top_k import one_shot_top_k_epsilon


@pytest.mark.parametrize("epsilon", [1.0, 8.0, 60.0])
def test_rigorous_split_amplifies_back_to_the_target(epsilon):
    b = acc.inner_budget(epsilon, 2e-3, node_rate=0.09, appr_share=0.3)
    assert b.appr_epsilon == pytest.approx(0.3 / 0.7 * b.sgd_epsilon)
    total, delta = acc.outer_epsilon(b.appr_epsilon + b.sgd_epsilon, b.appr_delta + b.sgd_delta, node_rate=0.09)
    assert total == pytest.approx(epsilon, rel=1e-9) and delta == pytest.approx(2e-3)
    # spec: at eps 8, q' 0.09 the paper's linear scaling says 0.72 where the amplification says ~5.6
    assert acc.outer_epsilon(8.0, 0.0, node_rate=0.09)[0] == pytest.approx(5.5954, abs=1e-3)
    assert acc.outer_epsilon(8.0, 0.0, node_rate=0.09, accounting="paper")[0] == pytest.approx(0.72)


def test_paper_split_is_linear():
    b = acc.inner_budget(1.0, 1e-3, node_rate=0.1, accounting="paper")
    assert b.appr_epsilon == pytest.approx(5.0) and b.sgd_epsilon == pytest.approx(5.0)
    with pytest.raises(ValueError, match="delta / q'"):
        acc.inner_budget(1.0, 0.5, node_rate=0.4)


@pytest.mark.parametrize("values", [False, True])
def test_em_rows_fill_but_do_not_exceed_the_phase_budget(values):
    round_eps, row_delta = acc.em_row_epsilon(3.0, 1e-2, k=2, rows=70, values=values)
    spent = acc.em_rows_epsilon(round_eps, k=2, rows=70, row_delta=row_delta, values=values, target_delta=1e-2)
    assert 0.99 * 3.0 <= spent <= 3.0
    paper_eps, _ = acc.em_row_epsilon(3.0, 1e-2, k=2, rows=70, values=values, accounting="paper")
    per_row = one_shot_top_k_epsilon(paper_eps, 2, row_delta) * (2 if values else 1)
    assert per_row == pytest.approx(acc.paper_row_epsilon(3.0, 1e-2, 70))
    assert acc.paper_rows_epsilon(per_row, 70, 1e-2) == pytest.approx(3.0)


def test_gaussian_rows_and_dpsgd_are_calibrated_to_their_budgets():
    std = acc.gm_row_noise(2.0, 1e-3, c1=0.01, rows=70)
    assert 0.99 * 2.0 <= acc.gm_rows_epsilon(std, c1=0.01, rows=70, delta=1e-3) <= 2.0
    # paper: the classical Gaussian mechanism per row with sensitivity C1 (half the rigorous 2 C1)
    paper_std = acc.gm_row_noise(2.0, 1e-3, c1=0.01, rows=70, accounting="paper")
    row_eps = acc.paper_row_epsilon(2.0, 1e-3, 70)
    assert paper_std == pytest.approx(math.sqrt(2 * math.log(1.25 / (1e-3 / 140))) * 0.01 / row_eps)
    for group in (1, 3):
        noise = acc.sgd_noise(2.0, 1e-3, sample_rate=0.25, steps=200, group_size=group, max_grad_norm=1.0)
        assert noise.sensitivity == (1.0 if group == 1 else 6.0)
        spent = acc.sgd_epsilon(noise.noise_std, max_grad_norm=1.0, sample_rate=0.25, steps=200, group_size=group,
                                delta=1e-3)
        assert 0.99 * 2.0 <= spent <= 2.0
    # a node in 3 rows needs more noise than one in 1 row for the same budget
    one = acc.sgd_noise(2.0, 1e-3, sample_rate=0.25, steps=200, group_size=1, max_grad_norm=1.0)
    three = acc.sgd_noise(2.0, 1e-3, sample_rate=0.25, steps=200, group_size=3, max_grad_norm=1.0)
    assert three.noise_std > 2 * one.noise_std
    # paper mode ignores m: sensitivity r C
    paper = acc.sgd_noise(2.0, 1e-3, sample_rate=0.25, steps=200, group_size=3, max_grad_norm=1.0, r=2.0,
                          accounting="paper")
    assert paper.sensitivity == 2.0 and paper.noise_multiplier == pytest.approx(one.noise_multiplier, rel=1e-3)
