"""TmF's mechanism: the threshold (closed forms, the design note's numbers), sensitivities by brute
force, the exact output distribution's privacy loss, the samplers against their closed-form laws."""

import itertools
import math

import numpy as np
import pytest
from dp_accounting import dp_event
from scipy import stats

from graphpriv.data.graph import pair_codes
from graphpriv.synthesis import top_m_filter as tmf
from graphpriv.synthesis.top_m_filter import (
    distinct_uniform,
    laplace_survival,
    noisy_edge_count,
    pass_probabilities,
    threshold_cells,
    tmf_threshold,
    top_m_cells,
    top_m_filter,
)

# -- the threshold ---------------------------------------------------------------------------------


def closed_form_theta(P: int, M: int, eps: float) -> float:
    """The authors' two branches (filterLaplace), and the theta < 0 branch of M > P/2."""
    eps_t = math.log(P / M - 1) if M < P / 2 else None
    if M < P / 2 and eps <= eps_t:
        return math.log(P / (2 * M) + (math.exp(eps) - 1) / 2) / eps  # theta >= 1
    theta = 0.5 + math.log(P / M - 1) / (2 * eps)
    if theta >= 0:
        return theta  # 0 <= theta <= 1
    return math.log(2 * (P - M) / ((P - M) + M * math.exp(-eps))) / eps  # theta < 0


@pytest.mark.parametrize("P,M,eps", [
    (180_490_500, 800_000, 0.5), (180_490_500, 800_000, 5.0), (180_490_500, 800_000, 5.5),  # both sides of eps_t
    (180_490_500, 800_000, 30.0), (1000, 10, 0.01), (1000, 10, 4.6), (1000, 10, 4.7), (1000, 499, 1.0),
    (1000, 500, 1.0), (1000, 700, 0.2), (1000, 700, 3.0), (1000, 999, 0.001), (6, 1, 1.0), (6, 5, 1.0),
    (10**12, 1, 0.1), (10, 3, 100.0),
])
def test_threshold_matches_the_closed_forms(P, M, eps):
    theta = tmf_threshold(P, M, eps)
    assert theta == pytest.approx(closed_form_theta(P, M, eps), rel=1e-9, abs=1e-9)
    p0, p1 = pass_probabilities(theta, eps)
    assert M * (1 - p1) == pytest.approx((P - M) * p0, rel=1e-8)  # the defining balance


