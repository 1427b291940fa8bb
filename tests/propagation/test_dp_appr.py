import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from graphpriv.propagation.dp_appr import column_clip, dp_appr_em, dp_appr_gaussian


def test_em_top_k_matches_the_iterated_exponential_mechanism():
    p = np.array([0.0, 0.0004, 0.0009, 0.003, 0.0002])  # the 0.003 entry is clipped to C2 = 0.001
    k, eps, c2, draws = 2, 2.0, 0.001, 40000
    rows = dp_appr_em(np.tile(p, (draws, 1)), k=k, epsilon_row=eps, c2=c2, rng=np.random.default_rng(0))
    assert np.all(np.diff(rows.indptr) == k) and np.allclose(rows.data, 1 / k)
    pairs = [tuple(rows.indices[rows.indptr[i]:rows.indptr[i + 1]]) for i in range(draws)]
    u = np.minimum(p, c2)
    w = np.exp(eps * u / (2 * c2))
    expected = {}
    for a, b in itertools.permutations(range(5), 2):  # K rounds, each exp(eps u / (2 C2)), no replacement
        prob = w[a] / w.sum() * w[b] / (w.sum() - w[a])
        expected[tuple(sorted((a, b)))] = expected.get(tuple(sorted((a, b))), 0.0) + prob
    keys = sorted(expected)
    observed = np.array([sum(1 for q in pairs if q == key) for key in keys])
    assert stats.chisquare(observed, draws * np.array([expected[key] for key in keys])).pvalue > 1e-3
    wrong = {key: (1 / len(keys)) for key in keys}  # a uniform selection is rejected
    assert stats.chisquare(observed, draws * np.array([wrong[key] for key in keys])).pvalue < 1e-6


def test_em1_values_are_clipped_values_plus_laplace():
    p = np.tile(np.array([0.5, 0.0003, 0.0]), (20000, 1))
    rows = dp_appr_em(p, k=1, epsilon_row=50.0, c2=0.001, rng=np.random.default_rng(1), values="laplace",
                      epsilon_values=1.0)
    picked = rows.indices == 0  # the clipped 0.001 entry wins almost always at this epsilon
    vals = rows.data[picked]
    assert picked.mean() > 0.5
    assert vals.mean() == pytest.approx(0.001, abs=3e-5) and vals.std() == pytest.approx(np.sqrt(2) * 0.001, rel=0.05)
    with pytest.raises(ValueError, match="epsilon_values"):
        dp_appr_em(p, k=1, epsilon_row=1.0, c2=0.001, rng=np.random.default_rng(1), values="laplace")


def test_gaussian_rows_are_clipped_to_c1():
    rng = np.random.default_rng(2)
    p = rng.random((50, 30))
    rows = dp_appr_gaussian(p, k=30, noise_std=0.0, c1=0.01, rng=rng)
    norms = np.sqrt(np.asarray(rows.multiply(rows).sum(axis=1)).ravel())
    assert np.allclose(norms, 0.01)
    top = dp_appr_gaussian(p, k=3, noise_std=0.0, c1=0.01, rng=rng)
    assert all(set(top.indices[top.indptr[i]:top.indptr[i + 1]]) == set(np.argsort(-p[i])[:3]) for i in range(50))
    with pytest.raises(ValueError, match="'k'"):
        dp_appr_gaussian(p, k=31, noise_std=1.0, c1=0.01, rng=rng)


def test_column_clip_invariant():
    pi = sp.random(40, 40, density=0.2, random_state=4, format="csr") * 3 + sp.eye(40)
    clipped = column_clip(pi, r=1.0)
    col = np.asarray(abs(clipped).sum(axis=0)).ravel()
    assert np.all(col <= 1.0 + 1e-12)
    small = np.asarray(abs(pi).sum(axis=0)).ravel() <= 1.0
    assert np.allclose(clipped.toarray()[:, small], pi.toarray()[:, small])  # columns within r untouched
    with pytest.raises(ValueError, match="'r'"):
        column_clip(pi, r=0.0)
