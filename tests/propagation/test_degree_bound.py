"""The degree cut of node-level aggregation perturbation: the identity within the bound, degrees
at most D above it, and the refill that keeps it from being stable under removing a node."""

import itertools

import numpy as np
import pytest
import torch

from graphpriv.propagation.degree_bound import bound_degree, max_degree_of


def _edge_index(pairs):
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2).T
    return torch.from_numpy(np.concatenate([pairs, pairs[::-1]], axis=1).copy())


def _random_graph(n, p, seed):
    rng = np.random.default_rng(seed)
    return [pair for pair in itertools.combinations(range(n), 2) if rng.random() < p]


def _sorted(edge_index, n):
    return edge_index[:, torch.argsort(edge_index[0] * n + edge_index[1])]


@pytest.mark.parametrize("seed", range(5))
def test_a_graph_within_the_bound_is_kept_whole(seed):
    n = 30
    edge_index = _edge_index(_random_graph(n, 0.15, seed))
    bound = max_degree_of(edge_index, n)
    kept = bound_degree(edge_index, n, bound, generator=torch.Generator().manual_seed(seed))
    assert torch.equal(kept, _sorted(edge_index, n))


@pytest.mark.parametrize("seed", range(5))
def test_above_the_bound_every_degree_is_at_most_d_and_only_input_edges_are_kept(seed):
    n, d = 40, 3
    pairs = _random_graph(n, 0.3, seed)
    edge_index = _edge_index(pairs)
    assert max_degree_of(edge_index, n) > d
    kept = bound_degree(edge_index, n, d, generator=torch.Generator().manual_seed(seed))
    assert max_degree_of(kept, n) <= d
    kept_pairs = {tuple(sorted(p)) for p in kept.T.tolist()}
    assert kept_pairs <= set(pairs)
    assert torch.equal(kept, kept.flip(0)[:, torch.argsort(kept[1] * n + kept[0])])  # both directions
    # greedy rounds leave no edge both of whose endpoints still have room
    degree = torch.bincount(kept[0], minlength=n)
    assert not [p for p in set(pairs) - kept_pairs if degree[p[0]] < d and degree[p[1]] < d]


def test_self_loops_and_duplicates_count_once():
    edge_index = torch.tensor([[0, 0, 0, 1, 1, 2], [0, 1, 1, 0, 2, 1]])
    assert max_degree_of(edge_index, 3) == 2
    kept = bound_degree(edge_index, 3, 2, generator=torch.Generator().manual_seed(0))
    assert kept.tolist() == [[0, 0, 1, 1, 2], [0, 1, 0, 2, 1]]


def test_removing_a_node_can_change_which_edges_other_nodes_keep():
    """Why the node-level guarantee is stated for graphs within the bound: hub 0 of degree 3 above
    D = 1 keeps one edge; when the node it kept is removed, it keeps an edge to another node."""
    pairs = [(0, 1), (0, 2), (0, 3)]
    for seed in range(20):
        full = bound_degree(_edge_index(pairs), 4, 1, generator=torch.Generator().manual_seed(seed))
        (kept,) = {tuple(sorted(p)) for p in full.T.tolist()}
        gone = kept[1]
        rest = [p for p in pairs if gone not in p]
        after = bound_degree(_edge_index(rest), 4, 1, generator=torch.Generator().manual_seed(seed))
        assert after.shape[1] == 2  # the hub refilled its slot: an edge between two other nodes appeared


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_a_degree_bound_below_one_is_refused(bad):
    with pytest.raises(ValueError, match="max_degree"):
        bound_degree(_edge_index([(0, 1)]), 2, bad, generator=torch.Generator())
