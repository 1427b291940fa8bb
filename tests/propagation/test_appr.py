import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from graphpriv.propagation.appr import appr_ista


def _graph(seed=0, n=40):
    g = nx.connected_watts_strogatz_graph(n, 4, 0.3, seed=seed)
    g.add_node(n)  # an isolated node: only its self-loop
    return sp.csr_matrix(nx.to_scipy_sparse_array(g, nodelist=range(n + 1)))


def test_without_l1_ista_equals_the_dense_lazy_pagerank_solve():
    adj = _graph()
    n = adj.shape[0]
    seeds = np.array([0, 7, n - 1])
    p, _ = appr_ista(adj, seeds, alpha=0.25, rho=0.0, tol=1e-13)
    a = adj.toarray() + np.eye(n)
    w = a / a.sum(axis=0, keepdims=True)  # A D^-1, column-stochastic
    lhs = (1 + 0.25) / 2 * np.eye(n) - (1 - 0.25) / 2 * w
    for i, s in enumerate(seeds):
        e = np.zeros(n)
        e[s] = 1.0
        assert np.allclose(p[i], 0.25 * np.linalg.solve(lhs, e), atol=1e-10)
    assert np.allclose(p.sum(axis=1), 1.0)  # no l1 term: a probability vector
    assert p[2, n - 1] == pytest.approx(1.0)  # the isolated seed keeps all its mass


@pytest.mark.parametrize("rho", [1e-4, 1e-3, 1e-2])
def test_l1_solution_satisfies_the_optimality_conditions(rho):
    adj = _graph(seed=1)
    n, alpha = adj.shape[0], 0.25
    seeds = np.arange(0, n, 5)
    p, _ = appr_ista(adj, seeds, alpha=alpha, rho=rho, tol=1e-14)
    a = adj.toarray() + np.eye(n)
    d = a.sum(axis=1)
    norm = a / np.sqrt(np.outer(d, d))
    q_mat = alpha * np.eye(n) + (1 - alpha) / 2 * (np.eye(n) - norm)
    for i, s in enumerate(seeds):
        q = p[i] / np.sqrt(d)
        b = np.zeros(n)
        b[s] = alpha / np.sqrt(d[s])
        grad = q_mat @ q - b
        lam = rho * alpha * np.sqrt(d)
        on = q > 0
        assert np.all(q >= 0)
        assert np.allclose(grad[on], -lam[on], atol=1e-9)  # KKT on the support
        assert np.all(np.abs(grad[~on]) <= lam[~on] + 1e-9)  # and off it
        assert p[i].sum() <= 1 + 1e-12


def test_larger_rho_gives_sparser_vectors_and_bad_input_is_refused():
    adj = _graph(seed=2, n=200)
    sizes = [int((appr_ista(adj, [3], rho=r)[0] > 0).sum()) for r in (1e-5, 1e-3, 1e-2)]
    assert sizes[0] > sizes[1] > sizes[2] >= 1
    with pytest.raises(ValueError, match="alpha"):
        appr_ista(adj, [0], alpha=1.0)
    with pytest.raises(ValueError, match="seeds"):
        appr_ista(adj, [500])
    with pytest.raises(ValueError, match="self_loops"):
        appr_ista(sp.csr_matrix((3, 3)), [0], self_loops=False)


@pytest.mark.parametrize("rho", [0.0, 1e-4, 1e-2])
def test_sparse_iterate_equals_the_dense_textbook_iteration(rho):
    from graphpriv.testing.references import appr_ista_dense

    adj = _graph(seed=2, n=60)
    seeds = np.array([0, 5, 30, 60])
    p, it = appr_ista(adj, seeds, rho=rho, tol=1e-8)
    ref, ref_it = appr_ista_dense(adj, seeds, rho=rho, tol=1e-8)
    assert it == ref_it
    assert np.allclose(p, ref, atol=1e-12)
    sparse, _ = appr_ista(adj, seeds, rho=rho, tol=1e-8, sparse=True)
    assert sp.issparse(sparse) and np.allclose(sparse.toarray(), p)
