"""Cleaning raw graphs into graphpriv's one graph type, a PyG ``Data``, and sparse views of it."""

from __future__ import annotations

import logging
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import torch
from torch_geometric.data import Data

from graphpriv.errors import DatasetError

logger = logging.getLogger("graphpriv.data")

#: Largest node count graphpriv accepts: node-pair codes (:func:`pair_codes`) must fit in int64.
MAX_NODES = 2**31 - 1


class RawGraph(NamedTuple):
    """What a reader returns before cleaning.

    Attributes:
        edge_index: ``[2, E]`` int64 node ids (any direction, duplicates and self-loops allowed).
        num_nodes: Declared node count, or ``None`` to take ``max id + 1``.
        x: Node features ``[N, F]`` or ``None``. y: Labels ``[N]`` or ``None``.
        node_names: Original ids ``[N]`` (defaults to ``0..N-1``).
        notes: Normalisations the reader already made (e.g. a header line skipped), one short
            sentence each; :func:`clean_graph` records them with its own.
        one_per_edge: ``True`` when each column is one undirected edge (an edge-list line), so a
            pair given in both directions is a repeat; ``False`` (PyG, adjacency matrices) when an
            undirected edge is expected in both directions and a one-way pair is a directed edge.
    """

    edge_index: np.ndarray
    num_nodes: int | None = None
    x: np.ndarray | None = None
    y: np.ndarray | None = None
    node_names: np.ndarray | None = None
    notes: tuple[str, ...] = ()
    one_per_edge: bool = False


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _distinct_columns(cols: np.ndarray) -> int:
    """Number of distinct columns of a ``[2, E]`` array."""
    if cols.shape[1] == 0:
        return 0
    lo, hi = int(cols.min()), int(cols.max())
    if 0 <= lo and hi <= MAX_NODES:  # one int64 key per column (hi**2 < 2**63): a plain sort
        keys = np.sort(cols[0] * (hi + 1) + cols[1])
        return 1 + int(np.count_nonzero(keys[1:] != keys[:-1]))
    s = cols[:, np.lexsort((cols[1], cols[0]))]
    return 1 + int(np.count_nonzero((s[:, 1:] != s[:, :-1]).any(axis=0)))


def edge_normalisations(edge_index: np.ndarray, *, one_per_edge: bool = False) -> list[str]:
    """What making ``edge_index`` undirected and simple changes, one short sentence per kind.

    Args:
        edge_index: ``[2, E]`` int64 node ids, as given. one_per_edge: each column is one
            undirected edge (edge-list lines; see :class:`RawGraph`).

    Returns:
        Sentences among ``"N self-loops dropped"``, ``"N duplicate edges dropped"`` and
        ``"N edges given in both directions merged"`` (``one_per_edge``) or ``"N directed edges
        (u, v) without (v, u) symmetrised"`` (otherwise); empty when ``edge_index`` is already
        undirected and simple (both directions of each edge, once each).
    """
    ei = np.asarray(edge_index, dtype=np.int64).reshape(2, -1)
    loops = ei[0] == ei[1]
    rest = ei[:, ~loops]
    directed = _distinct_columns(rest)
    undirected = _distinct_columns(np.sort(rest, axis=0))
    both = directed - undirected  # pairs given in both directions
    notes = []
    if loops.any():
        notes.append(f"{_plural(int(loops.sum()), 'self-loop')} dropped")
    if rest.shape[1] > directed:
        notes.append(f"{_plural(rest.shape[1] - directed, 'duplicate edge')} dropped")
    if one_per_edge and both:
        notes.append(f"{_plural(both, 'edge')} given in both directions merged")
    if not one_per_edge and undirected - both:
        notes.append(f"{_plural(undirected - both, 'directed edge')} (u, v) without (v, u) symmetrised")
    return notes


def simple_edge_index(edge_index: np.ndarray, num_nodes: int, *, name: str,
                      where: str = "fix the file's ids or its declared node count") -> torch.Tensor:
    """Undirected, simple ``edge_index``: symmetrize, drop self-loops and duplicate edges.

    Args:
        edge_index: ``[2, E]`` int64 node ids (any direction). num_nodes: N. name: graph name for
            error messages. where: the fix to suggest for an out-of-range id.

    Returns:
        ``[2, 2|E|]`` int64 tensor, both directions of each edge, sorted by (source, target).

    Raises:
        DatasetError: an id outside ``[0, N)``, or no edge left after dropping self-loops.
    """
    ei = np.asarray(edge_index, dtype=np.int64).reshape(2, -1)
    if ei.size and (ei.min() < 0 or ei.max() >= num_nodes):
        bad = ei[(ei < 0) | (ei >= num_nodes)][0]
        raise DatasetError(f"{name}: node id {bad} is out of range [0, {num_nodes}); {where}")
    ei = ei[:, ei[0] != ei[1]]
    if ei.shape[1] == 0:
        raise DatasetError(f"{name}: the graph has no edges (after dropping self-loops); "
                           "graphpriv needs at least one edge")
    pairs = np.unique(np.sort(ei, axis=0), axis=1)
    both = np.concatenate([pairs, pairs[::-1]], axis=1)
    order = np.lexsort((both[1], both[0]))
    return torch.from_numpy(both[:, order].copy())


