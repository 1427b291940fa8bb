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
