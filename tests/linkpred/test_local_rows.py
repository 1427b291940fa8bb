import numpy as np
import pytest

from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.linkpred.local_rows import local_adjacency_rows, local_degrees
from graphpriv.linkpred.subgraphs import Extractor, extract_subgraphs
from graphpriv.testing.graphs import random_graph
from graphpriv.testing.references import local_adjacency_rows_numpy, local_degrees_numpy


def _links(n: int, pairs: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    neg = rng.integers(0, n, size=(2, 60))
    return np.concatenate([pairs[:, :60], neg[:, neg[0] != neg[1]]], axis=1)


@pytest.mark.parametrize("extractor, options", [(Extractor.PATH, {"k": 2}), (Extractor.PATH, {"k": 4}),
                                                (Extractor.NEIGHBOURHOOD, {"h": 1}),
                                                (Extractor.NEIGHBOURHOOD, {"h": 2})])
@pytest.mark.parametrize("n, p, seed", [(40, 0.15, 0), (60, 0.5, 1), (50, 0.9, 2)])
def test_degrees_and_rows_equal_the_numpy_route(extractor, options, n, p, seed):
    pairs = undirected_pairs(random_graph(n, p, seed=seed).edge_index)
    links = _links(n, pairs, seed)
    s = extract_subgraphs(to_csr(pairs, n), links, np.zeros(links.shape[1]), extractor=extractor, **options)
    assert np.array_equal(s.degrees, local_degrees_numpy(s.node_ptr, s.edge_ptr, s.local_edges))
    assert s.degrees.dtype == np.int64
    row_ptr, col, entry_ptr = s.adjacency_rows
    ref_ptr, ref_col = local_adjacency_rows_numpy(s.node_ptr, s.edge_ptr, s.local_edges)
    assert np.array_equal(row_ptr, ref_ptr) and np.array_equal(col, ref_col)
    assert row_ptr.dtype == np.int64 and col.dtype == np.int32
    assert np.array_equal(entry_ptr, row_ptr[s.node_ptr])
    if p == 0.9:  # dense: rows longer than the insertion sort's 32 entries take the other branch
        assert np.diff(row_ptr).max() > 32


def test_rows_of_a_hand_made_set():
    # two subgraphs (local ids): edges 0-2, 1-2 on three nodes, then 0-2, 1-2, 1-3 on four
    node_ptr = np.array([0, 3, 7])
    edge_ptr = np.array([0, 2, 5])
    local_edges = np.array([[0, 1, 0, 1, 1], [2, 2, 2, 2, 3]])
    degrees = local_degrees(node_ptr, edge_ptr, local_edges)
    assert degrees.tolist() == [1, 1, 2, 1, 2, 2, 1]
    row_ptr, col = local_adjacency_rows(node_ptr, edge_ptr, local_edges, degrees)
    rows = [col[row_ptr[t]:row_ptr[t + 1]].tolist() for t in range(7)]
    assert rows == [[0, 2], [1, 2], [0, 1, 2], [0, 2], [1, 2, 3], [0, 1, 2], [1, 3]]


def test_an_empty_set_has_no_rows():
    s = extract_subgraphs(to_csr(np.array([[0], [1]]), 3), np.zeros((2, 0), np.int64), np.zeros(0),
                          extractor=Extractor.PATH, k=3)
    assert len(s) == 0 and s.edges.shape == (2, 0) and s.local_edges.shape == (2, 0)
    row_ptr, col, entry_ptr = s.adjacency_rows
    assert row_ptr.tolist() == [0] and col.size == 0 and entry_ptr.tolist() == [0]
    assert s.degrees.size == 0


def test_inputs_of_the_wrong_shape_are_refused_before_the_kernels():
    node_ptr, edge_ptr, local_edges = np.array([0, 3]), np.array([0, 2]), np.array([[0, 1], [2, 2]])
    with pytest.raises(ValueError, match=r"local_edges must be \[2, edge_ptr\[-1\]\] = \[2, 2\]"):
        local_degrees(node_ptr, edge_ptr, local_edges[:, :1])
    with pytest.raises(ValueError, match="node_ptr and edge_ptr"):
        local_degrees(node_ptr, np.array([0, 1, 2]), local_edges)
    with pytest.raises(ValueError, match=r"degrees must be \[node_ptr\[-1\]\] = \[3\]"):
        local_adjacency_rows(node_ptr, edge_ptr, local_edges, np.array([1, 1]))
