"""DPLP-rank core: scores against brute force, the sensitivity bound on u-neighbouring graphs,
quadrature, monotone transforms, Gumbel top-K = iterated exponential mechanism, metrics, protocol."""

import itertools
import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
import torch
from scipy import stats

from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.nn.monotone import (
    PowerTransform,
    UMNNTransform,
    apply_transform,
    check_monotone,
    clenshaw_curtis,
)
from graphpriv.privacy.mechanisms import rank_within_queries, staircase_noise
from graphpriv.ranking.metrics import auc_at_k, precision_at_k, ranking_auc
from graphpriv.ranking.protocol import ranking_split, triangle_counts
from graphpriv.ranking.scores import score_range, triad_scores
from graphpriv.ranking.training import QueryPairs, noise_scale, train_transform
from graphpriv.testing.graphs import random_graph


def _nx(adj):
    return nx.from_scipy_sparse_array(sp.csr_matrix(adj))


@pytest.mark.parametrize("score", ["cn", "aa", "jc", "pa"])
def test_triad_scores_equal_networkx(score):
    data = random_graph(40, 0.15, seed=3)
    adj = to_csr(undirected_pairs(data.edge_index), 40)
    g = _nx(adj)
    rows, cols = np.array([0, 0, 5, 7, 7, 12, 39]), np.array([1, 9, 6, 8, 30, 13, 2])
    ours = triad_scores(adj, rows, cols, score, degree_cap=1e9, block=2)
    ebunch = list(zip(rows.tolist(), cols.tolist()))
    if score == "cn":
        ref = [len(list(nx.common_neighbors(g, u, v))) for u, v in ebunch]
    else:
        fn = {"aa": nx.adamic_adar_index, "jc": nx.jaccard_coefficient, "pa": nx.preferential_attachment}[score]
        ref = [p for _, _, p in fn(g, ebunch)]
    np.testing.assert_allclose(ours, ref, rtol=1e-12)


def test_pa_needs_a_degree_cap_and_clips_to_it():
    adj = to_csr(np.array([[0, 0, 0], [1, 2, 3]]), 4)
    with pytest.raises(ValueError, match="degree cap"):
        triad_scores(adj, np.array([0]), np.array([1]), "pa")
    assert triad_scores(adj, np.array([1]), np.array([0]), "pa", degree_cap=2)[0] == 2.0  # 1 * min(3, 2)


def _u_neighbours(pairs, protected, u):
    """Every graph that differs from ``pairs`` only in the protected pairs of one w != u, other
    than (w, u): w's protected partners are fixed, each of those pairs present or absent."""
    edges = {tuple(p) for p in pairs.T.tolist()}
    prot = {tuple(p) for p in protected.T.tolist()}
    nodes = sorted({x for p in prot for x in p})
    for w in nodes:
        if w == u:
            continue
        mine = [p for p in prot if w in p and u not in p]
        for keep in itertools.product([False, True], repeat=len(mine)):
            out = (edges - set(mine)) | {p for p, k in zip(mine, keep) if k}
            yield np.array(sorted(out)).T


@pytest.mark.parametrize("score", ["cn", "aa", "jc"])
def test_sensitivity_bound_holds_on_every_u_neighbouring_graph(score):
    # Brute force: toggle the protected pairs of every other node; the scaled score s / s_max,u
    # stays in [0, 1], so |f(s) - f(s')| <= f(1) - f(0) = Delta for a monotone f.
    rng = np.random.default_rng(0)
    data = random_graph(9, 0.55, seed=5)
    pairs = undirected_pairs(data.edge_index)
    protected = pairs[:, rng.random(pairs.shape[1]) < 0.5]
    f = UMNNTransform(PowerTransform(num_powers=20))
    with torch.no_grad():
        f.integrand[0].weight.normal_()
        delta = float(noise_scale(f, 2.0, "rigorous"))  # 2 Delta / eps with eps = 2: Delta
    n = 9
    worst = 0.0
    for u in range(n):
        cand = np.array([v for v in range(n) if v != u])
        deg_u = to_csr(pairs, n)[u].sum()
        _, s_max = score_range(score, np.array([deg_u]))
        base = triad_scores(to_csr(pairs, n), np.full(cand.size, u), cand, score) / s_max[0]
        for other in _u_neighbours(pairs, protected, u):
            adj = to_csr(other, n)
            assert adj[u].sum() == deg_u  # u's own pairs never change
            s = triad_scores(adj, np.full(cand.size, u), cand, score) / s_max[0]
            assert s.min() >= 0 and s.max() <= 1 + 1e-12
            with torch.no_grad():
                diff = (f(torch.from_numpy(s)) - f(torch.from_numpy(base))).abs().max()
            worst = max(worst, float(diff))
    assert 0 < worst <= delta + 1e-9


