import networkx as nx
import numpy as np

from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.metrics.proximity import pair_distances, pair_proximity
from graphpriv.testing.graphs import random_graph, to_networkx


def test_pair_distances_equal_networkx_bfs_in_small_chunks():
    data = random_graph(80, 0.03, seed=2)  # several components
    pairs = undirected_pairs(data.edge_index)
    g = to_networkx(pairs, 80)
    rng = np.random.default_rng(0)
    q = rng.integers(0, 80, size=(2, 300))
    d = pair_distances(to_csr(pairs, 80), q, max_rows=80 * 7)  # 7 sources per chunk
    lengths = dict(nx.all_pairs_shortest_path_length(g))
    expected = [lengths[a].get(b, np.inf) for a, b in q.T.tolist()]
    np.testing.assert_array_equal(d, expected)
    prox = pair_proximity(to_csr(pairs, 80), q)
    finite = np.isfinite(expected)
    assert prox.disconnected_ratio == 1 - finite.mean()
    assert np.isclose(prox.mean_distance, np.mean(np.asarray(expected)[finite]))
