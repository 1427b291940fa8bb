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
