import torch

from graphpriv.nn.gcn import GCN, sparse_adjacency
from graphpriv.nn.sparse_features import sparse_features
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


def test_gcn_reads_csr_features_as_dense_ones_with_the_same_gradients():
    """The GCN that the GAE and the node-classification utility train takes the CSR matrix as it
    is (its first layer's F.linear multiplies it sparsely): same output, same weight gradients."""
    x = _bag_of_words(n=40, f=60, seed=1)
    g = torch.Generator().manual_seed(3)
    pairs = torch.randint(0, 40, (2, 80), generator=g)
    pairs = pairs[:, pairs[0] != pairs[1]]
    adj = sparse_adjacency(torch.cat([pairs, pairs.flip(0)], dim=1), 40)
    torch.manual_seed(0)
    model = GCN(60, 16, 7)
    results = []
    for features in (x, sparse_features(x)):
        model.zero_grad()
        out = model(features, adj)
        out.square().sum().backward()
        results.append((out.detach(), [p.grad.clone() for p in model.parameters()]))
    (a, ga), (b, gb) = results
    assert a.shape == (40, 7) and torch.allclose(a, b, atol=1e-5)
    for p, q in zip(ga, gb):
        assert torch.allclose(p, q, atol=1e-4)


def test_surrogate_first_layer_reads_csr_features_as_dense_ones():
    x = _bag_of_words(n=30, f=50, seed=2)
    torch.manual_seed(0)
    model = SurrogateAttacker(50, hidden=(16, 8))
    dense, sparse = model.first_linear(x), model.first_linear(sparse_features(x))
    assert dense.shape == sparse.shape == (30, 16)
    assert torch.allclose(dense, sparse, atol=1e-5)
