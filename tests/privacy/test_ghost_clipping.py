"""Ghost clipping for the decoupled model against the vectorized per-example engine."""

import pytest
import torch
import torch.nn.functional as F

from graphpriv.nn.decoupled import DecoupledModel, feature_mlp
from graphpriv.privacy.engine import (
    clipped_gradient_sum,
    per_sample_gradients,
    per_sample_norms,
)
from graphpriv.privacy.ghost_clipping import decoupled_clipped_sum

pytestmark = pytest.mark.usefixtures("one_thread")


def _batch(b=40, k=5, f=60, c=4, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(b, k, f, generator=gen).relu()
    w = torch.rand(b, k, generator=gen)
    w[::3, k // 2:] = 0.0  # padded rows: weight 0 (their features still enter the forward pass)
    return x, w, torch.randint(c, (b,), generator=gen)


@pytest.mark.parametrize(("dropout", "max_grad_norm"), [(0.0, 0.05), (0.1, 0.05), (0.1, 100.0), (0.5, 0.3)])
def test_equals_the_per_example_engine_dropout_included(dropout, max_grad_norm):
    torch.manual_seed(1)
    model = DecoupledModel(feature_mlp(60, 16, 4, dropout)).train()
    x, w, y = _batch()

    def collate(rows):
        return (x[rows], w[rows]), y[rows]

    rows = torch.arange(x.shape[0])
    torch.manual_seed(7)
    ref, _ = clipped_gradient_sum(model, lambda out, t: F.cross_entropy(out, t), collate, rows, max_grad_norm)
    after_ref = torch.rand(3)
    torch.manual_seed(7)
    got, norms = decoupled_clipped_sum(model, x, w, y, max_grad_norm)
    after_got = torch.rand(3)
    assert torch.equal(after_ref, after_got)  # the same random draws: the masks are the engine's
    assert set(got) == {n for n, _ in model.named_parameters()}
    for name in ref:
        torch.testing.assert_close(got[name], ref[name], rtol=1e-5, atol=1e-6)
    torch.manual_seed(7)
    grads, _ = per_sample_gradients(model, lambda out, t: F.cross_entropy(out, t), (x, w), y)
    torch.testing.assert_close(norms, per_sample_norms(grads), rtol=1e-5, atol=1e-6)
    if max_grad_norm < 1:  # a small C: clipping is active for some examples
        assert (norms > max_grad_norm).any()


def test_clipping_bounds_each_example():
    model = DecoupledModel(feature_mlp(60, 16, 4, 0.0)).train()
    x, w, y = _batch(b=1)
    one, norm = decoupled_clipped_sum(model, x, w, y, 1e-3)
    total = torch.sqrt(sum(g.pow(2).sum() for g in one.values()))
    assert norm.item() > 1e-3 and total.item() == pytest.approx(1e-3, rel=1e-4)


def test_other_architectures_are_refused():
    with pytest.raises(TypeError, match="feature_mlp"):
        decoupled_clipped_sum(torch.nn.Linear(3, 2), *_batch(), 1.0)
    odd = DecoupledModel(torch.nn.Sequential(torch.nn.Linear(60, 4)))
    with pytest.raises(TypeError, match="Linear -> ReLU -> Dropout -> Linear"):
        decoupled_clipped_sum(odd, *_batch(), 1.0)


def _linear_models():
    from graphpriv.nn.gap import ClassificationModule, Encoder
    from graphpriv.nn.progap import ProgressiveModel, StageLogits

    torch.manual_seed(3)
    progressive = ProgressiveModel(7, 5, 3, num_stages=3, batch_norm=False).double()
    for p in progressive.parameters():  # stage 1 trains bases 0-1, its combination and head only
        p.requires_grad_(False)
    for p in progressive.stage_parameters(1):
        p.requires_grad_(True)
    gen = torch.Generator().manual_seed(0)
    return [
        (Encoder(7, 5, 3, layers=2, batch_norm=False).double(), (torch.randn(40, 7, generator=gen).double() * 3,)),
        (ClassificationModule(5, 4, 3, hops=2, batch_norm=False).double(), (torch.randn(40, 5, 3, generator=gen).double(),)),
        (StageLogits(progressive, 1), (torch.randn(40, 7, generator=gen).double(), torch.randn(40, 5, generator=gen).double())),
    ]


@pytest.mark.parametrize("which", range(3))
@pytest.mark.parametrize("max_grad_norm", [0.05, 0.5, 100.0])
def test_the_linear_ghost_sum_equals_the_per_example_engine(which, max_grad_norm):
    """GAP's encoder and classifier and a ProGAP stage (frozen layers left out), against vmap."""
    from graphpriv.privacy.ghost_clipping import linear_clipped_sum

    model, inputs = _linear_models()[which]
    y = torch.randint(3, (40,), generator=torch.Generator().manual_seed(1))

    def collate(rows):
        return tuple(t[rows] for t in inputs), y[rows]

    rows = torch.arange(40)
    ref, ref_losses = clipped_gradient_sum(model, F.cross_entropy, collate, rows, max_grad_norm)
    got, losses = linear_clipped_sum(model, collate, max_grad_norm)(rows)
    assert set(got) == set(ref) == {n for n, p in model.named_parameters() if p.requires_grad}
    for name in ref:
        assert torch.allclose(got[name], ref[name], atol=1e-12), name
    assert torch.allclose(losses, ref_losses)


def test_the_linear_ghost_sum_drops_a_non_finite_example_and_refuses_other_layers():
    from graphpriv.nn.gap import Encoder
    from graphpriv.privacy.ghost_clipping import linear_clipped_sum

    torch.manual_seed(0)
    model = Encoder(4, 3, 2, layers=2, batch_norm=False)
    x, y = torch.randn(6, 4), torch.tensor([0, 1, 0, 1, 0, 1])
    bad = x.clone()
    bad[2] = float("inf")
    clean, _ = linear_clipped_sum(model, lambda r: ((x[r],), y[r]), 1.0)(torch.tensor([0, 1, 3, 4, 5]))
    dropped, _ = linear_clipped_sum(model, lambda r: ((bad[r],), y[r]), 1.0)(torch.arange(6))
    for name in clean:
        assert torch.allclose(clean[name], dropped[name]), name
    with pytest.raises(TypeError, match="nn.Linear"):
        linear_clipped_sum(Encoder(4, 3, 2, layers=2, batch_norm=True), lambda r: ((x[r],), y[r]), 1.0)


def test_the_linear_ghost_sum_refuses_inputs_that_are_not_one_row_per_example():
    """A layer on flattened [B * K, in] rows (broadcast when B = 1) or batch statistics in training
    mode would let one example move the sum by more than C: refused at the call."""
    from torch import nn

    from graphpriv.privacy.ghost_clipping import linear_clipped_sum

    class Flattening(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 3)

        def forward(self, x):  # [B, K, 4] -> one row per slot, then summed per example
            return self.lin(x.reshape(-1, 4)).reshape(x.shape[0], -1, 3).sum(1)

    x, y = torch.randn(1, 2, 4), torch.tensor([1])
    with pytest.raises(TypeError, match="one row per example"):
        linear_clipped_sum(Flattening(), lambda r: ((x[r],), y[r]), 1.0)(torch.tensor([0]))
    batch_norm = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)).train()
    for p in batch_norm[1].parameters():
        p.requires_grad_(False)
    with pytest.raises(TypeError, match="normalises over the batch"):
        linear_clipped_sum(batch_norm, lambda r: ((torch.randn(5, 4)[r],), torch.zeros(5, dtype=torch.long)[r]),
                           1.0)(torch.arange(5))
