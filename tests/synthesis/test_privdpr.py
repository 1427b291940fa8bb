import math

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from pydantic import ValidationError

from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.errors import ConfigError
from graphpriv.experiments.registry import make_config, method_spec
from graphpriv.methods.privdpr import generate_pairs
from graphpriv.synthesis.deep_pagerank import (
    DeepPageRank,
    depth_for_sensitivity,
    gradient_bound_m,
    layer_factor,
    pair_loss,
    spectral_norm,
)
from graphpriv.synthesis.generation import assemble_graph, score_counts
from graphpriv.synthesis.privdpr import paper_noise_multiplier, train_embeddings
from graphpriv.synthesis.walks import walk_pairs
from graphpriv.testing.graphs import random_graph


def test_m_and_depth_reproduce_the_papers_citeseer_example():
    # Example 4.5: N = 3327, gamma = 0.85 -> M ~ 10,464; B = 128, S = 5, s = 5 -> L >= 7 (Eq. 12, T = 1)
    assert gradient_bound_m(3327) == pytest.approx(10464, rel=1e-3)
    assert depth_for_sensitivity(num_nodes=3327, batch_pairs=128, iterations=1, s=5, s_grad=5) == 7


@pytest.mark.parametrize("n,b,t,s", [(2708, 512, 845, 8.0), (100, 32, 10, 2.0), (50, 1, 1, 1e6)])
def test_depth_is_the_smallest_that_meets_eq_13(n, b, t, s):
    depth = depth_for_sensitivity(num_nodes=n, batch_pairs=b, iterations=t, s=s, s_grad=5.0)
    bound = b * gradient_bound_m(n)
    assert bound * s ** -(depth + 1) <= 5.0 / t
    assert depth == 0 or bound * s ** -depth > 5.0 / t


def test_sigmoid_bound_is_a_quarter_per_layer_and_shallower():
    assert layer_factor(8.0) == 1 / 8 and layer_factor(8.0, "sigmoid") == 1 / 32
    # Cora's setting (N = 2708, B = 512, T = 845, s = 8): Theorem 4.2 asks for L = 9, the 1/4 per layer for L = 5
    kw = {"num_nodes": 2708, "batch_pairs": 512, "iterations": 845, "s": 8.0, "s_grad": 5.0}
    assert depth_for_sensitivity(**kw) == 9
    depth = depth_for_sensitivity(**kw, gradient_bound="sigmoid")
    assert depth == 5
    bound = 512 * gradient_bound_m(2708)
    assert bound * 32.0 ** -(depth + 1) <= 5.0 / 845 < bound * 32.0 ** -depth
    with pytest.raises(ValueError, match="gradient_bound"):
        layer_factor(8.0, "tight")
    with pytest.raises(ConfigError, match="gradient_bound"):
        train_embeddings(sp.csr_matrix(np.ones((20, 20))), epsilon=1.0, gradient_bound="tight")


def test_the_quarter_is_attained():
    # the per-layer factor 1/(4s) cannot be lowered: at v = 0 a one-layer f has ||df/dv|| = sigmoid'(0) / s exactly
    for s in (2.0, 8.0):
        model = DeepPageRank(5, r=6, d=4, depth=0, s=s, generator=torch.Generator().manual_seed(3))
        with torch.no_grad():
            model.V.zero_()
        model(torch.tensor([2])).sum().backward()
        assert float(model.V.grad.norm()) == pytest.approx(layer_factor(s, "sigmoid"), rel=1e-6)


