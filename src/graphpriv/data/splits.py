"""Seeded, leak-free splits of a graph's edges and nodes.

All randomness comes from ``numpy.random.default_rng(seed)``: the same seed gives the same split.
Edges are handled as undirected pairs (u < v), so no reverse edge can cross a split.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from torch_geometric.data import Data

from graphpriv.data.graph import decode_pairs, pair_codes, undirected_pairs
from graphpriv.errors import ConfigError, DatasetError


def _check_ratio(name: str, value: float) -> None:
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool) \
            or not 0 <= value < 1:
        raise ConfigError(f"{name} must be in [0, 1) (got {value!r}); pass a fraction such as 0.1")


def _graph_name(data: Data) -> str:
    return str(getattr(data, "name", None) or "the graph")


def _check_edge_count(data: Data, held: tuple[tuple[str, float], tuple[str, float]]) -> None:
    """Raise when ``round(ratio * |E|)`` per held-out part leaves a part with a ratio > 0 or the
    training part empty, or when the graph lacks a non-edge per held-out edge (the negatives)."""
    pairs = undirected_pairs(data.edge_index)
    m, n = pairs.shape[1], int(data.num_nodes)
    counts = [round(ratio * m) for _, ratio in held]
    if m - sum(counts) < 1 or any(ratio > 0 and c < 1 for (_, ratio), c in zip(held, counts)):
        need = max(min_split_size(*(ratio for _, ratio in held)), m + 1)
        names = ["train"] + [name.removesuffix("_ratio") for name, ratio in held if ratio > 0]
        parts = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
        given = ", ".join(f"{name}={ratio}" for name, ratio in held)
        raise DatasetError(f"{_graph_name(data)}: too few edges to split: {given} need at least {need} edges for "
                           f"non-empty {parts} parts, the graph has {m}; use a larger graph or other ratios")
    non_edges = n * (n - 1) // 2 - m
    if non_edges < sum(counts):
        raise DatasetError(f"{_graph_name(data)}: too few non-edges for the negatives: the split needs "
                           f"{sum(counts)} node pairs that are not edges (one per held-out edge), the graph "
                           f"({n} nodes, {m} edges) has {non_edges}; use a sparser graph or smaller ratios")


def min_split_size(*ratios: float) -> int:
    """Smallest T such that splitting any total >= T of items into ``round(ratio * total)`` per
    ratio plus the remainder leaves every part non-empty (each part whose ratio is > 0, and the
    remainder).

    Args:
        ratios: the held-out fractions (each in [0, 1), summing to < 1).

    Returns:
        T >= 1 (every total >= T works; the smallest such T unless a ratio is below about 1e-6,
        where a sufficient T is returned instead of searching a million totals).
    """
    positive = [r for r in ratios if r > 0]
    rest = 1.0 - sum(ratios)
    bound = int(np.ceil(max([2.0 / rest, *(1.0 / r for r in positive)]))) + 1
    if bound > 1_000_000:  # tiny ratios: every total >= bound works (round(r T) >= 1 once r T >= 1, and
        return bound      # the remainder T rest - 0.5 k >= 0.5 for T >= 2 / rest, k <= 3 ratios); not the minimum
    totals = np.arange(1, bound + 1, dtype=np.int64)
    held = [np.rint(r * totals).astype(np.int64) for r in ratios]  # numpy rounds half to even, as round()
    ok = totals - sum(held) >= 1
    for r, h in zip(ratios, held):
        if r > 0:
            ok &= h >= 1
    failing = np.flatnonzero(~ok)
    return int(failing[-1]) + 2 if failing.size else 1


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
        raise DatasetError(f"cannot sample {count} non-edges (node pairs that are not edges): a graph on "
                           f"{num_nodes} nodes with {banned.size} edges or excluded pairs has only "
                           f"{total - banned.size}; use a sparser or larger graph, or ask for fewer")
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

    Args:
        data: cleaned graph (``edge_index`` with both directions). val_ratio, test_ratio: held-out
            fractions of the undirected edges, each in [0, 1), summing to < 1. seed: the split's.

    Returns:
        :class:`LinkSplit`; val/test hold ``round(ratio * |E|)`` positives each.

    Raises:
        ConfigError: ratios outside [0, 1) or summing to >= 1. DatasetError: too few edges for
            train, val (when ``val_ratio > 0``) and test (when ``test_ratio > 0``) to be non-empty,
            or too few non-edges for the negatives.
    """
    _check_ratio("val_ratio", val_ratio)
    _check_ratio("test_ratio", test_ratio)
    if val_ratio + test_ratio >= 1:
        raise ConfigError(f"val_ratio + test_ratio must be < 1 (got {val_ratio} + {test_ratio}); lower one of them")
    rng = np.random.default_rng(seed)
    pairs = undirected_pairs(data.edge_index)
    _check_edge_count(data, (("val_ratio", val_ratio), ("test_ratio", test_ratio)))
    n_val, n_test = round(val_ratio * pairs.shape[1]), round(test_ratio * pairs.shape[1])
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

    Args:
        data: cleaned graph. sensitive_ratio, test_ratio: fractions of the undirected edges, each
            in (0, 1), summing to < 1. seed: the split's.

    Returns:
        :class:`SensitiveLinkSplit` (the :func:`link_split` with val as E_s).

    Raises:
        ConfigError: ratios outside (0, 1) or summing to >= 1. DatasetError: too few edges or
            non-edges (the message says how many the ratios need).
    """
    for arg, value in (("sensitive_ratio", sensitive_ratio), ("test_ratio", test_ratio)):
        _check_ratio(arg, value)
        if value == 0:
            raise ConfigError(f"{arg} must be > 0 (got 0); the protocol needs {arg.split('_')[0]} links")
    if sensitive_ratio + test_ratio >= 1:
        raise ConfigError(f"sensitive_ratio + test_ratio must be < 1 (got {sensitive_ratio} + {test_ratio}); "
                          "lower one of them")
    _check_edge_count(data, (("sensitive_ratio", sensitive_ratio), ("test_ratio", test_ratio)))
    ls = link_split(data, val_ratio=sensitive_ratio, test_ratio=test_ratio, seed=seed)
    return SensitiveLinkSplit(ls.num_nodes, ls.train_edge_index, ls.val_pos, ls.val_neg,
                              ls.test_pos, ls.test_neg)


@dataclass(frozen=True)
class ProtectedPairs:
    """DPLP-rank protocol: a fraction sigma_prot of the edges is protected."""

    protected: np.ndarray
    non_protected: np.ndarray


def protected_pairs(data: Data, *, sigma_prot: float, seed: int) -> ProtectedPairs:
    """Mark ``round(sigma_prot * |E|)`` uniformly chosen edges as protected (``[2, n]`` u < v).

    Args:
        data: cleaned graph. sigma_prot: protected fraction in [0, 1]. seed: the choice's.

    Returns:
        :class:`ProtectedPairs` partitioning the undirected edges.

    Raises:
        ConfigError: ``sigma_prot`` outside [0, 1]. DatasetError: no edges, or ``sigma_prot > 0``
            rounding to no protected edge (the message says how many edges it needs).
    """
    if isinstance(sigma_prot, bool) or not isinstance(sigma_prot, (int, float, np.integer, np.floating)) \
            or not 0 <= sigma_prot <= 1:
        raise ConfigError(f"sigma_prot must be in [0, 1] (got {sigma_prot!r}); pass the protected fraction of edges")
    pairs = undirected_pairs(data.edge_index)
    if pairs.shape[1] == 0:
        raise DatasetError(f"{_graph_name(data)}: the graph has no edges to protect; graphpriv needs at least one edge")
    perm = np.random.default_rng(seed).permutation(pairs.shape[1])
    cut = round(sigma_prot * pairs.shape[1])
    if sigma_prot > 0 and cut == 0:
        need = int(np.floor(0.5 / sigma_prot)) + 1  # smallest |E| with round(sigma_prot |E|) >= 1
        raise DatasetError(f"{_graph_name(data)}: sigma_prot={sigma_prot} protects no edge of {pairs.shape[1]}: it "
                           f"needs at least {need} edges; use a larger graph or a larger sigma_prot")
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

    Args:
        data: cleaned graph. train_ratio: in (0, 1). val_ratio: in [0, 1), train + val < 1.
        seed: the split's. inductive: also split the edges.

    Returns:
        :class:`NodeSplit` with ``round(ratio * N)`` train and val nodes, the rest test.

    Raises:
        ConfigError: ratios out of range. DatasetError: too few nodes for non-empty train, val
            (when ``val_ratio > 0``) and test parts (the message says how many are needed).
    """
    if isinstance(train_ratio, bool) or not isinstance(train_ratio, (int, float, np.integer, np.floating)) \
            or not 0 < train_ratio < 1:
        raise ConfigError(f"train_ratio must be in (0, 1) (got {train_ratio!r}); pass a fraction such as 0.8")
    _check_ratio("val_ratio", val_ratio)
    if train_ratio + val_ratio >= 1:
        raise ConfigError(f"train_ratio + val_ratio must be < 1 (got {train_ratio} + {val_ratio}); lower one of them")
    n = int(data.num_nodes)
    n_train, n_val = round(train_ratio * n), round(val_ratio * n)
    if n_train < 1 or n - n_train - n_val < 1 or (val_ratio > 0 and n_val < 1):
        need = max(min_split_size(train_ratio, val_ratio), n + 1)
        parts = "train, val and test" if val_ratio > 0 else "train and test"
        raise DatasetError(f"{_graph_name(data)}: too few nodes to split: train_ratio={train_ratio}, "
                           f"val_ratio={val_ratio} need at least {need} nodes for non-empty {parts} parts, the "
                           f"graph has {n}; use a larger graph or other ratios")
    perm = np.random.default_rng(seed).permutation(n)
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
