import itertools
import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant

from graphpriv.errors import (
    BudgetExceededError,
    PrivacyError,
    UnsupportedMechanismError,
)
from graphpriv.privacy import (
    EffectiveRateWorGaussianDpEvent,
    GraphRdpAccountant,
    HypergeometricGroupGaussianDpEvent,
    Ledger,
    PrivacyUnit,
    calibrate_noise_multiplier,
)
from graphpriv.privacy.analysis.effective_rate import effective_sampling_rate
from graphpriv.privacy.analysis.hypergeometric import hypergeometric_group_gaussian_rdp

ORDERS = [2, 3, 4, 8, 16]


def brute_force_multi_term(n, m, k, z, alpha):
    """Average over every batch of m of n (the first k examples are the changed ones)."""
    kb = min(k, m)
    total, count = 0.0, 0
    for batch in itertools.combinations(range(n), m):
        r = sum(1 for i in batch if i < k)
        total += math.exp(alpha * (alpha - 1) / (2 * z**2) * (r / kb) ** 2)
        count += 1
    return math.log(total / count) / (alpha - 1)


@pytest.mark.parametrize("n,m,k,z", [(8, 3, 2, 1.0), (9, 4, 5, 0.7), (7, 2, 7, 1.5), (10, 5, 1, 2.0)])
def test_multi_term_bound_equals_brute_force_sum(n, m, k, z):
    ours = hypergeometric_group_gaussian_rdp(ORDERS, noise_multiplier=z, dataset_size=n, batch_size=m, group_size=k)
    ref = [brute_force_multi_term(n, m, k, z, a) for a in ORDERS]
    np.testing.assert_allclose(ours, ref, rtol=1e-10)


@pytest.mark.parametrize("z", [0.8, 1.0, 2.0])
def test_k1_lower_bound_closed_form_and_gap_to_poisson(z):
    n, m = 1000, 10
    q = m / n
    alphas = np.array(ORDERS, dtype=float)
    ours = hypergeometric_group_gaussian_rdp(ORDERS, noise_multiplier=z, dataset_size=n, batch_size=m, group_size=1)
    unamplified = alphas / (2 * z**2)
    assert np.all(ours >= unamplified * q**2)
    assert np.all(ours <= unamplified)
    x = alphas * (alphas - 1) / (2 * z**2)
    np.testing.assert_allclose(ours, np.log1p(q * np.expm1(x)) / (alphas - 1), rtol=1e-10)
    # The known gap: the multi-term bound keeps only first-order amplification, q (e^x - 1)/(alpha-1),
    # while the tight Poisson subsampled Gaussian is ~ q^2 alpha / z^2 at small orders. It must
    # never be *below* the tight bound (that would signal a wrong formula).
    poisson = RdpAccountant(orders=ORDERS).compose(
        dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(z)))._rdp
    assert np.all(ours >= poisson * (1 - 1e-9))
    assert np.all(ours <= q * np.expm1(x) / (alphas - 1) + 1e-12)


def test_group_size_one_equals_full_batch_gaussian_when_m_equals_n():
    z = 1.3
    ours = hypergeometric_group_gaussian_rdp(ORDERS, noise_multiplier=z, dataset_size=5, batch_size=5, group_size=1)
    np.testing.assert_allclose(ours, np.array(ORDERS) / (2 * z**2))


def test_effective_rate_matches_enumeration():
    n, m, k = 9, 3, 2
    hits = sum(1 for b in itertools.combinations(range(n), m) if any(i < k for i in b))
    assert effective_sampling_rate(n, k, m) == pytest.approx(hits / math.comb(n, m))
    assert effective_sampling_rate(10, 8, 5) == 1.0


