import numpy as np
import pytest

from graphpriv.attacks import PublishedGraph


def test_published_graph_canonicalises_pairs():
    g = PublishedGraph(np.array([[3, 1, 2, 1, 4], [1, 3, 2, 0, 0]]), 5)
    assert g.pairs.tolist() == [[0, 0, 1], [1, 4, 3]]  # (1,3) once, self-loop dropped, u < v
    assert g.num_edges == 3
    assert g.contains(np.array([[3, 0, 2], [1, 2, 4]])).tolist() == [True, False, False]
    assert g.edge_index.shape == (2, 6)
    assert g.adjacency.nnz == 6


def test_published_graph_rejects_bad_ids_and_features():
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        PublishedGraph(np.array([[0], [3]]), 3)
    with pytest.raises(ValueError, match="rows"):
        PublishedGraph(np.array([[0], [1]]), 3, np.zeros((2, 4)))
