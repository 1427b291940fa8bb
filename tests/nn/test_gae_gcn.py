import numpy as np
import pytest
import torch

from graphpriv.memo import Memo
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


def _codes(pairs, n):
    from graphpriv.data.graph import pair_codes

    return np.sort(pair_codes(np.asarray(pairs), n))


@pytest.mark.parametrize("density", [0.01, 0.3, 0.7, 0.97])
def test_sample_absent_pairs_gives_distinct_non_edges_reproducibly(density):
    """Rejection over the sorted codes (sparse) or a choice from the complement (dense): always
    ``count`` distinct pairs u < v outside the graph, the same ones for the same generator state."""
    from graphpriv.data.graph import sample_absent_pairs

    n = 80
    total = n * (n - 1) // 2
    rng = np.random.default_rng(0)
    codes = np.sort(rng.choice(total, int(density * total), replace=False))
    count = min(300, total - codes.size)
    pairs = sample_absent_pairs(codes, n, count, np.random.default_rng(3))
    assert pairs.shape == (2, count) and pairs.dtype == np.int64
    assert (pairs[0] < pairs[1]).all() and pairs.min() >= 0 and pairs.max() < n
    got = _codes(pairs, n)
    assert np.unique(got).size == count and not np.isin(got, codes).any()
    assert np.array_equal(pairs, sample_absent_pairs(codes, n, count, np.random.default_rng(3)))
    assert not np.array_equal(pairs, sample_absent_pairs(codes, n, count, np.random.default_rng(4)))


def test_sample_absent_pairs_on_a_near_complete_graph_and_its_limits():
    from graphpriv.data.graph import sample_absent_pairs

    n = 30
    total = n * (n - 1) // 2
    codes = np.delete(np.arange(total), [3, 100, 200, 401])  # four pairs are not edges
    pairs = sample_absent_pairs(codes, n, 4, np.random.default_rng(0))
    assert sorted(_codes(pairs, n).tolist()) == [3, 100, 200, 401]
    assert sample_absent_pairs(codes, n, 0, np.random.default_rng(0)).shape == (2, 0)
    with pytest.raises(ValueError, match="cannot draw 5 pairs"):
        sample_absent_pairs(codes, n, 5, np.random.default_rng(0))
    for bad in (codes[::-1], np.array([1, 1, 5])):  # unsorted or repeated codes would pass edges off as non-edges
        with pytest.raises(ValueError, match="sorted and distinct"):
            sample_absent_pairs(bad, n, 1, np.random.default_rng(0))
    # uniform: on an empty graph of 5 nodes, every one of the 10 pairs is drawn about as often
    counts = np.zeros(10)
    for seed in range(2000):
        counts[_codes(sample_absent_pairs(np.empty(0, np.int64), 5, 2, np.random.default_rng(seed)), 5)] += 1
    assert counts.min() > 330 and counts.max() < 470  # expected 400 each


@pytest.mark.usefixtures("one_thread")
def test_gae_keeps_pyg_sampling_up_to_the_threshold_and_samples_above():
    """Up to ``sample_above`` edges the GAE is today's (every edge, PyG's negatives): the same
    embeddings with or without the sampling settings. Above it, each epoch reads a sample: still
    reproducible by seed, and the two communities still apart."""
    edge_index, n = _two_cliques()
    full = gae_embeddings(edge_index, n, None, epochs=60, seed=1)
    assert torch.equal(full, gae_embeddings(edge_index, n, None, epochs=60, seed=1, edges_per_epoch=None))
    sampled = gae_embeddings(edge_index, n, None, epochs=60, seed=1, edges_per_epoch=20, sample_above=40)
    assert not torch.equal(full, sampled)
    assert torch.equal(sampled, gae_embeddings(edge_index, n, None, epochs=60, seed=1, edges_per_epoch=20,
                                               sample_above=40))
    z = torch.nn.functional.normalize(gae_embeddings(edge_index, n, None, epochs=150, seed=1, edges_per_epoch=20,
                                                     sample_above=40), dim=1)
    sim = z @ z.T
    assert sim[1:8, 1:8].mean() > sim[1:8, 9:16].mean() + 0.2
    with pytest.raises(ValueError, match="'edges_per_epoch' must be in"):
        gae_embeddings(edge_index, n, None, edges_per_epoch=50, sample_above=40)


def test_gae_memo_returns_what_a_fresh_training_gives(monkeypatch):
    from graphpriv.nn import gae

    monkeypatch.setattr(gae, "_MEMO", Memo(gae.MEMO_SIZE))
    trainings = []
    real = gae._train
    monkeypatch.setattr(gae, "_train", lambda *a, **k: trainings.append(k["seed"]) or real(*a, **k))
    edge_index, n = _two_cliques()
    first = gae_embeddings(edge_index, n, None, epochs=30, seed=2)
    fresh = real(edge_index, n, None, hidden=128, out=64, epochs=30, lr=0.001, seed=2,
                 edges_per_epoch=gae.EDGES_PER_EPOCH, sample_above=gae.SAMPLE_ABOVE)
    assert torch.equal(first, fresh)  # deterministic: the memo holds what training again gives
    first.add_(1.0)  # a caller's change does not reach the memo
    again = gae_embeddings(edge_index.clone(), n, None, epochs=30, seed=2)
    assert torch.equal(again, fresh) and trainings == [2]
    gae_embeddings(edge_index, n, None, epochs=30, seed=3)  # another seed: trained
    gae_embeddings(edge_index, n, torch.ones(n, 2), epochs=30, seed=2)  # features: trained
    gae_embeddings(edge_index[:, 2:], n, None, epochs=30, seed=2)  # another graph: trained
    assert trainings == [2, 3, 2, 2]
    monkeypatch.setattr(gae, "MEMO_MAX_VALUES", 10)  # results above the cap are not kept
    gae_embeddings(edge_index, n, None, epochs=30, seed=9)
    gae_embeddings(edge_index, n, None, epochs=30, seed=9)
    assert trainings[-2:] == [9, 9] and len(gae._MEMO.items) <= gae.MEMO_SIZE


def test_array_digest_tells_dtype_shape_and_values_apart():
    from graphpriv.memo import array_digest

    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    assert array_digest(a) == array_digest(a.copy()) == array_digest(torch.from_numpy(a))
    assert array_digest(a) != array_digest(a.astype(np.int32))
    assert array_digest(a) != array_digest(a.reshape(3, 2))
    assert array_digest(a, None) != array_digest(None, a) != array_digest(a)
