import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from graphpriv.propagation.dp_appr import (
    cap_rows_per_node,
    column_clip,
    dp_appr_em,
    dp_appr_gaussian,
    rows_per_node,
)


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


def _random_pi(rng, n=12, density=0.25):
    pi = sp.random(n, n, density=density, random_state=rng, format="csr")
    pi.data[:] = rng.random(pi.nnz) + 0.1
    return pi


def test_rows_per_node_against_brute_force_feature_influence():
    """m bounds how many training rows change when one node's features change (the DP-SGD group)."""
    import torch

    from graphpriv.nn.decoupled import DecoupledModel, feature_mlp, padded_rows

    rng = np.random.default_rng(3)
    for trial in range(5):
        pi = _random_pi(rng)
        index, weight = (torch.from_numpy(a) for a in padded_rows(pi))
        torch.manual_seed(trial)
        model = DecoupledModel(feature_mlp(4, 8, 3)).eval()
        x = torch.randn(pi.shape[0], 4)
        base = model(x[index], weight)
        reached = []
        for j in range(pi.shape[0]):
            moved = x.clone()
            moved[j] += 5.0
            changed = (model(moved[index], weight) - base).abs().sum(1) > 1e-6
            changed[j] = True  # its own row (label and existence) always changes
            reached.append(int(changed.sum()))
        assert rows_per_node(pi) == max(reached)


def test_cap_rows_per_node_keeps_own_and_largest_entries():
    rng = np.random.default_rng(4)
    pi = _random_pi(rng, n=15, density=0.4).tolil()
    pi.setdiag(0.5)
    pi = sp.csr_matrix(pi)
    for cap in (1, 2, 3):
        out = cap_rows_per_node(pi, cap)
        assert rows_per_node(out) <= cap
        dense, kept = pi.toarray(), out.toarray()
        assert np.allclose(np.diag(kept), np.diag(dense))  # own entries stay
        for j in range(dense.shape[1]):
            others = [v for v in range(dense.shape[0]) if v != j and dense[v, j] != 0]
            expected = sorted(others, key=lambda v: (-abs(dense[v, j]), v))[:cap - 1]
            assert sorted(v for v in range(dense.shape[0]) if v != j and kept[v, j] != 0) == sorted(expected)
            assert np.allclose(kept[expected, j], dense[expected, j])
    with pytest.raises(ValueError, match="max_rows"):
        cap_rows_per_node(pi, 0)
    with pytest.raises(ValueError, match="square"):
        rows_per_node(sp.csr_matrix((2, 3)))
