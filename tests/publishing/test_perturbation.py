import numpy as np
import pytest

from graphpriv.data.graph import pair_codes, undirected_pairs
from graphpriv.publishing import dice, random_perturb
from graphpriv.testing.graphs import random_graph


@pytest.fixture
def graph():
    data = random_graph(120, 0.08, seed=0)
    return undirected_pairs(data.edge_index), data.num_nodes


def _codes(pairs, n):
    return set(pair_codes(pairs, n).tolist())


def test_random_perturb_swaps_exactly_the_budget(graph):
    pairs, n = graph
    out = random_perturb(pairs, n, ratio=0.25, rng=np.random.default_rng(0))
    budget = round(0.25 * pairs.shape[1])
    before, after = _codes(pairs, n), _codes(out, n)
    assert out.shape == pairs.shape and (out[0] < out[1]).all() and len(after) == out.shape[1]
    assert len(before - after) == budget and len(after - before) == budget
    assert np.array_equal(random_perturb(pairs, n, ratio=0.0, rng=np.random.default_rng(0)),
                          pairs[:, np.argsort(pair_codes(pairs, n))])
    with pytest.raises(ValueError, match="ratio"):
        random_perturb(pairs, n, ratio=1.5, rng=np.random.default_rng(0))


def test_dice_deletes_at_sensitive_nodes_and_adds_elsewhere(graph):
    pairs, n = graph
    sensitive = np.array([[0, 3, 10], [5, 7, 11]])
    s_nodes = set(sensitive.ravel().tolist())
    out = dice(pairs, n, sensitive, ratio=0.1, rng=np.random.default_rng(1))
    before, after = _codes(pairs, n), _codes(out, n)
    removed = np.array(sorted(before - after))
    added = np.array(sorted(after - before))
    assert removed.size == added.size > 0 and len(after) == out.shape[1] == pairs.shape[1]
    from graphpriv.data.graph import decode_pairs

    rem, add = decode_pairs(removed, n), decode_pairs(added, n)
    assert all(a in s_nodes or b in s_nodes for a, b in rem.T.tolist())  # deleted at S
    assert not any(a in s_nodes or b in s_nodes for a, b in add.T.tolist())  # added outside S


def test_dice_is_capped_by_the_edges_at_sensitive_nodes(graph):
    pairs, n = graph
    sensitive = np.array([[0], [1]])
    touching = int(((pairs == 0) | (pairs == 1)).any(axis=0).sum())
    out = dice(pairs, n, sensitive, ratio=1.0, rng=np.random.default_rng(2))
    assert not ((out == 0) | (out == 1)).any()  # every edge at 0 and 1 removed
    assert out.shape[1] == pairs.shape[1] and len(_codes(pairs, n) - _codes(out, n)) == touching