def record_normalisations(data: Data, notes: list[str], *, name: str) -> Data:
    """Name the normalisations made to a user's graph.

    Args:
        data: The normalised graph. notes: One short sentence per normalisation (e.g. from
            :func:`edge_normalisations`). name: Graph name that prefixes each logged line.

    Returns:
        ``data``, with ``data.normalisations`` (``list[str]``) = its earlier list (or ``[]``) plus
        ``notes``; each note is logged as one warning line on the ``graphpriv.data`` logger.
    """
    for note in notes:
        logger.warning("%s: %s", name, note)
    data.normalisations = [*(getattr(data, "normalisations", None) or []), *notes]
    return data


def clean_graph(raw: RawGraph, *, name: str, record: bool = False) -> Data:
    """Make a raw graph undirected and simple: symmetrize, drop self-loops and duplicate edges.

    Node ids must already be ``0..N-1`` (readers relabel arbitrary ids and keep the originals in
    ``node_names``); isolated nodes are kept.

    Args:
        raw: The reader's output. name: Dataset id or file name, used in error messages.
        record: Name every normalisation (a user's graph): log it and list it in
            ``data.normalisations`` (the reader's ``raw.notes`` first, then
            :func:`edge_normalisations`). Registry datasets are cleaned without recording.

    Returns:
        ``Data`` with ``edge_index [2, 2|E|]`` (both directions, sorted), ``num_nodes``, optional
        ``x [N, F]`` float and ``y [N]`` long, ``node_names`` (numpy array), ``name`` and, with
        ``record``, ``normalisations`` (``list[str]``, empty when nothing changed).

    Raises:
        DatasetError: ids out of range, a node count above :data:`MAX_NODES`, a graph with no
            edges, or non-finite (NaN or infinite) features.
    """
    ei = np.asarray(raw.edge_index, dtype=np.int64).reshape(2, -1)
    num_nodes = int(raw.num_nodes) if raw.num_nodes is not None else int(ei.max(initial=-1)) + 1
    if num_nodes > MAX_NODES:
        raise DatasetError(f"{name}: {num_nodes} nodes is more than graphpriv supports ({MAX_NODES}); "
                           "declare the real node count")
    data = Data(edge_index=simple_edge_index(ei, num_nodes, name=name), num_nodes=num_nodes)
    if raw.x is not None:
        x = np.asarray(raw.x, dtype=np.float32)
        bad = ~np.isfinite(x).reshape(x.shape[0], -1).all(axis=1) if x.ndim else ~np.isfinite(x).reshape(1)
        if bad.any():
            raise DatasetError(
                f"{name}: node features are not finite (NaN or inf) at {_plural(int(bad.sum()), 'node')}, the "
                f"first node {int(np.flatnonzero(bad)[0])}; impute or clip them (e.g. numpy.nan_to_num) first"
            )
        data.x = torch.from_numpy(x)
    if raw.y is not None:
        data.y = torch.as_tensor(np.asarray(raw.y), dtype=torch.long)
    names = raw.node_names if raw.node_names is not None else np.arange(num_nodes)
    data.node_names = np.asarray(names)
    data.name = name
    if record:
        record_normalisations(data, [*raw.notes, *edge_normalisations(ei, one_per_edge=raw.one_per_edge)],
                              name=name)
    return data


def undirected_pairs(edge_index: torch.Tensor | np.ndarray) -> np.ndarray:
    """Each undirected edge once, as ``[2, E]`` with row 0 < row 1 (int64 numpy)."""
    ei = np.asarray(edge_index, dtype=np.int64)
    return ei[:, ei[0] < ei[1]]


def to_csr(edge_index: torch.Tensor | np.ndarray, num_nodes: int) -> sp.csr_matrix:
    """Symmetric binary CSR adjacency ``[N, N]`` from pairs given in either or both directions."""
    ei = np.asarray(edge_index, dtype=np.int64)
    rows = np.concatenate([ei[0], ei[1]])
    cols = np.concatenate([ei[1], ei[0]])
    adj = sp.csr_matrix((np.ones(rows.size, dtype=np.float32), (rows, cols)), shape=(num_nodes, num_nodes))
    adj.data[:] = 1.0
    adj.sort_indices()
    return adj