def test_poisson_epsilon_matches_opacus():
    from opacus.accountants.analysis import rdp as opacus_rdp

    q, z, steps, delta = 256 / 60000, 1.1, 14063, 1e-5
    orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
    ours = GraphRdpAccountant(orders=orders).compose(
        dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(z)), steps))
    ref_rdp = opacus_rdp.compute_rdp(q=q, noise_multiplier=z, steps=steps, orders=orders)
    integer = np.array([float(a).is_integer() for a in orders])
    np.testing.assert_allclose(ours._rdp[integer], ref_rdp[integer], rtol=1e-6)
    # fractional orders: dp-accounting interpolates an upper bound (conservative), Opacus is exact
    assert np.all(ours._rdp[~integer] >= ref_rdp[~integer] * (1 - 1e-9))
    np.testing.assert_allclose(ours._rdp[~integer], ref_rdp[~integer], rtol=0.05)
    ref_eps, _ = opacus_rdp.get_privacy_spent(orders=orders, rdp=ref_rdp, delta=delta)
    assert ours.get_epsilon(delta) == pytest.approx(ref_eps, rel=0.02)


def test_plain_rdp_accountant_refuses_graph_events():
    event = HypergeometricGroupGaussianDpEvent(1.0, 100, 10, 3)
    assert not RdpAccountant().supports(event)
    assert GraphRdpAccountant().supports(event)


def test_ledger_fails_closed_and_reports_phases():
    ledger = Ledger(PrivacyUnit.EDGE, delta=1e-5)
    with pytest.raises(UnsupportedMechanismError):
        ledger.spend(dp_event.UnsupportedDpEvent(), phase="x")
    ledger.spend(dp_event.GaussianDpEvent(5.0), phase="selection", noise_multiplier=5.0)
    step = HypergeometricGroupGaussianDpEvent(2.0, 1000, 100, 5)
    for _ in range(10):
        ledger.spend(step, phase="training")
    report = ledger.report(target_epsilon=10)
    assert [p.name for p in report.phases] == ["selection", "training"]
    assert report.phases[1].steps == 10
    total = GraphRdpAccountant().compose(dp_event.ComposedDpEvent(
        [dp_event.GaussianDpEvent(5.0), dp_event.SelfComposedDpEvent(step, 10)])).get_epsilon(1e-5)
    assert report.epsilon == pytest.approx(total)
    assert report.epsilon > max(p.epsilon for p in report.phases)
    assert report.unit == "edge" and report.accounting == "rigorous"


def test_basic_composition_sums_epsilons_and_deltas_and_refuses_other_events():
    from graphpriv.privacy.accountant import BasicCompositionAccountant
    from graphpriv.privacy.events import ApproxDpEvent, PureDpEvent

    acc = BasicCompositionAccountant().compose(PureDpEvent(0.1), 30).compose(
        dp_event.ComposedDpEvent([PureDpEvent(0.5), dp_event.SelfComposedDpEvent(PureDpEvent(0.25), 4)]))
    assert acc.get_epsilon(0.0) == pytest.approx(0.1 * 30 + 0.5 + 1.0)
    assert acc.get_delta(4.5) == 0.0 and acc.get_delta(4.0) == 1.0
    assert not acc.supports(dp_event.GaussianDpEvent(1.0))
    assert not acc.supports(dp_event.LaplaceDpEvent(1.0))
    approx = BasicCompositionAccountant().compose(ApproxDpEvent(0.01, 1e-7), 100)
    assert approx.get_epsilon(1e-5) == pytest.approx(1.0)
    assert approx.get_epsilon(5e-6) == float("inf")  # delta not covered: no claim
    ledger = Ledger(PrivacyUnit.PROTECTED_PAIR, delta=0.0, accountant="basic")
    with pytest.raises(UnsupportedMechanismError, match="basic composition"):
        ledger.spend(dp_event.GaussianDpEvent(1.0), phase="ranking")
    ledger.spend(PureDpEvent(0.1), phase="ranking", count=30)
    report = ledger.report()
    assert report.epsilon == pytest.approx(3.0) and report.delta == 0.0 and report.accountant == "basic"
    with pytest.raises(PrivacyError, match="'delta' must be in the open interval"):
        Ledger(PrivacyUnit.EDGE, delta=0.0)  # only basic composition takes delta = 0


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
def test_bad_epsilon(bad):
    with pytest.raises(PrivacyError, match="'epsilon' must be"):
        calibrate_noise_multiplier(lambda z: dp_event.GaussianDpEvent(z), target_epsilon=bad, delta=1e-5)


