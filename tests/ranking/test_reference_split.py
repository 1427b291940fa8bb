"""The released DPLP code's ranking protocol (reference_split): its invariants on random graphs."""

import networkx as nx
import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphpriv.data.graph import to_csr
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.ranking.reference import reference_split, two_walk_reach


def _data(graph):
    edges = torch.tensor(list(graph.edges), dtype=torch.long).T
    return Data(edge_index=torch.cat([edges, edges.flip(0)], dim=1), num_nodes=graph.number_of_nodes())


@pytest.fixture(scope="module")
def graph():
    return nx.gnp_random_graph(80, 0.15, seed=4)


def test_two_walk_reach_counts_distinct_walk_ends(graph):
    adj = to_csr(np.array(graph.edges).T, 80)
    expected = [len({w for v in graph[u] for w in graph[v]}) for u in range(80)]
    np.testing.assert_array_equal(two_walk_reach(adj), expected)


def test_the_split_keeps_the_released_codes_rules(graph):
    s = reference_split(_data(graph), seed=1)
    n, full, train = s.num_nodes, s.full, s.train
    assert s.queries.size > 10
    reach = two_walk_reach(full)
    threshold = np.sort(reach)[::-1][int(0.8 * n) - 1]
    assert (reach[s.queries] >= threshold).all()
    held = {}
    for i, q in enumerate(s.queries):
        cand, lab = s.test_of(i)
        assert (full[q, cand[lab == 1]].toarray() == 1).all()
        assert (full[q, cand[lab == 0]].toarray() == 0).all() and q not in cand
        assert (lab == 1).sum() == int(0.2 * len(graph[q]))
        held[int(q)] = set(cand[lab == 1].tolist())
        dev_cand, dev_lab, dev_prot = s.dev_of(i)
        assert not set(dev_cand[dev_lab == 1].tolist()) & held[int(q)]
        assert not set(dev_cand[dev_lab == 0].tolist()) & set(cand[lab == 0].tolist())
        for labels, prot in ((lab, s.test_protected[s.test_ptr[i]:s.test_ptr[i + 1]]), (dev_lab, dev_prot)):
            assert ((labels == 1) & ~prot).any() and (labels == 0).any()
    # a held-out edge (q, u) stays visible iff u is a query that did not hold (u, q) out
    checked = 0
    for q, pos in held.items():
        for u in pos:
            if u in held:
                assert (train[q, u] == 1) == (q not in held[u])
                checked += 1
    assert checked > 20
    prot = {tuple(p) for p in s.protected.T}
    train_edges = {tuple(p) for p in np.argwhere(np.triu(train.toarray()))}
    public_edges = {tuple(p) for p in np.argwhere(np.triu(s.public.toarray()))}
    dev_edges = {tuple(p) for p in np.argwhere(np.triu(s.dev.toarray()))}
    assert prot <= train_edges and public_edges == train_edges - prot and dev_edges <= train_edges
    assert len(prot) == len(train_edges) - int(0.7 * len(train_edges))
    np.testing.assert_array_equal(s.own_test, np.bincount(s.protected.ravel(), minlength=n))


def test_bad_shares_and_hopeless_graphs_are_refused(graph):
    with pytest.raises(ConfigError, match="dev_fraction"):
        reference_split(_data(graph), dev_fraction=1.0, seed=0)
    with pytest.raises(DatasetError, match="no query"):
        reference_split(_data(nx.path_graph(6)), seed=0)