def num_undirected_edges(data: Data) -> int:
    """|E| counting each undirected edge once."""
    return int(data.edge_index.size(1) // 2)


def pair_codes(edge_index: np.ndarray, num_nodes: int) -> np.ndarray:
    """Index of each pair {u, v} (u != v) in the row-major strict upper triangle, ``[E]`` int64."""
    u, v = np.minimum(edge_index[0], edge_index[1]), np.maximum(edge_index[0], edge_index[1])
    return u * (2 * num_nodes - u - 1) // 2 + (v - u - 1)


def decode_pairs(codes: np.ndarray, num_nodes: int) -> np.ndarray:
    """Inverse of :func:`pair_codes`: ``[E]`` codes -> ``[2, E]`` pairs with u < v."""
    n = num_nodes
    codes = np.asarray(codes, dtype=np.int64)
    u = (n - 2 - np.floor(np.sqrt(-8.0 * codes + 4 * n * (n - 1) - 7) / 2.0 - 0.5)).astype(np.int64)
    u = np.clip(u, 0, max(n - 2, 0))

    def start(r: np.ndarray) -> np.ndarray:
        return r * (2 * n - r - 1) // 2

    for _ in range(2):  # repair floating-point rounding at row boundaries
        u = np.where(start(u) > codes, u - 1, u)
        u = np.where(start(u + 1) <= codes, u + 1, u)
    return np.stack([u, codes - start(u) + u + 1])


def not_in_sorted(values: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Which of ``values`` are not in ``keys`` (``~np.isin(values, keys)``) by one binary search each.

    Args:
        values: ``[M]`` int64. keys: ``[K]`` sorted int64 (repeats allowed), e.g. pair codes.

    Returns:
        ``[M]`` bool, True where the value is absent from ``keys`` (all True when ``keys`` is empty).
    """
    if keys.size == 0:
        return np.ones(values.shape, dtype=bool)
    return keys[np.minimum(np.searchsorted(keys, values), keys.size - 1)] != values


def sample_absent_pairs(codes: np.ndarray, num_nodes: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` distinct node pairs drawn uniformly among the pairs whose code is not in ``codes``.

    Negative sampling at the speed of the graph: a vectorised rejection over the sorted pair codes
    (:func:`pair_codes`; each batch of uniform codes is checked with one ``searchsorted``, never a
    Python loop per pair), or, when the pairs left are few (more than half of all pairs are in
    ``codes``, or ``count`` is more than half of what is left), a uniform choice from the
    enumerated complement (its size is then at most twice ``codes`` or four times ``count``).

    Args:
        codes: ``[E]`` sorted, distinct int64 pair codes to avoid (e.g. a graph's edges,
            :attr:`graphpriv.data.release.PublishedGraph.codes`). num_nodes: N.
        count: pairs to draw. rng: numpy Generator (the draws are a function of its state).

    Returns:
        ``[2, count]`` int64 pairs with u < v, distinct, none in ``codes``, in random order.

    Raises:
        ValueError: ``codes`` not sorted and distinct, fewer than ``count`` pairs not in
            ``codes``, or ``count < 0``.
    """
    total = num_nodes * (num_nodes - 1) // 2
    codes = np.asarray(codes, dtype=np.int64)
    if codes.size > 1 and not np.all(codes[1:] > codes[:-1]):
        raise ValueError("'codes' must be sorted and distinct (np.unique(pair_codes(pairs, num_nodes)))")
    free = total - codes.size
    if count < 0 or count > free:
        raise ValueError(f"cannot draw {count} pairs outside {codes.size} of the {total} node pairs of a graph on "
                         f"{num_nodes} nodes ({free} left)")
    if count == 0:
        return np.empty((2, 0), dtype=np.int64)
    if 2 * codes.size > total or 2 * count > free:  # dense: draw from the complement itself
        keep = np.ones(total, dtype=bool)
        keep[codes] = False
        return decode_pairs(rng.choice(np.flatnonzero(keep), count, replace=False), num_nodes)
    chosen = np.empty(0, dtype=np.int64)
    while chosen.size < count:
        need = count - chosen.size
        draw = rng.integers(0, total, size=int(need * 1.1 * total / free) + 16)
        distinct, first = np.unique(draw, return_index=True)  # sorted: the lookup below walks codes once
        first = first[not_in_sorted(distinct, codes)]
        draw = draw[np.sort(first)]  # the accepted draws, distinct, in the order drawn
        if chosen.size:
            draw = draw[~np.isin(draw, chosen)]
        chosen = np.concatenate([chosen, draw[:need]])
    return decode_pairs(chosen, num_nodes)
