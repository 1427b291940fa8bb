"""Seeded, leak-free splits (specs/common.md "Splits").

All randomness comes from ``numpy.random.default_rng(seed)``: the same seed gives the same split.
Edges are handled as undirected pairs (u < v), so no reverse edge can cross a split.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch_geometric.data import Data

from graphpriv.data.graph import decode_pairs, pair_codes, undirected_pairs
from graphpriv.errors import DatasetError


def _check_ratio(name: str, value: float) -> None:
    if not 0 <= value < 1:
        raise ValueError(f"'{name}' must be in [0, 1) (got {value})")


def sample_non_edges(num_nodes: int, count: int, *, forbidden: np.ndarray,
                     rng: np.random.Generator) -> np.ndarray:
    """Uniform distinct node pairs that are not in ``forbidden`` and not self-loops.

    Args:
        num_nodes: N. count: how many pairs. forbidden: ``[2, F]`` pairs to avoid (any order).
        rng: numpy Generator.

    Returns:
        ``[2, count]`` int64 pairs with u < v.

    Raises:
        DatasetError: fewer than ``count`` non-edges exist.
    """
    total = num_nodes * (num_nodes - 1) // 2
    banned = np.unique(pair_codes(forbidden, num_nodes)) if forbidden.size else np.empty(0, np.int64)
    if total - banned.size < count:
        raise DatasetError(f"cannot sample {count} non-edges: only {total - banned.size} exist")
    chosen = np.empty(0, dtype=np.int64)
    while chosen.size < count:
        draw = rng.integers(0, total, size=2 * (count - chosen.size) + 16)
        draw = draw[~np.isin(draw, banned)]
        _, first = np.unique(draw, return_index=True)
        draw = draw[np.sort(first)]
        chosen = np.concatenate([chosen, draw[~np.isin(draw, chosen)]])
    return decode_pairs(chosen[:count], num_nodes)


@dataclass(frozen=True)
class LinkSplit:
    """Link-prediction split. All arrays are ``[2, n]`` int64 pairs with u < v.

    ``train_edge_index`` is the training graph (each undirected edge once); val/test positives are
    removed from it; negatives are non-edges of the full graph, disjoint across val and test.
    """

    num_nodes: int
    train_edge_index: np.ndarray
    val_pos: np.ndarray
    val_neg: np.ndarray
    test_pos: np.ndarray
    test_neg: np.ndarray


def link_split(data: Data, *, val_ratio: float = 0.05, test_ratio: float = 0.10, seed: int) -> LinkSplit:
    """Hold out val/test positive edges and sample equally many non-edges (default 85/5/10).

    Raises:
        ValueError: ratios outside [0, 1) or summing to >= 1. DatasetError: too few edges.
    """
    _check_ratio("val_ratio", val_ratio)
    _check_ratio("test_ratio", test_ratio)
    if val_ratio + test_ratio >= 1:
        raise ValueError(f"val_ratio + test_ratio must be < 1 (got {val_ratio + test_ratio})")
    rng = np.random.default_rng(seed)
    pairs = undirected_pairs(data.edge_index)
    n_val, n_test = int(round(val_ratio * pairs.shape[1])), int(round(test_ratio * pairs.shape[1]))
    if pairs.shape[1] - n_val - n_test < 1:
        raise DatasetError(f"{data.name}: too few edges ({pairs.shape[1]}) to split")
    perm = rng.permutation(pairs.shape[1])
    val_pos, test_pos = pairs[:, perm[:n_val]], pairs[:, perm[n_val:n_val + n_test]]
    train = pairs[:, np.sort(perm[n_val + n_test:])]
    neg = sample_non_edges(data.num_nodes, n_val + n_test, forbidden=pairs, rng=rng)
    return LinkSplit(data.num_nodes, train, val_pos, neg[:, :n_val], test_pos, neg[:, n_val:])


@dataclass(frozen=True)
class SensitiveLinkSplit:
    """PPGSL protocol: the published graph lacks both the sensitive links E_s and the LP test edges."""

    num_nodes: int
    published_edge_index: np.ndarray
    sensitive_pos: np.ndarray
    sensitive_neg: np.ndarray
    test_pos: np.ndarray
    test_neg: np.ndarray


def sensitive_link_split(data: Data, *, sensitive_ratio: float = 0.10, test_ratio: float = 0.10,
                         seed: int) -> SensitiveLinkSplit:
    """Mask ``sensitive_ratio`` of edges as E_s and a disjoint ``test_ratio`` as LP test positives.

    Negatives (equal numbers, disjoint) are non-edges of the full graph.
    """
    ls = link_split(data, val_ratio=sensitive_ratio, test_ratio=test_ratio, seed=seed)
    return SensitiveLinkSplit(ls.num_nodes, ls.train_edge_index, ls.val_pos, ls.val_neg,
                              ls.test_pos, ls.test_neg)


@dataclass(frozen=True)
class ProtectedPairs:
    """DPLP-rank protocol: a fraction sigma_prot of the edges is protected."""

    protected: np.ndarray
    non_protected: np.ndarray


def protected_pairs(data: Data, *, sigma_prot: float, seed: int) -> ProtectedPairs:
    """Mark ``round(sigma_prot * |E|)`` uniformly chosen edges as protected (``[2, n]`` u < v)."""
    if not 0 <= sigma_prot <= 1:
        raise ValueError(f"'sigma_prot' must be in [0, 1] (got {sigma_prot})")
    pairs = undirected_pairs(data.edge_index)
    perm = np.random.default_rng(seed).permutation(pairs.shape[1])
    cut = int(round(sigma_prot * pairs.shape[1]))
    return ProtectedPairs(pairs[:, np.sort(perm[:cut])], pairs[:, np.sort(perm[cut:])])


@dataclass(frozen=True)
class NodeSplit:
    """Node split. Index arrays are int64; ``train_edge_index`` / ``test_edge_index`` (u < v) are set
    for inductive splits: the edges inside each part, every edge between the parts removed."""

    train_idx: np.ndarray
    val_idx: np.ndarray
    test_idx: np.ndarray
    inductive: bool
    train_edge_index: np.ndarray | None = None
    test_edge_index: np.ndarray | None = None


def node_split(data: Data, *, train_ratio: float = 0.8, val_ratio: float = 0.0, seed: int,
               inductive: bool = False) -> NodeSplit:
    """Random node split; with ``inductive=True`` cross edges between train and the rest are dropped.

    For inductive splits, validation nodes belong to the test side's graph.
    """
    if not 0 < train_ratio < 1:
        raise ValueError(f"'train_ratio' must be in (0, 1) (got {train_ratio})")
    _check_ratio("val_ratio", val_ratio)
    if train_ratio + val_ratio >= 1:
        raise ValueError("train_ratio + val_ratio must be < 1")
    perm = np.random.default_rng(seed).permutation(data.num_nodes)
    n_train, n_val = int(round(train_ratio * data.num_nodes)), int(round(val_ratio * data.num_nodes))
    train, val, test = (np.sort(a) for a in (perm[:n_train], perm[n_train:n_train + n_val],
                                              perm[n_train + n_val:]))
    if not inductive:
        return NodeSplit(train, val, test, False)
    pairs = undirected_pairs(data.edge_index)
    side = np.zeros(data.num_nodes, dtype=bool)
    side[train] = True
    in_train = side[pairs[0]] & side[pairs[1]]
    in_rest = ~side[pairs[0]] & ~side[pairs[1]]
    return NodeSplit(train, val, test, True, pairs[:, in_train], pairs[:, in_rest])
