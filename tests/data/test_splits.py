import numpy as np
import pytest

from graphpriv.data.graph import RawGraph, clean_graph, decode_pairs, not_in_sorted, pair_codes, undirected_pairs
from graphpriv.data.splits import (
    link_split,
    min_split_size,
    node_split,
    protected_pairs,
    sample_non_edges,
    sensitive_link_split,
)
from graphpriv.errors import ConfigError, DatasetError, GraphPrivError
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
    with pytest.raises(ConfigError, match=r"val_ratio must be in \[0, 1\) \(got 1.2\); pass a fraction"):
        link_split(graph, val_ratio=1.2, seed=0)
    with pytest.raises(ConfigError, match=r"val_ratio \+ test_ratio must be < 1 \(got 0.5 \+ 0.5\); lower one"):
        link_split(graph, val_ratio=0.5, test_ratio=0.5, seed=0)
    with pytest.raises(ConfigError, match="train_ratio must be in"):
        node_split(graph, train_ratio=1.0, seed=0)
    with pytest.raises(ConfigError, match=r"train_ratio \+ val_ratio must be < 1"):
        node_split(graph, train_ratio=0.6, val_ratio=0.4, seed=0)
    with pytest.raises(ConfigError, match=r"sigma_prot must be in \[0, 1\]"):
        protected_pairs(graph, sigma_prot=-0.1, seed=0)
    with pytest.raises(ConfigError, match="sensitive_ratio must be > 0"):
        sensitive_link_split(graph, sensitive_ratio=0.0, seed=0)


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


def _path(num_nodes):
    edges = np.stack([np.arange(num_nodes - 1), np.arange(1, num_nodes)])
    return clean_graph(RawGraph(edges, num_nodes=num_nodes), name=f"path{num_nodes}")


def _brute_min(*ratios):
    def ok(total):
        held = [round(r * total) for r in ratios]
        return total - sum(held) >= 1 and all(h >= 1 for r, h in zip(ratios, held) if r > 0)
    return 1 + max((t for t in range(1, 1000) if not ok(t)), default=0)


@pytest.mark.parametrize("ratios", [(0.05, 0.10), (0.0, 0.2), (0.1, 0.1), (0.45, 0.45), (0.8, 0.0), (0.3, 0.3)])
def test_min_split_size_is_the_smallest_working_total(ratios):
    assert min_split_size(*ratios) == _brute_min(*ratios)


def test_too_few_edges_says_how_many_the_split_needs():
    with pytest.raises(DatasetError) as err:
        link_split(_path(3), seed=0)
    assert str(err.value) == ("path3: too few edges to split: val_ratio=0.05, test_ratio=0.1 need at least 11 "
                              "edges for non-empty train, val and test parts, the graph has 2; use a larger graph "
                              "or other ratios")
    with pytest.raises(DatasetError, match="need at least 3 edges for non-empty train and test parts, the graph has 2"):
        link_split(_path(3), val_ratio=0.0, test_ratio=0.2, seed=0)
    with pytest.raises(DatasetError, match="sensitive_ratio=0.1, test_ratio=0.1 need at least 6 edges for non-empty "
                                           "train, sensitive and test parts, the graph has 2"):
        sensitive_link_split(_path(3), seed=0)
    s = link_split(_path(12), seed=0)  # 11 edges: the smallest that works
    assert s.val_pos.shape[1] == 1 and s.test_pos.shape[1] == 1 and s.train_edge_index.shape[1] == 9


def test_too_few_non_edges():
    complete = np.array([(u, v) for u in range(5) for v in range(u + 1, 5)]).T
    k5 = clean_graph(RawGraph(complete, num_nodes=5), name="k5")
    with pytest.raises(DatasetError, match="k5: too few non-edges for the negatives: the split needs 2 node pairs .* "
                                           r"the graph \(5 nodes, 10 edges\) has 0"):
        link_split(k5, val_ratio=0.1, test_ratio=0.1, seed=0)
    with pytest.raises(DatasetError, match="cannot sample 3 non-edges .* has only 0"):
        sample_non_edges(5, 3, forbidden=complete, rng=np.random.default_rng(0))


def test_small_node_and_protected_splits():
    with pytest.raises(DatasetError, match="path2: too few nodes to split: .* need at least 3 nodes .* has 2"):
        node_split(_path(2), train_ratio=0.8, seed=0)
    with pytest.raises(DatasetError, match=r"sigma_prot=0.1 protects no edge of 2: it needs at least 6 edges"):
        protected_pairs(_path(3), sigma_prot=0.1, seed=0)
    assert protected_pairs(_path(7), sigma_prot=0.1, seed=0).protected.shape == (2, 1)
    assert protected_pairs(_path(3), sigma_prot=0.0, seed=0).protected.shape == (2, 0)


@pytest.mark.parametrize("num_nodes", range(2, 23))
def test_tiny_graphs_split_or_fail_clearly(num_nodes):
    data = _path(num_nodes)
    calls = [lambda: link_split(data, seed=0), lambda: link_split(data, val_ratio=0.0, test_ratio=0.2, seed=1),
             lambda: sensitive_link_split(data, seed=0), lambda: node_split(data, seed=0),
             lambda: node_split(data, train_ratio=0.5, val_ratio=0.2, seed=0, inductive=True),
             lambda: protected_pairs(data, sigma_prot=0.3, seed=0)]
    for call in calls:
        try:
            out = call()
        except GraphPrivError as exc:
            assert "\n" not in str(exc) and "need" in str(exc)
            continue
        if hasattr(out, "train_edge_index") and hasattr(out, "val_pos"):
            assert out.train_edge_index.shape[1] and out.test_pos.shape[1] == out.test_neg.shape[1] >= 1
        if hasattr(out, "train_idx"):
            assert out.train_idx.size and out.test_idx.size
        if hasattr(out, "protected"):
            assert out.protected.shape[1] >= 1


@pytest.mark.parametrize("num_keys", [0, 1, 50])
def test_not_in_sorted_is_not_isin(num_keys):
    rng = np.random.default_rng(num_keys)
    keys = np.sort(rng.integers(0, 40, num_keys))  # repeats allowed
    values = rng.integers(-5, 45, 200)  # below, inside and above the keys' range
    assert np.array_equal(not_in_sorted(values, keys), ~np.isin(values, keys))