@pytest.mark.parametrize("bad", [0, 1, -0.1, 2.0])
def test_bad_delta(bad):
    with pytest.raises(PrivacyError, match="'delta' must be in the open interval"):
        Ledger(PrivacyUnit.EDGE, delta=bad)


@pytest.mark.parametrize("accounting_event", ["rigorous", "paper"])
def test_calibration_meets_target_without_overspending(accounting_event):
    n, m, k, steps, target = 3000, 128, 21, 500, 4.0

    def make(z):
        if accounting_event == "paper":
            step = EffectiveRateWorGaussianDpEvent(z, effective_sampling_rate(n, k, m))
        else:
            step = HypergeometricGroupGaussianDpEvent(z, n, m, k)
        return dp_event.SelfComposedDpEvent(step, steps)

    z = calibrate_noise_multiplier(make, target_epsilon=target, delta=1e-5)
    eps = GraphRdpAccountant().compose(make(z)).get_epsilon(1e-5)
    assert eps <= target
    assert eps > 0.97 * target  # not wastefully over-noised
    assert GraphRdpAccountant().compose(make(0.97 * z)).get_epsilon(1e-5) > target


def test_unreachable_budget_is_a_clear_error():
    make = lambda z: dp_event.SelfComposedDpEvent(HypergeometricGroupGaussianDpEvent(z, 100, 100, 100), 10**6)
    with pytest.raises(BudgetExceededError, match="cannot be met.*steps"):
        calibrate_noise_multiplier(make, target_epsilon=1e-4, delta=1e-5, max_noise_multiplier=10.0)


# -- units name their relation; the ledger records and reports it ------------------------------------


def test_each_unit_names_its_relation_and_the_ledger_defaults_to_it():
    from dp_accounting.privacy_accountant import NeighboringRelation

    from graphpriv.privacy.units import describe_relation

    add, replace = NeighboringRelation.ADD_OR_REMOVE_ONE, NeighboringRelation.REPLACE_ONE
    assert PrivacyUnit.EDGE.relation is add and PrivacyUnit.NODE.relation is add
    assert PrivacyUnit.PROTECTED_PAIR.relation is replace
    for unit in PrivacyUnit:
        ledger = Ledger(unit, delta=1e-5)
        assert ledger.neighboring_relation is unit.relation
        report = ledger.report()
        assert report.neighboring_relation == unit.relation.name and report.relation == unit.description
    # a method analysed under the other relation says so, and the report states it
    bits = Ledger(PrivacyUnit.EDGE, delta=1e-5, accountant="pld", neighboring_relation=replace)
    assert bits.report().neighboring_relation == "REPLACE_ONE" and "replace-one" in bits.report().relation
    bounded = Ledger(PrivacyUnit.NODE, delta=1e-5, neighboring_relation=replace).report()
    assert "bounded" in bounded.relation and "replacing one node" in bounded.relation
    assert describe_relation("edge", add) == PrivacyUnit.EDGE.description
    with pytest.raises(PrivacyError, match="PROTECTED_PAIR|protected_pair"):
        Ledger(PrivacyUnit.PROTECTED_PAIR, delta=1e-5, neighboring_relation=add)
    with pytest.raises(PrivacyError, match="REPLACE_SPECIAL"):
        describe_relation(PrivacyUnit.NODE, NeighboringRelation.REPLACE_SPECIAL)
    # the relation reaches the accountant: the PLD accountant refuses randomized response under add/remove
    rr = dp_event.RandomizedResponseDpEvent(0.1, 2)
    with pytest.raises(UnsupportedMechanismError):
        Ledger(PrivacyUnit.EDGE, delta=1e-5, accountant="pld").spend(rr, phase="flips")
    bits.spend(rr, phase="flips")