def _step_gradient(model, adj, starts, *, walk_seed, num_walks=2, walk_length=4):
    """One step's summed V-gradient on ``adj`` (the naive per-pair loss), walks drawn with ``walk_seed``."""
    n = adj.shape[0]
    src, dst = walk_pairs(adj, starts, num_walks=num_walks, walk_length=walk_length,
                          rng=np.random.default_rng(walk_seed))
    model.zero_grad()
    if src.size:
        out_degree = torch.from_numpy(np.diff(adj.indptr).astype(np.float32))
        in_degree = torch.from_numpy(np.bincount(adj.indices, minlength=n).astype(np.float32))
        i, k = torch.from_numpy(src), torch.from_numpy(dst)
        pair_loss(model(i), model(k), out_degree[i], in_degree[k], num_nodes=n).sum().backward()
        return model.V.grad.detach().double().clone(), src.size
    return torch.zeros_like(model.V, dtype=torch.float64), 0


def test_replacing_one_node_moves_a_step_within_twice_the_bound():
    # brute force on a 7-node graph: node u's edges replaced by every other neighbour set (64 of them, for
    # each u); the same W, V, batch and walk draws. The two summed gradients differ by at most
    # 2 B M (1/(4s))^(L+1), the sensitivity the noise is scaled to (replace-one) under the tighter of the two
    # bounds (Theorem 4.2's 1/s per layer is looser still); V small, so the sigmoids are near their
    # steepest and the bound's 1/4 is nearly attained per layer
    import itertools

    n, s, depth, num_walks, walk_length = 7, 2.0, 1, 2, 4
    starts = np.array([0, 3, 5])
    base = random_graph(n, 0.4, seed=2)
    pairs = np.asarray(undirected_pairs(base.edge_index))
    model = DeepPageRank(n, r=4, d=3, depth=depth, s=s, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        model.V.mul_(0.05)
    bound = num_walks * walk_length * starts.size * gradient_bound_m(n) * layer_factor(s, "sigmoid") ** (depth + 1)
    worst = 0.0
    for u in range(n):
        others = [v for v in range(n) if v != u]
        kept = pairs[:, (pairs[0] != u) & (pairs[1] != u)]
        graphs = []
        for mask in itertools.product([0, 1], repeat=n - 1):
            new = np.array([[u, v] for v, m in zip(others, mask) if m], dtype=np.int64).T.reshape(2, -1)
            graphs.append(to_csr(np.concatenate([kept, new], axis=1), n))
        for seed in (0, 1):
            sums = [_step_gradient(model, g, starts, walk_seed=seed, num_walks=num_walks,
                                   walk_length=walk_length)[0] for g in graphs]
            for a, b in itertools.combinations(range(len(sums)), 2):
                worst = max(worst, float((sums[a] - sums[b]).norm()))
    assert 0 < worst <= 2 * bound


def test_depth_errors():
    with pytest.raises(ConfigError, match="'s' must be > 1"):
        depth_for_sensitivity(num_nodes=100, batch_pairs=10, iterations=10, s=1.0, s_grad=5)
    with pytest.raises(ConfigError, match="layers"):
        depth_for_sensitivity(num_nodes=10**6, batch_pairs=512, iterations=10**6, s=1.1, s_grad=1e-3)


@pytest.mark.parametrize("gradient_bound", ["paper", "sigmoid"])
def test_pair_gradient_never_exceeds_theorem_4_2(gradient_bound):
    gen = torch.Generator().manual_seed(0)
    n, s = 40, 2.0
    for depth in (0, 1, 3):
        model = DeepPageRank(n, r=6, d=5, depth=depth, s=s, generator=gen)
        with torch.no_grad():
            model.V.mul_(20.0)  # large inputs: saturated and unsaturated units alike
        bound = gradient_bound_m(n) * layer_factor(s, gradient_bound) ** (depth + 1)
        for trial in range(30):
            i, j = torch.randint(0, n, (2, 1), generator=gen)
            d_out = torch.randint(1, n, (1,), generator=gen).float()
            d_in = torch.randint(1, n, (1,), generator=gen).float()
            model.zero_grad()
            pair_loss(model(i), model(j), d_out, d_in, num_nodes=n).sum().backward()
            assert model.V.grad.norm() <= bound
    # weight normalisation: every normalised W has spectral norm exactly 1/s
    for w in model.weights:
        assert float(torch.linalg.matrix_norm(model.normalised(w.detach()), ord=2)) == pytest.approx(1 / s, rel=1e-5)


@pytest.mark.parametrize("shape", [(6, 5), (5, 6), (128, 64), (64, 64), (96, 200), (64, 1), (1, 7)])
def test_spectral_norm_equals_the_svd_and_its_gradient(shape):
    gen = torch.Generator().manual_seed(sum(shape))
    w = torch.randn(*shape, generator=gen, requires_grad=True)
    ref = torch.linalg.matrix_norm(w, ord=2)
    (ref_grad,) = torch.autograd.grad(ref, w)
    ours = spectral_norm(w)
    (grad,) = torch.autograd.grad(ours, w)
    assert ours.dtype == torch.float32 and ours.shape == ()
    assert float(ours.detach()) == pytest.approx(float(ref.detach()), rel=1e-6)
    torch.testing.assert_close(grad, ref_grad, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="matrix"):
        spectral_norm(w.detach()[0])


def test_walk_pairs_follow_edges_and_skip_isolated_starts():
    adj = to_csr(np.array([[0, 1, 2], [1, 2, 3]]), 5)  # path 0-1-2-3 and isolated 4
    rng = np.random.default_rng(0)
    src, dst = walk_pairs(adj, np.array([0, 2, 4]), num_walks=3, walk_length=4, rng=rng)
    assert src.size == 2 * 3 * 4 and 4 not in src
    first_step = dst[:6]  # the first step of each live walk: a neighbour of its start
    assert all(adj[a, b] for a, b in zip(src[:6], first_step))
    assert set(dst.tolist()) <= {0, 1, 2, 3}


def test_score_counts_rows_and_model_edge_count():
    gen = torch.Generator().manual_seed(1)
    V = torch.randn(30, 4, generator=gen)
    counts, positive = score_counts(V, samples_per_node=7, generator=gen, chunk_rows=4)
    assert np.all(np.asarray(counts.sum(axis=1)).ravel() == 7) and counts.diagonal().sum() == 0
    dots = (V @ V.T).numpy()
    assert positive == int((np.triu(dots, k=1) > 0).sum())
    assert score_counts(V, samples_per_node=7, generator=gen, chunk_rows=30)[1] == positive


def test_assemble_graph_meets_the_target_inside_the_support():
    rng = np.random.default_rng(2)
    dense = rng.integers(0, 3, (25, 25)) * (rng.random((25, 25)) < 0.3)
    counts = sp.csr_matrix(dense)
    support = sp.triu(counts.maximum(counts.T), k=1)
    support.eliminate_zeros()
    support = support.tocoo()
    codes = set((support.row.astype(np.int64) * 25 + support.col).tolist())
    for target in (3, 20, len(codes), len(codes) + 50):
        pairs = assemble_graph(counts, target, rng=rng)
        got = set((pairs[0] * 25 + pairs[1]).tolist())
        assert len(got) == pairs.shape[1] == min(target, len(codes)) and got <= codes
        assert np.all(pairs[0] < pairs[1])
    every = assemble_graph(counts, 30, rng=rng)  # >= 25 nodes: stage 1 is not cut down
    rows = np.flatnonzero(np.asarray(counts.maximum(counts.T).sum(axis=1)).ravel() > 0)
    assert set(rows.tolist()) <= set(every.ravel().tolist())  # stage 1: each such node has an edge
    with pytest.raises(ValueError, match="num_edges"):
        assemble_graph(counts, 0, rng=rng)


def test_accounting_modes():
    adj = to_csr(undirected_pairs(random_graph(64, 0.1, seed=3).edge_index), 64)
    kw = {"epochs": 1, "batch_nodes": 8, "r": 8, "d": 4, "seed": 0}
    rigorous = train_embeddings(adj, epsilon=2.0, accounting="rigorous", **kw)
    paper = train_embeddings(adj, epsilon=2.0, accounting="paper", **kw)
    t = rigorous.iterations
    assert rigorous.ledger.report().epsilon == pytest.approx(2.0, rel=1e-3)
    assert rigorous.ledger.report().epsilon <= 2.0
    assert paper.noise_multiplier == pytest.approx(math.sqrt(2 * math.log(1.25 * t / 1e-5)) / (2.0 / t))
    assert paper.ledger.report().epsilon == pytest.approx(2.0) and paper.ledger.report().accountant == "basic"
    assert paper.info["rdp_epsilon_of_this_noise"] < 2.0 and rigorous.noise_multiplier < paper.noise_multiplier
    assert rigorous.noise_std == pytest.approx(2 * 5.0 / t * rigorous.noise_multiplier)
    clean = train_embeddings(adj, epsilon=None, **kw)
    assert clean.ledger is None and torch.equal(clean.V, train_embeddings(adj, epsilon=None, **kw).V)
    assert not torch.equal(clean.V, rigorous.V)
    with pytest.raises(ConfigError, match="eps < 1 per step"):
        paper_noise_multiplier(10.0, 1e-5, 5)


def _naive_training(adj, *, epochs, batch_nodes, r, d, seed, std, depth, adam_eps, lr=1e-3, num_walks=2,
                    walk_length=16):
    """Algorithm 2 lines 1-12 as written: f on both ends of every pair, V's dense gradient, a fresh
    noise tensor added after the backward pass (the slow reference of train_embeddings)."""
    n = adj.shape[0]
    gen = torch.Generator().manual_seed(seed)
    model = DeepPageRank(n, r=r, d=d, depth=depth, s=8.0, generator=gen)
    opt_w = torch.optim.Adam(model.weights.parameters(), lr=lr, eps=adam_eps)
    opt_v = torch.optim.Adam([model.V], lr=lr, eps=adam_eps)
    out_degree = torch.from_numpy(np.diff(adj.indptr).astype(np.float32))
    in_degree = torch.from_numpy(np.asarray(adj.sum(axis=0)).ravel().astype(np.float32))
    rng = np.random.default_rng([seed, 131])
    batch_pairs = batch_nodes * num_walks * walk_length
    for _ in range(epochs):
        order = rng.permutation(n)
        for j in range(n // batch_nodes):
            src, dst = walk_pairs(adj, order[j * batch_nodes:(j + 1) * batch_nodes], num_walks=num_walks,
                                  walk_length=walk_length, rng=rng)
            opt_w.zero_grad()
            opt_v.zero_grad()
            i, k = torch.from_numpy(src), torch.from_numpy(dst)
            pair_loss(model(i), model(k), out_degree[i], in_degree[k], num_nodes=n).sum().backward()
            opt_w.step()
            grad = model.V.grad
            if std is not None:
                grad = grad + torch.empty_like(grad).normal_(0.0, std, generator=gen)
            model.V.grad = grad / batch_pairs
            opt_v.step()
    return model.V.detach()


@pytest.mark.parametrize("epsilon", [None, 2.0])
def test_training_matches_the_naive_per_pair_loop(epsilon):
    # train_embeddings runs f once per distinct node and keeps one noise buffer; the result must be
    # the per-pair algorithm's (same noise draws, same Adam steps) up to float rounding
    adj = to_csr(undirected_pairs(random_graph(48, 0.15, seed=5).edge_index), 48)
    # Adam's eps 1e-20: V's gradients (~1e-10 here) move V without noise too
    kw = {"epochs": 2, "batch_nodes": 8, "r": 8, "d": 4, "seed": 1, "adam_eps": 1e-20}
    fast = train_embeddings(adj, epsilon=epsilon, **kw)
    slow = _naive_training(adj, std=fast.noise_std, depth=fast.depth, **kw)
    assert fast.iterations == 12
    init = DeepPageRank(48, r=8, d=4, depth=fast.depth, generator=torch.Generator().manual_seed(1)).V.detach()
    assert (fast.V - init).abs().max() > 1e-3
    torch.testing.assert_close(fast.V, slow, rtol=1e-5, atol=1e-6)


def test_privdpr_run_and_bad_input():
    graph = random_graph(80, 0.08, seed=4)
    fast = {"epochs": 1, "r": 8, "d": 4, "batch_nodes": 8, "samples_per_node": 5}
    r = method_spec("privdpr").run(make_config("privdpr", {**fast, "edge_count": "input", "attacks": "cn,ra"}),
                                   graph, seed=0)
    assert {"lp_auc", "err_tc", "err_cpl", "ks", "err_lcc", "attack_auc_cn", "attack_auc_ra"} <= set(r.metrics)
    assert 0 <= r.metrics["attack_auc_cn"] <= 1
    assert r.privacy.unit == "node" and r.privacy.epsilon <= 3.2
    assert r.release.num_edges == r.info["target_edges"] == r.info["synthetic_edges"]
    assert "treated as public" in " ".join(r.privacy.notes)
    dpr = method_spec("dpr").run(make_config("dpr", {**fast, "edge_count": "public", "num_edges": 30}), graph, seed=0)
    assert dpr.privacy is None and dpr.release.num_edges == 30
    with pytest.raises(ConfigError, match="num_edges"):
        make_config("privdpr", {"edge_count": "public"})
    with pytest.raises(ConfigError, match="unknown attack"):
        make_config("privdpr", {"attacks": "cn,bogus"})
    with pytest.raises(ConfigError, match="'s' must be > 1"):
        make_config("privdpr", {"s": 1.0})
    with pytest.raises((ConfigError, ValidationError)):
        make_config("privdpr", {"epsilon": 0.0})
    with pytest.raises(ConfigError, match="input_edges"):  # the private count is never read silently
        generate_pairs(torch.zeros(10, 4), make_config("privdpr", {"edge_count": "input"}), seed=0)


def test_score_counts_follow_the_softmax_of_v_vt():
    from scipy import stats

    gen = torch.Generator().manual_seed(5)
    V = torch.randn(6, 3, generator=gen)
    counts, _ = score_counts(V, samples_per_node=20000, temperature=0.5, generator=gen, chunk_rows=4)
    logits = (V @ V.T / 0.5).double()
    logits.fill_diagonal_(-torch.inf)
    probs = torch.softmax(logits, dim=1).numpy()
    dense = counts.toarray()
    for i in range(6):
        keep = np.arange(6) != i
        assert stats.chisquare(dense[i, keep], 20000 * probs[i, keep]).pvalue > 1e-3


def _pre_refactor_training(adj, *, epochs, batch_nodes, r, d, seed, std, depth, canary=None, num_walks=2,
                           walk_length=16, lr=1e-3, adam_eps=1e-8, gamma=0.85, s=8.0):
    """train_embeddings' loop before the one noisy step: noise drawn into V's buffer with normal_,
    the batch's rows added by index_add_ (the reference the refactor must match bit for bit)."""
    n = adj.shape[0]
    gen = torch.Generator().manual_seed(seed)
    model = DeepPageRank(n + (canary.rows if canary is not None else 0), r=r, d=d, depth=depth, s=s, generator=gen)
    opt_w = torch.optim.Adam(model.weights.parameters(), lr=lr, eps=adam_eps)
    opt_v = torch.optim.Adam([model.V], lr=lr, eps=adam_eps, fused=True)
    out_degree = torch.from_numpy(np.diff(adj.indptr).astype(np.float32))
    in_degree = torch.from_numpy(np.bincount(adj.indices, minlength=n).astype(np.float32))
    rng = np.random.default_rng([seed, 131])
    batch_pairs = batch_nodes * num_walks * walk_length
    grad = torch.zeros_like(model.V)
    for _ in range(epochs):
        order = rng.permutation(n)
        for j in range(n // batch_nodes):
            src, dst = walk_pairs(adj, order[j * batch_nodes:(j + 1) * batch_nodes], num_walks=num_walks,
                                  walk_length=walk_length, rng=rng)
            opt_w.zero_grad()
            if std is not None:
                grad.normal_(0.0, std, generator=gen)
            else:
                grad.zero_()
            if src.size:
                i, k = torch.from_numpy(src), torch.from_numpy(dst)
                nodes, where = torch.unique(torch.cat([i, k]), return_inverse=True)
                rows = model.V.detach()[nodes].requires_grad_()
                f = model.score(rows)
                pair_loss(f[where[:i.numel()]], f[where[i.numel():]], out_degree[i], in_degree[k], num_nodes=n,
                          gamma=gamma).sum().backward()
                grad.index_add_(0, nodes, rows.grad)
            opt_w.step()
            if canary is not None:
                canary.add(grad[n:])
                canary.observe(grad[n:])
            model.V.grad = grad.div_(batch_pairs)
            opt_v.step()
    return model.V.detach()[:n].clone()


class _Canary:
    """A GradientCanary that adds a fixed vector to its rows and keeps what it observes."""

    rows = 3

    def __init__(self):
        self.seen = []

    def add(self, grad):
        grad += 1e-3

    def observe(self, noisy):
        self.seen.append(noisy.clone())


@pytest.mark.parametrize(("epsilon", "accounting", "noise_scale"), [(2.0, "rigorous", 1.0), (2.0, "paper", 1.0),
                                                                    (2.0, "rigorous", 0.01), (None, "rigorous", 1.0)])
def test_training_is_the_pre_refactor_loop_bit_for_bit(epsilon, accounting, noise_scale):
    from dp_accounting import dp_event
    from dp_accounting.privacy_accountant import NeighboringRelation

    from graphpriv.privacy.accountant import Ledger
    from graphpriv.privacy.events import ApproxDpEvent
    from graphpriv.privacy.units import PrivacyUnit

    adj = to_csr(undirected_pairs(random_graph(48, 0.15, seed=5).edge_index), 48)
    kw = {"epochs": 2, "batch_nodes": 8, "r": 8, "d": 4, "seed": 1}
    new_canary, old_canary = _Canary(), _Canary()
    new = train_embeddings(adj, epsilon=epsilon, accounting=accounting, canary=new_canary, noise_scale=noise_scale,
                           **kw)
    old = _pre_refactor_training(adj, std=new.noise_std, depth=new.depth, canary=old_canary, **kw)
    assert torch.equal(new.V, old)
    assert len(new_canary.seen) == new.iterations and all(torch.equal(a, b) for a, b in
                                                          zip(new_canary.seen, old_canary.seen))
    if epsilon is None:
        assert new.ledger is None
        return
    # the ledger spent one event per step: the same report as the T steps spent at once before
    t, z = new.iterations, new.noise_multiplier
    if accounting == "paper":
        ledger = Ledger(PrivacyUnit.NODE, delta=1e-5, accounting="paper", accountant="basic",
                        neighboring_relation=NeighboringRelation.REPLACE_ONE)
        ledger.spend(ApproxDpEvent(epsilon / t, 1e-5 / t), phase="training", count=t, noise_multiplier=z)
    else:
        ledger = Ledger(PrivacyUnit.NODE, delta=1e-5, neighboring_relation=NeighboringRelation.REPLACE_ONE)
        ledger.spend(dp_event.GaussianDpEvent(z), phase="training", count=t, noise_multiplier=z)
    assert new.ledger.report() == ledger.report()
    assert new.ledger.report().neighboring_relation == "REPLACE_ONE"