def test_the_branches_meet_at_eps_t():
    P, M = 1000, 10
    eps_t = math.log(P / M - 1)
    assert tmf_threshold(P, M, eps_t) == pytest.approx(1.0, abs=1e-9)  # both closed forms give theta = 1
    assert tmf_threshold(P, P // 2, 3.0) == pytest.approx(0.5, abs=1e-12)  # M = P/2: theta = 1/2 at any eps


@pytest.mark.parametrize("eps,theta,p1", [(0.5, 9.46, 0.007), (1, 4.73, 0.012), (2, 2.38, 0.032), (4, 1.24, 0.196),
                                          (8, 0.84, 0.863), (16, 0.67, 0.998)])
def test_the_design_notes_table(eps, theta, p1):
    """generators.md §1.1: n = 19k (19,000 nodes), m~ = 800k, theta and p1 by eps1. At eps1 = 4 the note rounds
    theta = 1.2347 up to 1.24 and p1 = 0.19549 to 0.196, at 16 p1 = 0.99749 to 0.998 (rounded twice), hence the
    tolerances of a little over half a unit of the note's last digit."""
    n = 19_000
    got = tmf_threshold(n * (n - 1) // 2, 800_000, eps)
    assert got == pytest.approx(theta, abs=5.5e-3)
    assert pass_probabilities(got, eps)[1] == pytest.approx(p1, abs=6e-4)


def test_laplace_survival_known_values():
    assert laplace_survival(0.0, 3.0) == 0.5
    assert laplace_survival(math.log(2), 1.0) == pytest.approx(0.25)
    assert laplace_survival(-math.log(2), 1.0) == pytest.approx(0.75)
    assert laplace_survival(math.inf, 1.0) == 0.0 and laplace_survival(-math.inf, 1.0) == 1.0
    assert pass_probabilities(1.0, 2.0) == pytest.approx((0.5 * math.exp(-2.0), 0.5))


@pytest.mark.parametrize("P,M", [(1, 1), (10, 0), (10, 10)])
def test_threshold_refuses_targets_outside_the_cells(P, M):
    with pytest.raises(ValueError, match="need 0 < target < num_pairs"):
        tmf_threshold(P, M, 1.0)


# -- sensitivities by brute force ------------------------------------------------------------------

N4 = 4
CELLS4 = list(itertools.combinations(range(N4), 2))  # the 6 cells, in pair-code order


def _cell_vector(edges: frozenset) -> np.ndarray:
    return np.array([c in edges for c in CELLS4], dtype=float)


def test_edge_count_and_cell_vector_have_l1_sensitivity_one():
    """Every graph on 4 nodes and every added edge: m moves by 1, the adjacency cells by 1 in L1."""
    worst_count = worst_cells = 0.0
    for k in range(len(CELLS4) + 1):
        for edges in itertools.combinations(CELLS4, k):
            g = frozenset(edges)
            for e in set(CELLS4) - g:
                h = g | {e}
                worst_count = max(worst_count, abs(len(h) - len(g)))
                worst_cells = max(worst_cells, np.abs(_cell_vector(h) - _cell_vector(g)).sum())
    assert worst_count == 1 and worst_cells == 1
    assert [tuple(p) for p in np.array(CELLS4).T.T] == CELLS4
    assert list(pair_codes(np.array(CELLS4).T, N4)) == list(range(6))


# -- the exact output distribution of the threshold mode -------------------------------------------


def _laplace_cdf(x: float, scale: float) -> float:
    return 0.5 * math.exp(x / scale) if x < 0 else 1 - 0.5 * math.exp(-x / scale)


def _count_law(m: int, P: int, eps2: float) -> dict[int, float]:
    """P(M = k) for M = clip(rint(m + Lap(1/eps2)), 1, P - 1)."""
    b = 1 / eps2
    law = {}
    for k in range(1, P):
        lo = -math.inf if k == 1 else k - 0.5 - m
        hi = math.inf if k == P - 1 else k + 0.5 - m
        law[k] = (_laplace_cdf(hi, b) if hi < math.inf else 1.0) - (_laplace_cdf(lo, b) if lo > -math.inf else 0.0)
    return law


def _threshold_law(edges: frozenset, eps1: float, eps2: float) -> dict[frozenset, float]:
    """The probability of every output of the threshold mode on 4 nodes, in closed form: the count law,
    then independent Bernoulli(p1) on the edge cells and Bernoulli(p0) on the others."""
    P = len(CELLS4)
    out = dict.fromkeys((frozenset(o) for k in range(P + 1) for o in itertools.combinations(CELLS4, k)), 0.0)
    for M, pm in _count_law(len(edges), P, eps2).items():
        p0, p1 = pass_probabilities(tmf_threshold(P, M, eps1), eps1)
        for o in out:
            pr = pm
            for c in CELLS4:
                p = p1 if c in edges else p0
                pr *= p if c in o else 1 - p
            out[o] += pr
    return out


def _max_log_ratio(a: dict, b: dict) -> float:
    worst = 0.0
    for o in set(a) | set(b):
        x, y = a.get(o, 0.0), b.get(o, 0.0)
        if x == 0.0 and y == 0.0:
            continue
        if x == 0.0 or y == 0.0:
            return math.inf
        worst = max(worst, abs(math.log(x / y)))
    return worst


@pytest.mark.parametrize("eps1,eps2", [(1.0, 1.0), (2.7, 0.3)])
def test_threshold_mode_output_distribution_is_pure_dp(eps1, eps2):
    """Every graph on 4 nodes and every added edge: max |ln P_G(O) / P_G+e(O)| <= eps1 + eps2."""
    laws = {}
    for k in range(len(CELLS4) + 1):
        for edges in itertools.combinations(CELLS4, k):
            laws[frozenset(edges)] = _threshold_law(frozenset(edges), eps1, eps2)
    worst = max(_max_log_ratio(law, laws[g | {e}]) for g, law in laws.items() for e in set(CELLS4) - g)
    assert all(abs(sum(law.values()) - 1) < 1e-12 for law in laws.values())
    assert worst <= eps1 + eps2 + 1e-9
    assert worst > 0.5 * (eps1 + eps2)  # the check sees the privacy loss (it is not vacuous)


def _paper_fill_law(edges: frozenset, M: int, eps1: float) -> dict[frozenset, float]:
    """The paper's completion given M: n1 edges pass with p1, then exactly max(M - n1, 0) uniform non-edges."""
    _, p1 = pass_probabilities(tmf_threshold(len(CELLS4), M, eps1), eps1)
    zeros = [c for c in CELLS4 if c not in edges]
    out: dict[frozenset, float] = {}
    for k in range(len(edges) + 1):
        for kept in itertools.combinations(sorted(edges), k):
            pk = p1 ** k * (1 - p1) ** (len(edges) - k)
            fill = max(M - k, 0)
            for added in itertools.combinations(zeros, fill):
                o = frozenset(kept) | frozenset(added)
                out[o] = out.get(o, 0.0) + pk / math.comb(len(zeros), fill)
    return out


def test_the_papers_fill_is_not_dp_negative_control():
    """Documented negative test (design note §1.3): with M fixed, the threshold mode's loss is within
    eps1 while the paper's 'exactly M - n1 uniform non-edges' completion has an infinite loss, which is why
    graphpriv does not offer it."""
    eps1, M = 1.0, 2
    g = frozenset({(0, 1), (0, 2), (0, 3)})
    h = g | {(1, 2)}

    def fixed_threshold_law(edges):
        p0, p1 = pass_probabilities(tmf_threshold(len(CELLS4), M, eps1), eps1)
        law = {}
        for k in range(len(CELLS4) + 1):
            for o in itertools.combinations(CELLS4, k):
                pr = 1.0
                for c in CELLS4:
                    p = p1 if c in edges else p0
                    pr *= p if c in o else 1 - p
                law[frozenset(o)] = pr
        return law

    assert _max_log_ratio(fixed_threshold_law(g), fixed_threshold_law(h)) <= eps1 + 1e-9
    assert _max_log_ratio(_paper_fill_law(g, M, eps1), _paper_fill_law(h, M, eps1)) > eps1


def test_the_sampler_draws_the_closed_form_law():
    """top_m_filter (threshold mode) on a 4-node graph, 6000 releases: chi-square against the exact law."""
    edges = frozenset({(0, 1), (1, 2), (2, 3)})
    pairs = np.array(sorted(edges)).T
    law = _threshold_law(edges, 1.0, 1.0)
    rng = np.random.default_rng(11)
    draws = 6000
    counts = dict.fromkeys(law, 0)
    for _ in range(draws):
        out, _, _ = top_m_filter(pairs, N4, epsilon=2.0, count_fraction=0.5, rng=rng)
        counts[frozenset(map(tuple, out.T.tolist()))] += 1
    keys = sorted(law, key=law.get)
    expected = np.array([law[k] * draws for k in keys])
    observed = np.array([counts[k] for k in keys])
    small = np.cumsum(expected) < 20  # pool the rarest outputs into one bin
    exp_b = np.append(expected[~small], expected[small].sum())
    obs_b = np.append(observed[~small], observed[small].sum())
    assert stats.chisquare(obs_b, exp_b).pvalue > 1e-4


def test_kept_and_non_edge_rates_match_p1_and_p0():
    rng = np.random.default_rng(3)
    n = 300
    codes = np.unique(rng.choice(n * (n - 1) // 2, size=3000, replace=False))
    P, m = n * (n - 1) // 2, codes.size
    kept = added = 0
    reps = 20
    for _ in range(reps):
        out, info = threshold_cells(codes, n, target=m, epsilon=3.0, rng=rng)
        is_edge = np.isin(out, codes)
        kept += int(is_edge.sum())
        added += int((~is_edge).sum())
        assert np.unique(out).size == out.size
    p0, p1 = info["p_non_edge"], info["p_edge"]
    assert info["theta"] == pytest.approx(tmf_threshold(P, m, 3.0))
    assert 0.2 < p1 < 0.8  # a regime where both rates are measured well
    assert abs(kept / (reps * m) - p1) < 4 * math.sqrt(p1 * (1 - p1) / (reps * m))
    assert abs(added / reps - (P - m) * p0) < 4 * math.sqrt((P - m) * p0 / reps)


# -- the exact top-M mode ----------------------------------------------------------------------------


def test_top_m_matches_the_full_noisy_matrix():
    """top_m_cells against a brute-force top-M of the whole noisy matrix on 4 nodes (6 cells)."""
    codes = np.array([0, 1, 5])  # (0,1), (0,2), (2,3)
    M, eps, draws = 2, 1.0, 4000
    rng = np.random.default_rng(5)
    ours = [tuple(sorted(top_m_cells(codes, N4, target=M, epsilon=eps, rng=rng).tolist())) for _ in range(draws)]
    assert all(len(set(o)) == M for o in ours)
    values = rng.laplace(0, 1 / eps, size=(draws, 6))
    values[:, codes] += 1
    brute = [tuple(sorted(row)) for row in np.argsort(-values, axis=1)[:, :M].tolist()]
    subsets = sorted(set(ours) | set(brute))
    table = np.array([[ours.count(s) for s in subsets], [brute.count(s) for s in subsets]])
    assert stats.chi2_contingency(table).pvalue > 1e-4


def test_top_laplace_order_statistics_are_the_largest_of_the_population():
    rng = np.random.default_rng(8)
    K, population, eps, reps = 3, 40, 0.7, 3000
    ours = np.array([tmf._top_laplace_order_statistics(K, population, eps, rng) for _ in range(reps)])
    assert (np.diff(ours, axis=1) <= 0).all()  # descending
    brute = -np.sort(-rng.laplace(0, 1 / eps, size=(reps, population)), axis=1)[:, :K]
    for k in range(K):
        assert stats.ks_2samp(ours[:, k], brute[:, k]).pvalue > 1e-4
    # the dense case (K above half the population) uses 1 - s without cancellation
    full = np.array([tmf._top_laplace_order_statistics(population, population, eps, rng) for _ in range(reps)])
    assert stats.ks_2samp(full[:, -1], -np.sort(-rng.laplace(0, 1 / eps, size=(reps, population)))[:, -1]).pvalue > 1e-4


# -- uniform distinct draws ------------------------------------------------------------------------------


@pytest.mark.parametrize("population,count", [(10, 3), (10, 8), (10, 0), (10, 10)])
def test_distinct_uniform_is_a_uniform_subset(population, count):
    rng = np.random.default_rng(1)
    reps = 4000
    hits = np.zeros(population)
    for _ in range(reps):
        x = distinct_uniform(population, count, rng)
        assert x.size == count and np.unique(x).size == count and (np.diff(x) > 0).all()
        assert x.dtype == np.int64 and (x.size == 0 or 0 <= x.min() <= x.max() < population)
        hits[x] += 1
    rate = count / population
    assert np.abs(hits / reps - rate).max() < 4 * math.sqrt(max(rate * (1 - rate), 1e-12) / reps) + 1e-12


def test_distinct_uniform_scales_with_the_count_not_the_population():
    x = distinct_uniform(2**60, 100_000, np.random.default_rng(0))
    assert x.size == 100_000 and np.unique(x).size == 100_000 and x.max() > 2**59
    with pytest.raises(ValueError, match="cannot draw 11 distinct values from 10"):
        distinct_uniform(10, 11, np.random.default_rng(0))


# -- the whole mechanism -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["threshold", "topm"])
def test_top_m_filter_release_and_events(mode):
    rng = np.random.default_rng(2)
    n = 60
    codes = np.unique(rng.choice(n * (n - 1) // 2, size=150, replace=False))
    from graphpriv.data.graph import decode_pairs

    pairs = decode_pairs(codes, n)
    out, events, info = top_m_filter(pairs, n, epsilon=5.0, count_fraction=0.2, mode=mode, rng=rng)
    assert out.dtype == np.int64 and out.shape[0] == 2 and (out[0] < out[1]).all() and out.max() < n
    out_codes = pair_codes(out, n)
    assert (np.diff(out_codes) > 0).all()  # sorted by pair code, distinct
    assert events == [("edge count", dp_event.LaplaceDpEvent(1 / 1.0)), ("cells", dp_event.LaplaceDpEvent(1 / 4.0))]
    assert info["eps_count"] == pytest.approx(1.0) and info["eps_cells"] == pytest.approx(4.0)
    assert info["released_edges"] == out.shape[1] and 1 <= info["noisy_edge_count"] < n * (n - 1) // 2
    if mode == "topm":
        assert out.shape[1] == info["noisy_edge_count"]
    else:
        assert set(info) >= {"theta", "p_edge", "p_non_edge"}
    rng2 = np.random.default_rng(2)
    rng2.choice(n * (n - 1) // 2, size=150, replace=False)
    same, _, _ = top_m_filter(pairs, n, epsilon=5.0, count_fraction=0.2, mode=mode, rng=rng2)
    assert np.array_equal(same, out)  # a function of the generator's state


def test_noisy_edge_count_is_clipped_and_its_event():
    rng = np.random.default_rng(0)
    counts = [noisy_edge_count(0, 6, epsilon=0.05, rng=rng)[0] for _ in range(300)]
    assert min(counts) == 1 and max(counts) == 5
    assert noisy_edge_count(3, 6, epsilon=1e6, rng=rng) == (3, dp_event.LaplaceDpEvent(1e-6))


@pytest.mark.parametrize("kwargs,match", [
    ({"epsilon": 0.0}, "'epsilon' must be a finite number > 0"),
    ({"epsilon": -1.0}, "'epsilon' must be a finite number > 0"),
    ({"count_fraction": 0.0}, r"'count_fraction' must be in \(0, 1\)"),
    ({"count_fraction": 1.0}, r"'count_fraction' must be in \(0, 1\)"),
    ({"mode": "fill"}, "'mode' must be one of threshold, topm"),
    ({"num_nodes": 2}, "TmF needs at least 3 nodes"),
    ({"pairs": np.array([[1], [0]])}, "'pairs' must be u < v node pairs"),
    ({"pairs": np.array([[0, 0], [1, 1]])}, "'pairs' must be distinct"),
])
def test_top_m_filter_bad_arguments(kwargs, match):
    args = {"pairs": np.array([[0], [1]]), "num_nodes": 4, "epsilon": 1.0, "count_fraction": 0.1, "mode": "threshold",
            **kwargs}
    with pytest.raises(ValueError, match=match):
        top_m_filter(args.pop("pairs"), args.pop("num_nodes"), rng=np.random.default_rng(0), **args)
