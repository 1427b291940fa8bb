import numba
import numpy as np
import pytest
from pecanpy.pecanpy import SparseOTF

from graphpriv.data.graph import undirected_pairs
from graphpriv.data.release import PublishedGraph
from graphpriv.linkpred.node2vec import _UniformOTF, node2vec_embeddings
from graphpriv.testing.graphs import random_graph


def _walks(cls, graph: PublishedGraph, seed: int):
    adj = graph.adjacency
    walker = cls(p=1, q=1, workers=1, verbose=False, random_state=seed)
    walker.set_node_ids([str(i) for i in range(graph.num_nodes)])
    walker.indptr, walker.indices = adj.indptr.astype(np.uint32), adj.indices.astype(np.uint32)
    walker.data = adj.data.astype(np.float32)
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return walker.simulate_walks(3, 20)
    finally:
        numba.set_num_threads(threads)


@pytest.mark.parametrize(("n", "p"), [(40, 0.05), (60, 0.3), (30, 0.9)])
def test_uniform_walker_gives_sparse_otf_walks_bit_for_bit(n, p):
    """p = q = 1 on an unweighted graph: the per-degree CDF table draws the same next node as
    SparseOTF's per-step probabilities, for the same single uniform draw (isolated nodes included)."""
    graph = PublishedGraph(undirected_pairs(random_graph(n, p, seed=n).edge_index), n + 3)
    assert _walks(_UniformOTF, graph, 5) == _walks(SparseOTF, graph, 5)


def test_uniform_walker_only_for_unit_weights_and_p_q_one():
    graph = PublishedGraph(undirected_pairs(random_graph(30, 0.2, seed=0).edge_index), 30)
    adj = graph.adjacency
    assert _UniformOTF.fits(adj.data, adj.indptr, 1.0, 1.0)
    assert not _UniformOTF.fits(adj.data, adj.indptr, 0.5, 1.0)
    assert not _UniformOTF.fits(adj.data * 2, adj.indptr, 1.0, 1.0)
    z = node2vec_embeddings(graph, dim=8, walk_length=10, num_walks=2, seed=1)
    assert z.shape == (30, 8) and np.isfinite(z).all()