def test_labels_name_events_in_the_report_and_merge_like_events():
    from graphpriv.privacy.events import PureDpEvent

    ledger = Ledger(PrivacyUnit.PROTECTED_PAIR, delta=0.0, accountant="basic")
    for count in (2, 3):
        ledger.spend(PureDpEvent(0.5), phase="ranking", count=count, label="exponential mechanism")
    ledger.spend(PureDpEvent(0.5), phase="ranking")
    report = ledger.report()
    assert report.phases[0].events == ["exponential mechanism x 5", "Pure(epsilon=0.5) x 1"]
    assert report.phases[0].steps == 6 and report.epsilon == pytest.approx(3.0)


def test_the_phases_accountant_composes_each_phase_apart_then_amplifies():
    from graphpriv.privacy.analysis.top_k import amplified_by_subsampling
    from graphpriv.privacy.events import GaussianRowDpEvent, TopKRowDpEvent

    q, delta = 0.2, 1e-4
    for accounting in ("rigorous", "paper"):
        ledger = Ledger(PrivacyUnit.NODE, delta=delta, accounting=accounting, accountant="phases",
                        unit_sampling_rate=q)
        ledger.spend(TopKRowDpEvent(0.05, 2), phase="rows", count=30, label="row")
        sgd = dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(1.2))
        for _ in range(50):
            ledger.spend(sgd, phase="sgd", noise_multiplier=1.2)
        share = delta / q / 2
        rows, steps = ledger.epsilon(phase="rows"), ledger.epsilon(phase="sgd")
        assert steps == GraphRdpAccountant().compose(sgd, 50).get_epsilon(share)
        inner = rows + steps
        want = amplified_by_subsampling(inner, 2 * share, q) if accounting == "rigorous" else (q * inner, q * 2 * share)
        report = ledger.report()
        assert (report.epsilon, report.delta) == pytest.approx(want, rel=1e-12)
        assert [p.epsilon for p in report.phases] == [rows, steps] and report.phases[0].events == ["row x 30"]
    # a phase keeps its accountant: rows and RDP events do not mix; Gaussian rows are RDP when rigorous
    ledger = Ledger(PrivacyUnit.NODE, delta=delta, accountant="phases", unit_sampling_rate=q)
    ledger.spend(TopKRowDpEvent(0.05, 2), phase="rows", count=3)
    with pytest.raises(UnsupportedMechanismError):
        ledger.spend(dp_event.GaussianDpEvent(1.0), phase="rows")
    ledger.spend(GaussianRowDpEvent(0.3, 0.01), phase="gm", count=4)
    gm = GraphRdpAccountant().compose(dp_event.GaussianDpEvent(0.3 / (2 * 0.01)), 4).get_epsilon(delta / q / 2)
    assert ledger.epsilon(phase="gm") == gm
    with pytest.raises(PrivacyError, match="phases"):
        Ledger(PrivacyUnit.NODE, delta=delta, unit_sampling_rate=0.5)
    with pytest.raises(PrivacyError, match="unit_sampling_rate"):
        Ledger(PrivacyUnit.NODE, delta=delta, accountant="phases", unit_sampling_rate=0.0)
    with pytest.raises(PrivacyError, match="'accountant'"):
        Ledger(PrivacyUnit.NODE, delta=delta, accountant="moments")