def test_clenshaw_curtis_is_exact_for_polynomials():
    x, w = clenshaw_curtis(50)
    for deg in (0, 1, 4, 17, 50):
        exact = 0.0 if deg % 2 else 2.0 / (deg + 1)
        assert float((w * x ** deg).sum()) == pytest.approx(exact, abs=1e-12)
    x, w = clenshaw_curtis(7)
    assert float((w * x ** 6).sum()) == pytest.approx(2 / 7, abs=1e-12)


def test_umnn_integral_matches_the_integrand_and_is_monotone():
    torch.manual_seed(0)
    f = UMNNTransform(PowerTransform(num_powers=5))
    with torch.no_grad():
        f.integrand[0].weight.normal_(std=3.0)
        f.b0.fill_(0.7)
    upper = torch.tensor([0.0, 0.3, 2.0], dtype=torch.float64)
    from scipy.integrate import quad

    with torch.no_grad():
        ours = f.integral(upper)
        for i, hi in enumerate(upper.tolist()):  # the ReLU kinks limit quadrature to ~1e-5
            ref = quad(lambda t: float(f.g(torch.tensor([t], dtype=torch.float64))), 0.0, hi, limit=200)[0]
            assert float(ours[i]) == pytest.approx(ref, rel=1e-4, abs=1e-12)
    with torch.no_grad():
        assert float(f(torch.zeros(1, dtype=torch.float64))) == pytest.approx(0.7)
    assert check_monotone(f, 1.0)
    with torch.no_grad():  # and the check can fail: a decreasing function
        assert not check_monotone(lambda s: -f(s), 1.0)


def _fixed_noise_loss(f, queries, epsilon_p, margin=0.1, draws=20):
    """Eq. 5 averaged over the queries with the same Gumbel draws every time it is called."""
    gen = torch.Generator().manual_seed(123)
    total = 0.0
    with torch.no_grad():
        c = noise_scale(f, epsilon_p, "rigorous")
        for q in queries:
            s = torch.from_numpy(np.concatenate([q.positive, q.negative]))
            u = f(s)
            for _ in range(draws):
                g = -torch.log(-torch.log(torch.rand(s.numel(), generator=gen, dtype=torch.float64)))
                noisy = u + c * g
                p = q.positive.size
                total += float(torch.relu(margin + noisy[p:].unsqueeze(0) - noisy[:p].unsqueeze(1)).mean())
    return total / (len(queries) * draws)


def test_training_lowers_the_ranking_loss_and_keeps_f_monotone():
    # Positives score higher on average; training lowers Eq. 5's loss (measured with fixed noise
    # draws) for both transforms, and f stays monotone.
    rng = np.random.default_rng(0)
    queries = [QueryPairs(np.clip(rng.normal(0.6, 0.15, 8), 0, 1), np.clip(rng.normal(0.3, 0.15, 60), 0, 1))
               for _ in range(30)]
    torch.manual_seed(0)
    for f in (PowerTransform(num_powers=20, tau=1.0), UMNNTransform(PowerTransform(num_powers=20, tau=1.0))):
        before = _fixed_noise_loss(f, queries, 5.0)
        train_transform(f, queries, epsilon_p=5.0, epochs=5, seed=0)
        after = _fixed_noise_loss(f, queries, 5.0)
        assert after < 0.8 * before, (before, after)
        assert check_monotone(f, 1.0)


