import pytest
import torch

from graphpriv.nn.sparse_features import feature_product, sparse_features
from graphpriv.publishing.ppgsl import SurrogateAttacker


def _bag_of_words(n=40, f=60, density=0.03, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, f, generator=g) < density).float()


def test_sparse_features_converts_only_mostly_zero_matrices():
    x = _bag_of_words()
    xs = sparse_features(x)
    assert xs.layout == torch.sparse_csr and torch.equal(xs.to_dense(), x)
    dense = torch.randn(10, 5)
    assert sparse_features(dense) is dense  # every entry non-zero
    assert sparse_features(x, max_density=0.0) is x
    assert sparse_features(xs) is xs  # already sparse
    empty = torch.zeros(0, 4)
    assert sparse_features(empty) is empty


@pytest.mark.parametrize("bias", [False, True])
def test_feature_product_is_the_dense_product_with_its_gradients(bias):
    x = _bag_of_words(seed=1)
    weight = torch.randn(7, x.shape[1], requires_grad=True)
    b = torch.randn(7, requires_grad=True) if bias else None
    grad = torch.randn(x.shape[0], 7)
    results = []
    for features in (x, sparse_features(x)):
        weight.grad = None
        if b is not None:
            b.grad = None
        out = feature_product(features, weight, b)
        out.backward(grad)
        results.append((out.detach(), weight.grad.clone(), None if b is None else b.grad.clone()))
    (a, ga, gba), (c, gc, gbc) = results
    assert torch.allclose(a, x @ weight.detach().t() + (0 if b is None else b.detach()), atol=1e-5)
    assert torch.allclose(a, c, atol=1e-5) and torch.allclose(ga, gc, atol=1e-5)
    assert (gba is None) == (gbc is None) and (gba is None or torch.allclose(gba, gbc))


def test_surrogate_first_layer_reads_csr_features_as_dense_ones():
    x = _bag_of_words(n=30, f=50, seed=2)
    torch.manual_seed(0)
    model = SurrogateAttacker(50, hidden=(16, 8))
    dense, sparse = model.first_linear(x), model.first_linear(sparse_features(x))
    assert dense.shape == sparse.shape == (30, 16)
    assert torch.allclose(dense, sparse, atol=1e-5)
