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


# -- the ledger path: DPAR's phases and the q' amplification composed by the Ledger ----------------


def _record(appr, *, epsilon, delta, node_rate, rows, k, group, r, c1=0.01, mode="rigorous", steps=40, rate=0.2):
    """A fit's accounting record (what DPARClassifier keeps), calibrated as train_dpar calibrates."""
    budget = acc.inner_budget(epsilon, delta, node_rate=node_rate, appr_share=0.4, accounting=mode)
    info = {"num_rows": rows, "k": k}
    if appr == "gm":
        info["gm_noise_std"] = acc.gm_row_noise(budget.appr_epsilon, budget.appr_delta, c1=c1, rows=rows,
                                                accounting=mode)
    else:
        values = appr == "em1"
        round_eps, row_delta = acc.em_row_epsilon(budget.appr_epsilon, budget.appr_delta, k=k, rows=rows,
                                                  values=values, accounting=mode)
        info.update(em_round_epsilon=round_eps, em_row_delta=row_delta,
                    em_value_epsilon=one_shot_top_k_epsilon(round_eps, k, row_delta) if values else None)
    noise = acc.sgd_noise(budget.sgd_epsilon, budget.sgd_delta, sample_rate=rate, steps=steps, group_size=group,
                          max_grad_norm=1.0, r=r, accounting=mode)
    return {"budget": budget.__dict__, "noise": noise.__dict__, "appr_info": info, "steps": steps, "rate": rate,
            "group": group}


def _pre_ledger_epsilons(record, *, delta, node_rate, c1, r, mode):
    """(eps_appr, eps_sgd, total) as DPAR computed them before its accounting went through the Ledger
    (its _report / _appr_epsilon / fit_epsilon, from the functions of this module)."""
    inner_delta = delta / node_rate
    appr_delta = sgd_delta = inner_delta / 2
    info, rows = record["appr_info"], record["appr_info"]["num_rows"]
    row_delta = appr_delta / (2 * rows)
    if "em_round_epsilon" in info:
        values = info["em_value_epsilon"] is not None
        if mode == "paper":
            per_row = one_shot_top_k_epsilon(info["em_round_epsilon"], info["k"], row_delta)
            appr = acc.paper_rows_epsilon(per_row * (2 if values else 1), rows, appr_delta)
        else:
            appr = acc.em_rows_epsilon(info["em_round_epsilon"], k=info["k"], rows=rows, row_delta=row_delta,
                                       values=values, target_delta=appr_delta)
    elif mode == "paper":
        appr = acc.paper_rows_epsilon(math.sqrt(2 * math.log(1.25 / row_delta)) * c1 / info["gm_noise_std"], rows,
                                      appr_delta)
    else:
        appr = acc.gm_rows_epsilon(info["gm_noise_std"], c1=c1, rows=rows, delta=appr_delta)
    noise = acc.DparSgdNoise(**record["noise"])
    sgd = acc.sgd_epsilon(noise.noise_std, max_grad_norm=1.0, sample_rate=record["rate"], steps=record["steps"],
                          group_size=record["group"], delta=sgd_delta, r=r, accounting=mode)
    return appr, sgd, acc.outer_epsilon(appr + sgd, inner_delta, node_rate=node_rate, accounting=mode)[0]


CONFIGS = [("em0", 8.0, 1e-4, 0.09, 70, 2, 1, 1.0), ("em1", 8.0, 1e-4, 0.09, 70, 2, 3, 1.0),
           ("gm", 8.0, 1e-4, 0.09, 70, 2, 1, 1.0), ("gm", 1.0, 2e-3, 0.5, 20, 4, 4, 2.0),
           ("em1", 4.0, 1e-3, 1.0, 30, 3, 2, 0.5), ("em0", 60.0, 1e-5, 0.3, 50, 2, 5, 1.0)]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("fit_mode", ["rigorous", "paper"])