def test_paper_noise_scale_is_not_translation_invariant():
    f = UMNNTransform(PowerTransform(num_powers=3))
    with torch.no_grad():
        rigorous = float(noise_scale(f, 0.5, "rigorous"))
        f.b0.fill_(-float(f(torch.ones(1, dtype=torch.float64))))  # f(1) = 0
        assert float(noise_scale(f, 0.5, "rigorous")) == pytest.approx(rigorous)
        assert float(noise_scale(f, 0.5, "paper")) == pytest.approx(0.0, abs=1e-9)


def test_gumbel_top_k_matches_the_iterated_exponential_mechanism():
    # Chi-square: ordered top-2 lists of 4 items, Gumbel top-k vs the product of softmax draws.
    utilities = np.array([1.0, 0.4, 0.1, 0.0])
    scale = 0.5  # 2 Delta / eps
    rng = np.random.default_rng(1)
    draws = 40000
    noisy = utilities + scale * rng.gumbel(size=(draws, 4))
    top2 = np.argsort(-noisy, axis=1)[:, :2]
    lists = list(itertools.permutations(range(4), 2))
    observed = np.array([np.sum((top2[:, 0] == a) & (top2[:, 1] == b)) for a, b in lists])
    w = np.exp(utilities / scale)
    expected = np.array([w[a] / w.sum() * w[b] / (w.sum() - w[a]) for a, b in lists]) * draws
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    # and a wrong scale is rejected: the test can fail
    w2 = np.exp(utilities / (2 * scale))
    wrong = np.array([w2[a] / w2.sum() * w2[b] / (w2.sum() - w2[a]) for a, b in lists]) * draws
    assert stats.chisquare(observed, wrong).pvalue < 1e-6


def _staircase_cdf(eps, d):
    gamma = 1 / (1 + math.exp(eps / 2))
    b = math.exp(-eps)
    a = (1 - b) / (2 * d * (gamma + (1 - gamma) * b))

    def cdf_pos(t):  # P(0 <= X <= t), t >= 0, from the staircase density
        k = math.floor(t / d)
        full = sum(a * d * (gamma + (1 - gamma) * b) * b ** j for j in range(k))
        r = t - k * d
        return full + a * b ** k * min(r, gamma * d) + a * b ** (k + 1) * max(0.0, r - gamma * d)

    return np.vectorize(lambda t: 0.5 + cdf_pos(t) if t >= 0 else 0.5 - cdf_pos(-t))


def test_staircase_noise_follows_its_cdf():
    x = staircase_noise(50000, epsilon=1.0, sensitivity=2.0, rng=np.random.default_rng(0))
    assert stats.kstest(x, _staircase_cdf(1.0, 2.0)).pvalue > 1e-3
    assert stats.kstest(x, _staircase_cdf(1.5, 2.0)).pvalue < 1e-6  # the test can tell epsilons apart


def test_metrics_known_values():
    assert auc_at_k(np.array([1, 0, 1, 0, 1]), 4) == pytest.approx(3 / 4)  # pairs: (1>0 x2), (1>0 x1) of 4
    assert auc_at_k(np.array([0, 0, 1]), 2) == 0.0 and auc_at_k(np.array([1, 1, 0]), 2) == 1.0
    assert precision_at_k(np.array([1, 0, 1]), 2) == 0.5 and precision_at_k(np.array([1]), 4) == 0.25
    assert ranking_auc(np.array([1, 0, 1, 0]), np.array([0.9, 0.8, 0.3, 0.1])) == pytest.approx(0.75)
    with pytest.raises(ValueError):
        auc_at_k(np.array([2, 0]), 1)
    order = rank_within_queries(np.array([0, 3, 5]), np.array([0.1, 0.9, 0.5, 0.2, 0.3]), np.random.default_rng(0))
    assert order.tolist() == [1, 2, 0, 4, 3]


