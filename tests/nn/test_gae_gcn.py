import numpy as np
import pytest
import torch

from graphpriv.nn.gae import gae_embeddings, seeded
from graphpriv.nn.gcn import GCN, train_node_classifier


def _two_cliques(k=8):
    a = [(i, j) for i in range(k) for j in range(i + 1, k)]
    b = [(i + k, j + k) for i, j in a]
    pairs = np.array(a + b + [(0, k)]).T
    return torch.from_numpy(np.concatenate([pairs, pairs[::-1]], axis=1).copy()), 2 * k


def test_gcn_classifier_separates_two_communities_without_features():
    edge_index, n = _two_cliques()
    y = torch.tensor([0] * (n // 2) + [1] * (n // 2))
    mask = torch.zeros(n, dtype=torch.bool)
    mask[[1, 2, n - 2, n - 3]] = True
    pred = train_node_classifier(edge_index, n, None, y, mask, epochs=100, seed=0)
    assert torch.equal(pred, y)


def test_gae_embeddings_place_communities_apart_and_restore_the_rng():
    edge_index, n = _two_cliques()
    state = torch.random.get_rng_state()
    z = gae_embeddings(edge_index, n, None, epochs=100, seed=1)
    assert torch.equal(torch.random.get_rng_state(), state)  # global RNG untouched
    assert z.shape == (n, 64)
    zn = torch.nn.functional.normalize(z, dim=1)
    sim = zn @ zn.T
    within, across = sim[1:8, 1:8].mean(), sim[1:8, 9:16].mean()
    assert within > across + 0.2
    with pytest.raises(ValueError, match="at least one edge"):
        gae_embeddings(torch.empty(2, 0, dtype=torch.long), 3, None)


def test_seeded_restores_python_random():
    import random

    random.seed(5)
    expected = random.random()
    random.seed(5)
    with seeded(0):
        random.random()
    assert random.random() == expected


def test_featureless_gcn_needs_num_nodes():
    with pytest.raises(ValueError, match="num_nodes"):
        GCN(None, 8, 2)


def test_weighted_propagation_equals_pyg_gcnconv_with_gradients():
    from torch_geometric.nn import GCNConv

    from graphpriv.nn.weighted_gcn import SymmetricGraph, gcn_propagate
    from graphpriv.testing.graphs import random_pairs

    torch.manual_seed(0)
    n = 30
    pairs = random_pairs(n, 120, seed=0)
    theta = torch.rand(pairs.size(1)) * 1.4 - 0.2
    t1, t2 = theta.clone().requires_grad_(True), theta.clone().requires_grad_(True)
    x = torch.randn(n, 7)
    x1, x2 = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    conv = GCNConv(7, 5)
    w1 = t1.clamp(0, 1)
    ref = conv(x1, torch.cat([pairs, pairs.flip(0)], 1), torch.cat([w1, w1]))
    ours = gcn_propagate(conv.lin(x2), SymmetricGraph(pairs, n), t2.clamp(0, 1)) + conv.bias
    assert torch.allclose(ref, ours, atol=1e-5)
    (ref ** 2).sum().backward()
    (ours ** 2).sum().backward()
    assert torch.allclose(t1.grad, t2.grad, atol=1e-4) and torch.allclose(x1.grad, x2.grad, atol=1e-4)
