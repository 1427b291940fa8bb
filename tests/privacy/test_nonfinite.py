"""The clipping bound holds for any input: extreme (1e30, float overflow) and non-finite values.

A non-finite per-example gradient (or norm) contributes exactly zero to the clipped sum; a finite
one is clipped to norm <= C as before. Checked on the vectorized engine, ghost clipping, dp-mlp
end to end, the DP-APPR row clips and PrivDPR's degrees.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from torch import nn

from graphpriv.data.graph import to_csr
from graphpriv.methods.mlp import MLPConfig, calibrated_noise
from graphpriv.methods.node_classifier import steps_and_rate, train_rows
from graphpriv.nn.decoupled import DecoupledModel, feature_mlp
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.engine import DPSGD, clip_per_sample, clipped_gradient_sum, per_sample_gradients
from graphpriv.privacy.ghost_clipping import decoupled_clipped_sum
from graphpriv.privacy.sampling import WithoutReplacementSampler
from graphpriv.privacy.units import PrivacyUnit
from graphpriv.propagation.dp_appr import dp_appr_em, dp_appr_gaussian
from graphpriv.synthesis.privdpr import train_embeddings
from graphpriv.testing.graphs import labelled_sbm, random_graph

pytestmark = pytest.mark.usefixtures("one_thread")

C = 0.5
BAD = {2: 1e30, 5: math.inf, 7: math.nan}  # example -> the magnitude of its whole input (signed below)


class _Tiny(nn.Module):
    """``[B, 4] -> [B]`` logits: Linear -> ReLU -> Linear."""

    def __init__(self):
        super().__init__()
        self.lin1, self.lin2 = nn.Linear(4, 3), nn.Linear(3, 1)

    def forward(self, x):
        return self.lin2(torch.relu(self.lin1(x))).squeeze(-1)


def _loss(out, y):
    return F.binary_cross_entropy_with_logits(out, y)


def _engine_batch(model, b=10):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(b, 4, generator=gen)
    y = (torch.rand(b, generator=gen) < 0.5).float()
    for i, v in {0: 1e3, **BAD}.items():  # example 0: large but finite, clipped (not dropped)
        # signed like lin1's first row so that ReLU passes 1e30 on, and labelled against the logit so
        # that the loss is not saturated: a finite forward pass whose gradient entries (~1e30) are
        # finite but whose float32 norm overflows
        x[i] = v * torch.sign(model.lin1.weight[0].detach())
        with torch.no_grad():
            y[i] = float(model(x[i:i + 1]).item() < 0)
    return x, y


def _reference_sum(model, x, y):
    """Slow loop: each example's float32 gradient by autograd; skipped when its norm is not finite,
    else clipped with the engine's factor min(1, C / (norm + 1e-6)); summed in float64."""
    total = {n: torch.zeros_like(p, dtype=torch.float64) for n, p in model.named_parameters()}
    kept = []
    for i in range(y.numel()):
        model.zero_grad()
        _loss(model(x[i:i + 1]), y[i:i + 1]).backward()
        norm = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
        if not torch.isfinite(norm):
            continue
        kept.append(i)
        factor = min(1.0, C / (norm.item() + 1e-6))
        for n, p in model.named_parameters():
            total[n] += factor * p.grad.double()
    return total, kept


def test_engine_drops_nonfinite_examples_and_clips_the_rest():
    torch.manual_seed(0)
    model = _Tiny()
    x, y = _engine_batch(model)
    summed, losses = clipped_gradient_sum(model, _loss, lambda i: ((x[i],), y[i]), torch.arange(y.numel()), C)
    ref, kept = _reference_sum(model, x, y)
    assert kept == [i for i in range(y.numel()) if i not in BAD]  # 1e30 overflows the float32 norm
    assert all(torch.isfinite(g).all() for g in summed.values())
    norm = torch.sqrt(sum(g.double().pow(2).sum() for g in summed.values()))
    assert norm.item() <= C * len(kept) * (1 + 1e-6)
    for name in ref:
        torch.testing.assert_close(summed[name].double(), ref[name], rtol=1e-5, atol=1e-7)
    assert torch.isfinite(losses[0])  # the diagnostic losses are per example, left as they are

    grads, _ = per_sample_gradients(model, _loss, (x,), y)
    clipped, norms = clip_per_sample(grads, C)
    after = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in clipped.values()))
    assert torch.isfinite(after).all() and (after <= C * (1 + 1e-6)).all()
    assert (after[list(BAD)] == 0).all() and not torch.isfinite(norms[list(BAD)]).any()
    assert after[0].item() == pytest.approx(C, rel=1e-5)  # the large finite example is clipped to C


def test_dpsgd_step_stays_finite():
    torch.manual_seed(0)
    model = _Tiny()
    x, y = _engine_batch(model)
    engine = DPSGD(model, torch.optim.SGD(model.parameters(), lr=0.1),
                   WithoutReplacementSampler(10, 10, generator=torch.Generator().manual_seed(0)),
                   collate=lambda i: ((x[i],), y[i]), loss_fn=_loss, noise_multiplier=1.0, max_grad_norm=C,
                   group_size=1, ledger=Ledger(PrivacyUnit.EDGE, delta=1e-5),
                   generator=torch.Generator().manual_seed(1))
    for _ in range(3):
        engine.step()
    assert all(torch.isfinite(p).all() for p in model.parameters())


