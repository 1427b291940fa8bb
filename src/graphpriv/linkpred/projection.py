"""Degree projection G -> G^theta.

Source: DPLP (Ran, Ye, Hu, Huang, Xu, Fu, "Differentially Private Graph Neural Networks for Link
Prediction"), Sec. IV-B.1 and Algorithm 1, lines 9-15 (PROJECTION).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def project_degree(pairs: np.ndarray, num_nodes: int, *, theta: int, rng: np.random.Generator) -> np.ndarray:
    """Bound every node's degree by ``theta``.

    Nodes are visited in a uniformly random order; a visited node keeps a uniformly random subset
    of at most ``theta`` of its *current* neighbours and the other edges are deleted. Deletions
    only lower degrees, so the result has maximum degree <= theta.

    Args:
        pairs: Undirected edges ``[2, E]`` (each once). num_nodes: N. theta: degree bound >= 1.
        rng: numpy Generator.

    Returns:
        The kept edges, ``[2, E']`` in the input's order (a subset of ``pairs``).

    Raises:
        ValueError: ``theta < 1``.
    """
    if theta < 1:
        raise ValueError(f"'theta' must be >= 1 (got {theta})")
    pairs = np.asarray(pairs, dtype=np.int64)
    num_edges = pairs.shape[1]
    ends = np.concatenate([pairs[0], pairs[1]])
    ids = np.concatenate([np.arange(num_edges), np.arange(num_edges)])
    incidence = sp.csr_matrix((ids + 1, (ends, ids)), shape=(num_nodes, num_edges))
    indptr, edge_ids = incidence.indptr, incidence.indices
    degree = np.diff(indptr)
    alive = np.ones(num_edges, dtype=bool)
    for v in rng.permutation(num_nodes):
        if degree[v] <= theta:
            continue
        incident = edge_ids[indptr[v]:indptr[v + 1]]
        current = incident[alive[incident]]
        if current.size <= theta:
            continue
        drop = rng.choice(current, size=current.size - theta, replace=False)
        alive[drop] = False
    return pairs[:, alive]
