"""Neighbourhood link-prediction heuristics on sparse adjacency: CN, AA, RA and RA3.

Source: Liben-Nowell & Kleinberg, "The link-prediction problem for social networks" (JASIST 2007)
for CN and AA (Adamic & Adar, Social Networks 2003); Zhou, Lü & Zhang, "Predicting missing links
via local information" (Eur. Phys. J. B 2009) for RA; PPGSL paper (Wu et al., TKDE 2025) Table III;
Kovács et al., "Network-based prediction of protein interactions" (Nature Communications 2019) for
the length-3 paths behind RA3 (:func:`resource_allocation_paths3`).

All scores are computed for a batch of pairs at once: the rows ``A[u]`` and ``A[v]`` of every pair
are gathered as two sparse ``[P, N]`` matrices, multiplied elementwise (their common neighbours)
and reduced against a per-node weight vector. Work and memory are O(sum of the pairs' degrees);
there is no Python loop per pair and no ``N x N`` product.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from graphpriv.data.validation import check_node_pairs

__all__ = ["adamic_adar", "adamic_adar_weights", "common_neighbours", "resource_allocation", "resource_allocation_paths3",
           "weighted_common_neighbours"]


def _check(adj: sp.spmatrix, pairs: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1]:
        raise ValueError(f"adjacency must be square, got shape {adj.shape}")
    pairs = check_node_pairs(pairs, adj.shape[0])
    adj = sp.csr_matrix(adj)
    if adj.data.size and not np.all(adj.data == 1):
        adj = adj.copy()
        adj.data[:] = 1
    return adj, pairs


def weighted_common_neighbours(adj: sp.spmatrix, pairs: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """``sum_{z in N(u) ∩ N(v)} w(z)`` for every pair (``w = 1`` when ``weights`` is None).

    Args:
        adj: Symmetric adjacency ``[N, N]`` (nonzeros are edges; values are ignored).
        pairs: ``[2, P]`` int node ids. weights: ``[N]`` float per-node weight, or None.

    Returns:
        ``[P]`` float64 scores.

    Raises:
        ValueError: non-square adjacency, pairs not ``[2, P]`` or ids out of range.
    """
    adj, pairs = _check(adj, pairs)
    if pairs.shape[1] == 0:
        return np.zeros(0)
    common = adj[pairs[0]].multiply(adj[pairs[1]]).tocsr()
    w = np.ones(adj.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    return np.asarray(common @ w, dtype=np.float64).ravel()


def common_neighbours(adj: sp.spmatrix, pairs: np.ndarray) -> np.ndarray:
    """CN(u, v) = |N(u) ∩ N(v)|, ``[2, P] -> [P]`` float64 (PPGSL Table III, first order)."""
    return weighted_common_neighbours(adj, pairs, None)


def _degree(adj: sp.spmatrix) -> np.ndarray:
    return np.asarray((sp.csr_matrix(adj) != 0).sum(axis=1), dtype=np.float64).ravel()


def adamic_adar(adj: sp.spmatrix, pairs: np.ndarray) -> np.ndarray:
    """AA(u, v) = sum over common neighbours z of 1 / log |N(z)|, ``[2, P] -> [P]``.

    A common neighbour of two distinct nodes has degree >= 2, so the log is positive; degree-1
    nodes get weight 0 (they can only be a common neighbour of a pair (u, u)).
    """
    return weighted_common_neighbours(adj, pairs, adamic_adar_weights(_degree(adj)))


def adamic_adar_weights(degree: np.ndarray) -> np.ndarray:
    """Per-node AA weight 1 / ln deg(z) (0 for degree <= 1), ``[N] -> [N]`` float64."""
    degree = np.asarray(degree, dtype=np.float64)
    w = np.zeros_like(degree)
    w[degree > 1] = 1.0 / np.log(degree[degree > 1])
    return w


def _inverse_degree(adj: sp.spmatrix) -> np.ndarray:
    """``[N]`` 1 / |N(z)| per node (0 for isolated nodes): RA's weight, and RA3's per interior node."""
    deg = _degree(adj)
    return np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)


def resource_allocation(adj: sp.spmatrix, pairs: np.ndarray) -> np.ndarray:
    """RA(u, v) = sum over common neighbours z of 1 / |N(z)|, ``[2, P] -> [P]``."""
    return weighted_common_neighbours(adj, pairs, _inverse_degree(adj))


def resource_allocation_paths3(adj: sp.spmatrix, pairs: np.ndarray, *, batch_size: int = 4096) -> np.ndarray:
    """RA3(u, v) = sum over simple paths u - x - y - v of 1 / (|N(x)| |N(y)|), ``[2, P] -> [P]``.

    The length-3 paths of Kovács et al. (Nature Communications 2019; their L3 weighs a path by
    1 / sqrt(|N(x)| |N(y)|)), weighted as resource allocation weighs a common neighbour: each
    interior node divides by its degree. That weight is what bounds one edge's total influence on
    the scores of all pairs (:data:`graphpriv.privacy.influence.RA3_INFLUENCE`). A path is simple:
    u, x, y, v distinct, so the edge (u, v) itself never enters its own score (a training edge
    scores as a held-out one would, on the graph without it). A pair (u, u) scores 0.

    Computed as the rows of ``A D^-1 A`` for a batch of sources, dotted with the rows of ``A D^-1``
    of the targets; walks that revisit u or v (possible only when u ~ v) are subtracted. Work and
    memory are O(the batch's two-hop neighbourhoods); no ``N x N`` product.

    Args:
        adj: Symmetric adjacency ``[N, N]`` (nonzeros are edges; values are ignored).
        pairs: ``[2, P]`` int node ids. batch_size: sources per sparse product (speed and memory only).

    Returns:
        ``[P]`` float64 scores >= 0.

    Raises:
        ValueError: non-square adjacency, pairs not ``[2, P]`` or ids out of range.
    """
    adj, pairs = _check(adj, pairs)
    out = np.zeros(pairs.shape[1])
    if pairs.shape[1] == 0:
        return out
    inv = _inverse_degree(adj)
    scaled = (adj @ sp.diags(inv)).tocsr()  # A D^-1: row v, column y holds A_vy / d_y
    for start in range(0, pairs.shape[1], batch_size):
        u, v = pairs[0, start:start + batch_size], pairs[1, start:start + batch_size]
        two_hop = (scaled[u] @ adj).tocsr()  # [b, N]: sum_x A_ux A_xy / d_x
        out[start:start + u.size] = np.asarray(two_hop.multiply(scaled[v]).sum(axis=1)).ravel()
    u, v = pairs
    linked = np.asarray(adj[u, v]).ravel() != 0
    if linked.any():  # walks u-v-y-v and u-x-u-v (u-v-u-v counted in both, added back once)
        lu, lv = u[linked], v[linked]
        reach = np.asarray(adj @ inv).ravel()  # sum over neighbours y of 1 / d_y
        out[linked] -= inv[lv] * reach[lv] + inv[lu] * reach[lu] - inv[lu] * inv[lv]
    out[u == v] = 0.0
    return np.maximum(out, 0.0)  # float rounding of the subtraction