def _ghost_batch(b=12, k=3, f=6, c=3):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(b, k, f, generator=gen).relu()
    w = torch.rand(b, k, generator=gen) + 0.1
    w[::4, 2] = 0.0  # padding
    return x, w, torch.randint(c, (b,), generator=gen)


@pytest.mark.parametrize("max_grad_norm", [0.05, 100.0])
def test_ghost_clipping_drops_nonfinite_examples(max_grad_norm):
    torch.manual_seed(1)
    model = DecoupledModel(feature_mlp(6, 8, 3, 0.0)).train()
    x, w, y = _ghost_batch()
    clean = x.clone()
    x[1] = 1e30  # finite forward pass, Gram products of 1e60 = inf
    x[3, 1] = math.inf  # one row of the example
    x[6, 0] = math.nan
    x[8, 2] = math.inf  # a padding slot (weight 0): ignored, the example is kept
    x[0, 2] = 1e30  # likewise
    dropped = [1, 3, 6]
    got, norms = decoupled_clipped_sum(model, x, w, y, max_grad_norm)
    assert all(torch.isfinite(g).all() for g in got.values())
    assert not torch.isfinite(norms[dropped]).any() and torch.isfinite(norms[[0, 8]]).all()
    keep = torch.tensor([i for i in range(y.numel()) if i not in dropped])
    ref, _ = clipped_gradient_sum(model, lambda out, t: F.cross_entropy(out, t),
                                  lambda i: ((clean[i], w[i]), y[i]), keep, max_grad_norm)
    for name in ref:
        torch.testing.assert_close(got[name], ref[name], rtol=1e-5, atol=1e-6)
    total = torch.sqrt(sum(g.pow(2).sum() for g in got.values()))
    assert total.item() <= max_grad_norm * keep.numel() * (1 + 1e-5)


@pytest.fixture(scope="module")
def dp_mlp_setup():
    data = labelled_sbm(300, 3, num_features=12, signal=2.0, seed=0)
    x, y = data.x, data.y
    perm = torch.randperm(300, generator=torch.Generator().manual_seed(0))
    train, test = perm[:240], perm[240:]
    config = MLPConfig(epochs=20, delta=1e-3)  # delta < 1 / 240
    z, steps, rate, _ = calibrated_noise(config, train.numel())
    return x, y, train, test, config, z, steps, rate


def _train_dp_mlp(setup, poison=None):
    x, y, train, test, config, z, steps, rate = setup
    xt = x[train].clone()
    if poison is not None:
        xt[5] = poison  # one training node; run()'s input checks are bypassed
    model = train_rows(xt, y[train], sp.identity(train.numel(), format="csr"), num_classes=3, config=config,
                       steps=steps, sample_rate=rate, noise_multiplier=z, seed=0,
                       ledger=Ledger(PrivacyUnit.NODE, delta=config.delta))
    with torch.no_grad():
        accuracy = (model.mlp(x[test]).argmax(1) == y[test]).float().mean().item()
    return model, accuracy


def test_dp_mlp_end_to_end_with_one_extreme_node(dp_mlp_setup):
    assert steps_and_rate(240, 20, 60) == dp_mlp_setup[-2:]
    _, clean = _train_dp_mlp(dp_mlp_setup)
    assert clean > 0.7  # well above chance (1/3)
    for value in (1e30, math.inf, math.nan):
        model, accuracy = _train_dp_mlp(dp_mlp_setup, value)
        assert all(torch.isfinite(p).all() for p in model.parameters()), value
        assert accuracy >= clean - 0.1, (value, accuracy, clean)


def test_dp_appr_rows_drop_nonfinite_values():
    rng = np.random.default_rng(0)
    p = rng.random((5, 12)) * 0.01
    bad = p.copy()
    bad[1, 3], bad[2, 0], bad[3, 5] = np.inf, np.nan, 1e200  # 1e200: the float64 norm overflows
    zeroed = p.copy()
    zeroed[1:4] = 0.0
    out = dp_appr_gaussian(bad, k=3, noise_std=0.01, c1=0.05, rng=np.random.default_rng(1))
    ref = dp_appr_gaussian(zeroed, k=3, noise_std=0.01, c1=0.05, rng=np.random.default_rng(1))
    assert np.isfinite(out.data).all() and (out != ref).nnz == 0
    bad[3, 5] = 5.0  # finite: EM clips it to C2
    em_zero = p.copy()
    em_zero[1, 3] = em_zero[2, 0] = 0.0
    em_zero[3, 5] = 5.0
    for values in ("uniform", "laplace"):
        kwargs = {"k": 3, "epsilon_row": 1.0, "c2": 0.005, "values": values, "epsilon_values": 1.0}
        out = dp_appr_em(bad, rng=np.random.default_rng(2), **kwargs)
        ref = dp_appr_em(em_zero, rng=np.random.default_rng(2), **kwargs)
        assert np.isfinite(out.data).all() and (out != ref).nnz == 0


def test_privdpr_reads_only_the_structure_of_adj():
    adj = to_csr(random_graph(40, 0.15, 0).edge_index.numpy(), 40)
    weird = adj.copy()
    weird.data = weird.data.copy()
    weird.data[:3] = [np.inf, np.nan, 1e30]
    kwargs = {"epsilon": 4.0, "epochs": 1, "batch_nodes": 8, "r": 16, "d": 8, "seed": 0}
    clean, odd = train_embeddings(adj, **kwargs), train_embeddings(weird, **kwargs)
    assert torch.isfinite(odd.V).all() and torch.equal(clean.V, odd.V)
