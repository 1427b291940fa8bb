import numpy as np
import pytest

from graphpriv.data.graph import decode_pairs, pair_codes, undirected_pairs
from graphpriv.data.splits import link_split, node_split, protected_pairs, sensitive_link_split
from graphpriv.testing.graphs import random_graph


def _codes(pairs, n):
    return set(pair_codes(pairs, n).tolist())


@pytest.fixture(scope="module")
def graph():
    return random_graph(120, 0.08, seed=3)


def test_link_split_is_leak_free(graph):
    n = graph.num_nodes
    s = link_split(graph, seed=0)
    all_edges = _codes(undirected_pairs(graph.edge_index), n)
    train = _codes(s.train_edge_index, n)
    for held in (s.val_pos, s.test_pos):
        assert not (_codes(held, n) & train), "held-out positive in the training graph"
        assert _codes(held, n) <= all_edges
    for neg in (s.val_neg, s.test_neg):
        assert not (_codes(neg, n) & all_edges), "negative is an edge"
        assert (neg[0] != neg[1]).all()
        assert neg.shape[1] == len(_codes(neg, n)), "duplicate negative"
    assert not (_codes(s.val_neg, n) & _codes(s.test_neg, n))
    assert not (_codes(s.val_pos, n) & _codes(s.test_pos, n))
    assert s.val_neg.shape == s.val_pos.shape and s.test_neg.shape == s.test_pos.shape
    assert len(train) + s.val_pos.shape[1] + s.test_pos.shape[1] == len(all_edges)


def test_same_seed_same_split_other_seed_differs(graph):
    a, b, c = (link_split(graph, seed=s) for s in (5, 5, 6))
    for field in ("train_edge_index", "val_pos", "val_neg", "test_pos", "test_neg"):
        assert np.array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(a.test_pos, c.test_pos)


def test_bad_ratios(graph):
    with pytest.raises(ValueError, match="val_ratio"):
        link_split(graph, val_ratio=1.2, seed=0)
    with pytest.raises(ValueError, match="must be < 1"):
        link_split(graph, val_ratio=0.5, test_ratio=0.5, seed=0)


def test_sensitive_split_masks_both_sets(graph):
    n = graph.num_nodes
    s = sensitive_link_split(graph, seed=1)
    published = _codes(s.published_edge_index, n)
    assert not (_codes(s.sensitive_pos, n) & published)
    assert not (_codes(s.test_pos, n) & published)
    assert not (_codes(s.sensitive_pos, n) & _codes(s.test_pos, n))
    m = undirected_pairs(graph.edge_index).shape[1]
    assert s.sensitive_pos.shape[1] == round(0.1 * m)


def test_protected_pairs_partition_edges(graph):
    n = graph.num_nodes
    p = protected_pairs(graph, sigma_prot=0.3, seed=2)
    edges = _codes(undirected_pairs(graph.edge_index), n)
    assert _codes(p.protected, n) | _codes(p.non_protected, n) == edges
    assert not (_codes(p.protected, n) & _codes(p.non_protected, n))
    assert p.protected.shape[1] == round(0.3 * len(edges))


def test_inductive_node_split_removes_cross_edges(graph):
    s = node_split(graph, train_ratio=0.7, seed=0, inductive=True)
    train = set(s.train_idx.tolist())
    assert train.isdisjoint(s.test_idx.tolist())
    assert len(train) + len(s.test_idx) == graph.num_nodes
    assert all(a in train and b in train for a, b in s.train_edge_index.T.tolist())
    assert all(a not in train and b not in train for a, b in s.test_edge_index.T.tolist())
    pairs = undirected_pairs(graph.edge_index)
    cross = sum((a in train) != (b in train) for a, b in pairs.T.tolist())
    assert s.train_edge_index.shape[1] + s.test_edge_index.shape[1] + cross == pairs.shape[1]


def test_pair_codes_roundtrip():
    n = 1000
    rng = np.random.default_rng(0)
    u = rng.integers(0, n, 5000)
    v = rng.integers(0, n, 5000)
    keep = u != v
    pairs = np.stack([np.minimum(u, v), np.maximum(u, v)])[:, keep]
    assert np.array_equal(decode_pairs(pair_codes(pairs, n), n), pairs)
    big = 410_236
    extremes = np.array([[0, 0, big - 2, 12345], [1, big - 1, big - 1, 400000]])
    assert np.array_equal(decode_pairs(pair_codes(extremes, big), big), extremes)