def test_the_ledger_gives_the_pre_ledger_epsilons(config, fit_mode):
    appr, epsilon, delta, node_rate, rows, k, group, r = config
    record = _record(appr, epsilon=epsilon, delta=delta, node_rate=node_rate, rows=rows, k=k, group=group, r=r,
                     mode=fit_mode)
    for mode in ("rigorous", "paper"):  # the fit's noise under both analyses, at its delta and smaller ones
        ledger = acc.spent_ledger(record, delta=delta, node_rate=node_rate, c1=0.01, max_grad_norm=1.0, r=r,
                                  accounting=mode)
        for at in (delta, delta / 10, delta / 1000):
            old = _pre_ledger_epsilons(record, delta=at, node_rate=node_rate, c1=0.01, r=r, mode=mode)
            new = (ledger.epsilon(at, phase="dp-appr"), ledger.epsilon(at, phase="dp-sgd"), ledger.epsilon(at))
            assert new == pytest.approx(old, rel=1e-9, abs=0), (mode, at)
        report = ledger.report(target_epsilon=epsilon)
        assert report.epsilon == ledger.epsilon() and [p.name for p in report.phases] == ["dp-appr", "dp-sgd"]
        assert report.delta == pytest.approx(delta, rel=1e-12) and report.phases[0].steps == rows
        assert report.accountant == "rdp + (eps, delta) composition" and report.unit == "node"
        assert report.neighboring_relation == "ADD_OR_REMOVE_ONE"
        if mode == fit_mode:  # the calibration's own analysis meets its target
            assert report.epsilon <= epsilon * (1 + 1e-6)


def test_the_sgd_noise_multiplier_of_each_mode():
    record = _record("gm", epsilon=4.0, delta=1e-3, node_rate=0.5, rows=20, k=2, group=3, r=2.0)
    noise = acc.DparSgdNoise(**record["noise"])
    z = acc.sgd_noise_multiplier(noise, max_grad_norm=1.0, r=2.0, accounting="rigorous")
    assert z == noise.noise_multiplier  # the calibrated z under its own analysis
    paper = acc.sgd_noise_multiplier(noise, max_grad_norm=1.0, r=2.0, accounting="paper")
    assert paper == noise.noise_std / 2.0  # the same std against the paper's sensitivity r C
    assert acc.sgd_group(3, "paper") == 1 and acc.sgd_group(3, "rigorous") == 3


def test_dpar_ledger_refuses_a_delta_the_sample_cannot_hold():
    from graphpriv.errors import PrivacyError

    with pytest.raises(PrivacyError, match="delta / q"):
        acc.dpar_ledger(0.6, node_rate=0.5, accounting="rigorous")
    ledger = acc.dpar_ledger(1e-3, node_rate=0.5, accounting="rigorous")
    with pytest.raises(PrivacyError, match="delta / q"):
        ledger.epsilon(0.7)


def test_sgd_noise_is_calibrated_once_per_setting_and_equals_a_fresh_calibration():
    from graphpriv.privacy import dpar_accounting as da

    kw = {"sample_rate": 0.05, "steps": 40, "group_size": 1, "max_grad_norm": 1.0}
    da._sgd_noise_multiplier.cache_clear()
    first = da.sgd_noise(2.0, 1e-4, **kw)
    again = da.sgd_noise(2.0, 1e-4, **kw, accounting="rigorous")  # the same setting, as a string
    assert da._sgd_noise_multiplier.cache_info().misses == 1 and again == first
    fresh = da._sgd_noise_multiplier.__wrapped__(2.0, 1e-4, 0.05, 40, 1, "rigorous")
    assert first.noise_multiplier == fresh
    # and it meets the budget it was calibrated to
    assert da.sgd_epsilon(first.noise_std, max_grad_norm=1.0, sample_rate=0.05, steps=40, group_size=1,
                          delta=1e-4) <= 2.0 + 1e-6
    assert da.sgd_noise(2.0, 1e-4, **kw, accounting="paper").noise_multiplier == first.noise_multiplier