def test_ties_are_broken_uniformly_at_random():
    # a constant utility (collapsed transform, noise scale 0): every order of a query is equally likely
    rng = np.random.default_rng(0)
    firsts = [rank_within_queries(np.array([0, 4]), np.zeros(4), rng)[0] for _ in range(4000)]
    assert stats.chisquare(np.bincount(firsts, minlength=4)).pvalue > 1e-3
    data = random_graph(80, 0.12, seed=2)
    split = ranking_split(data, seed=0)
    labels = split.test_labels[split.test_ptr[0]:split.test_ptr[1]]
    assert not np.all(np.diff(labels) <= 0)  # not stored positives first


def test_protocol_invariants():
    data = random_graph(80, 0.12, seed=2)
    split = ranking_split(data, seed=0)
    full = split.full
    assert (split.train - split.train.multiply(full)).nnz == 0  # training graph inside G
    assert (split.public - split.public.multiply(split.train)).nnz == 0
    tri = triangle_counts(full)
    assert tri.sum() == sum(nx.triangles(_nx(full)).values())
    for i, q in enumerate(split.queries):
        nodes, labels = split.test_of(i)
        assert labels.any() and not labels.all()
        assert (full[q, nodes].toarray().ravel() == labels).all()  # labels are G's edges
        assert split.train[q, nodes].sum() == 0  # no held-out edge is visible in training
        pos, neg = split.training_pairs(i)
        assert not np.isin(neg, nodes).any() and full[q, neg].sum() == 0 and q not in neg
        assert split.public[q, pos].toarray().all()
    assert not split.public.multiply(to_csr(split.protected, split.num_nodes)).nnz


def test_rigorous_training_pairs_see_protected_neighbours_as_non_neighbours():
    # Rigorous ('public') training pairs are decided by the public graph alone: a protected
    # neighbour of the query is a candidate negative like any non-neighbour, so the pairs are the
    # same whether that protected edge exists or not; the paper's ('full') negatives exclude it.
    data = random_graph(60, 0.15, seed=7)
    split = ranking_split(data, seed=1)
    i = 0
    q = split.queries[i]
    prot_nbrs = [v for v in split.train.indices[split.train.indptr[q]:split.train.indptr[q + 1]]
                 if not split.public[q, v]]
    assert prot_nbrs, "the query needs a protected training neighbour for this test"
    pos, neg = split.training_pairs(i, known="public")
    assert set(prot_nbrs) <= set(neg.tolist())  # protected neighbours look like any non-neighbour
    _, neg_full = split.training_pairs(i, known="full")
    assert not set(prot_nbrs) & set(neg_full.tolist())
    assert set(pos.tolist()).isdisjoint(prot_nbrs)


def test_power_transform_equals_its_definition():
    torch.manual_seed(0)
    f = PowerTransform()
    with torch.no_grad():
        f.beta.normal_(std=50.0)
    s = torch.tensor([0.0, 1e-9, 0.013, 0.5, 1.0, 3.7], dtype=torch.float64)
    a = 0.5 + torch.arange(170, dtype=torch.float64) / 100
    ref = (torch.exp(0.01 * f.beta) * s.unsqueeze(-1).pow(a)).sum(-1)
    with torch.no_grad():
        assert torch.allclose(f(s), ref, rtol=1e-12, atol=0)


def test_apply_transform_in_chunks_equals_one_call():
    torch.manual_seed(0)
    f = UMNNTransform(PowerTransform(), hidden=5, quadrature=8)
    s = np.random.default_rng(0).random(1001)
    with torch.no_grad():
        whole = f(torch.from_numpy(s)).numpy()
    for chunk in (1, 7, 1000, 5000):
        assert np.allclose(apply_transform(f, s, chunk_size=chunk), whole, rtol=1e-12, atol=0)  # BLAS order
    assert apply_transform(f, np.zeros(0)).shape == (0,)
    with pytest.raises(ValueError, match="chunk_size"):
        apply_transform(f, s, chunk_size=0)


def test_ranking_auc_equals_sklearn_with_ties():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 200)
    scores = rng.integers(0, 5, 200).astype(float)  # many ties
    assert ranking_auc(labels, scores) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