def test_row_composition_accountant():
    from graphpriv.privacy.analysis.row_composition import paper_rows_epsilon
    from graphpriv.privacy.analysis.top_k import compose_approx_dp, one_shot_top_k_epsilon
    from graphpriv.privacy.composition import RowCompositionAccountant
    from graphpriv.privacy.events import GaussianRowDpEvent, TopKRowDpEvent

    row = TopKRowDpEvent(0.1, 3, values=True)
    rigorous = RowCompositionAccountant().compose(dp_event.SelfComposedDpEvent(row, 20))
    per_row = 2 * one_shot_top_k_epsilon(0.1, 3, 1e-3 / 40)
    assert rigorous.get_epsilon(1e-3) == compose_approx_dp(per_row, 1e-3 / 40, 20, target_delta=1e-3)[0]
    paper = RowCompositionAccountant("paper").compose(row, 20)
    assert paper.get_epsilon(1e-3) == paper_rows_epsilon(per_row, 20, 1e-3)
    gaussian = GaussianRowDpEvent(0.5, 0.01)
    assert not RowCompositionAccountant().supports(gaussian)  # rigorous Gaussian rows compose in RDP
    assert RowCompositionAccountant("paper").supports(gaussian)
    assert not RowCompositionAccountant().supports(dp_event.GaussianDpEvent(1.0))
    assert RowCompositionAccountant().get_epsilon(1e-3) == 0.0
    with pytest.raises(Exception, match="one kind of row"):
        RowCompositionAccountant().compose(row).compose(TopKRowDpEvent(0.2, 3))
    with pytest.raises(PrivacyError, match="target_delta"):
        rigorous.get_epsilon(0.0)
    # RDP accountants: a Gaussian row is GaussianDpEvent(std / (2 C1)); a top-K row is refused
    assert GraphRdpAccountant().compose(gaussian, 7).get_epsilon(1e-5) == GraphRdpAccountant().compose(
        dp_event.GaussianDpEvent(0.5 / 0.02), 7).get_epsilon(1e-5)
    assert not GraphRdpAccountant().supports(row)


def test_memoised_step_rdp_is_the_uncached_computation_bit_for_bit():
    from dp_accounting.privacy_accountant import NeighboringRelation

    from graphpriv.privacy import accountant as module
    from graphpriv.privacy.analysis.binomial_group import binomial_group_gaussian_rdp
    from graphpriv.privacy.events import BinomialGroupGaussianDpEvent

    orders = [1.25, 1.5, 2.0, 3.0, 8.0, 32.0]
    poisson = dp_event.PoissonSampledDpEvent(0.013, dp_event.GaussianDpEvent(1.7))
    for relation in (NeighboringRelation.ADD_OR_REMOVE_ONE, NeighboringRelation.REPLACE_SPECIAL):
        plain = RdpAccountant(orders, relation).compose(poisson, 40)  # dp-accounting's own, never cached
        for _ in range(2):  # the first compose fills the cache, the second reads it
            ours = GraphRdpAccountant(orders, relation).compose(poisson, 40)
            assert np.array_equal(ours._rdp, plain._rdp)
    group = HypergeometricGroupGaussianDpEvent(2.0, 1000, 100, 5)
    binomial = BinomialGroupGaussianDpEvent(2.0, 0.05, 4)
    before = module._hypergeometric_rdp.cache_info().hits
    for _ in range(2):
        twice = GraphRdpAccountant(orders).compose(group, 3).compose(group, 2).compose(binomial, 7)
        expected = 5 * hypergeometric_group_gaussian_rdp(np.array(orders), noise_multiplier=2.0, dataset_size=1000,
                                                         batch_size=100, group_size=5)
        expected = expected + 7 * binomial_group_gaussian_rdp(np.array(orders), noise_multiplier=2.0,
                                                               sample_rate=0.05, group_size=4)
        np.testing.assert_array_equal(twice._rdp, expected)  # a cached vector is never changed in place
    assert module._hypergeometric_rdp.cache_info().hits >= before + 3
    with pytest.raises(ValueError, match="read-only"):
        module._poisson_gaussian_rdp(np.array(orders), q=0.013, noise_multiplier=1.7)[0] = 0.0
    # a parameter that cannot be hashed (a 0-d array) is computed afresh: the same numbers
    unhashable = dp_event.PoissonSampledDpEvent(0.013, dp_event.GaussianDpEvent(np.array(1.7)))
    assert np.array_equal(GraphRdpAccountant(orders).compose(unhashable, 40)._rdp, plain._rdp)
    # a relation the parent refuses for Poisson sampling is still refused
    assert not GraphRdpAccountant(orders, NeighboringRelation.REPLACE_ONE).supports(poisson)
