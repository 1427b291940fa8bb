"""CN / AA / RA against networkx's definitions and a brute-force count."""

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphpriv.attacks import (
    AdamicAdarAttack,
    CommonNeighboursAttack,
    PublishedGraph,
    ResourceAllocationAttack,
)
from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.linkpred.heuristics import (
    adamic_adar,
    common_neighbours,
    resource_allocation,
)
from graphpriv.testing.graphs import random_graph, to_networkx


def _all_pairs(n):
    u, v = np.triu_indices(n, 1)
    return np.stack([u, v])


@settings(max_examples=25, deadline=None)
@given(n=st.integers(3, 25), p=st.floats(0.05, 0.6), seed=st.integers(0, 10_000))
def test_heuristics_equal_networkx_on_every_pair(n, p, seed):
    data = random_graph(n, p, seed)
    pairs = undirected_pairs(data.edge_index)
    adj = to_csr(pairs, n)
    g = to_networkx(pairs, n)
    everything = _all_pairs(n)
    ebunch = list(map(tuple, everything.T.tolist()))
    cn = np.array([len(list(nx.common_neighbors(g, a, b))) for a, b in ebunch])
    aa = np.array([s for _, _, s in nx.adamic_adar_index(g, ebunch)])
    ra = np.array([s for _, _, s in nx.resource_allocation_index(g, ebunch)])
    np.testing.assert_array_equal(common_neighbours(adj, everything), cn)
    np.testing.assert_allclose(adamic_adar(adj, everything), aa, rtol=1e-12)
    np.testing.assert_allclose(resource_allocation(adj, everything), ra, rtol=1e-12)


def test_heuristics_brute_force_on_a_small_graph():
    # 0-1, 0-2, 1-2, 1-3, 2-3, 3-4: pair (0, 3) shares 1 and 2 (degrees 3 and 3)
    pairs = np.array([[0, 0, 1, 1, 2, 3], [1, 2, 2, 3, 3, 4]])
    adj = to_csr(pairs, 5)
    q = np.array([[0, 1, 0], [3, 4, 4]])
    assert common_neighbours(adj, q).tolist() == [2, 1, 0]
    assert adamic_adar(adj, q) == pytest.approx([2 / math.log(3), 1 / math.log(3), 0])
    assert resource_allocation(adj, q) == pytest.approx([2 / 3, 1 / 3, 0])


def test_attack_classes_wrap_the_heuristics_and_check_input():
    data = random_graph(30, 0.2, 1)
    graph = PublishedGraph.from_data(data)
    q = _all_pairs(30)
    for cls, fn in ((CommonNeighboursAttack, common_neighbours), (AdamicAdarAttack, adamic_adar),
                    (ResourceAllocationAttack, resource_allocation)):
        attack = cls()
        with pytest.raises(Exception, match="call fit"):
            attack.score(q)
        np.testing.assert_array_equal(attack.fit(graph).score(q), fn(graph.adjacency, q))
        with pytest.raises(ValueError, match=r"\[0, 30\)"):
            attack.score(np.array([[0], [30]]))
        with pytest.raises(ValueError, match=r"\[2, P\]"):
            attack.score(np.array([0, 1, 2]))
