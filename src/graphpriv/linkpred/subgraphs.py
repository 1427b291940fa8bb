"""Training and evaluation examples as subgraphs, and their collation into dense padded batches."""

from __future__ import annotations

import enum
from dataclasses import dataclass, fields
from functools import cached_property

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from graphpriv.linkpred.drnl import localize_and_label
from graphpriv.linkpred.local_rows import local_adjacency_rows, local_degrees
from graphpriv.linkpred.neighbourhood import (
    capped_neighbourhood_subgraphs,
    concat_parts_stacked,
    link_chunks,
    neighbourhood_subgraphs,
)
from graphpriv.linkpred.paths import path_subgraph_edge_rows, path_subgraph_nodes
from graphpriv.nn.subgraph_gnn import SparseBatch
from graphpriv.progress import Progress, no_progress


class Extractor(str, enum.Enum):
    """Subgraph extraction function: ``path`` (g_p, radius k) or ``neighbourhood`` (g_n, h hops)."""

    PATH = "path"
    NEIGHBOURHOOD = "neighbourhood"


def _read_only(*arrays: np.ndarray):
    """The arrays, made read-only: a set's per-set caches are shared by every batch of every epoch
    (and, for a kept evaluation set, by every fit that reuses it). One array, or a tuple of them."""
    for array in arrays:
        array.setflags(write=False)
    return arrays[0] if len(arrays) == 1 else arrays


@dataclass(frozen=True)
class SubgraphSet:
    """L subgraphs in flat (CSR-like) arrays.

    Attributes:
        links: Target pairs ``[2, L]`` (global ids). labels: ``[L]`` float (1 = edge, 0 = non-edge).
        node_ptr: ``[L + 1]``; subgraph i's nodes are ``nodes[node_ptr[i]:node_ptr[i+1]]``, with the
            target pair first (local ids 0 and 1). nodes: ``[total_nodes]`` global ids.
        z: ``[total_nodes]`` DRNL labels. edge_ptr: ``[L + 1]``.
        edges: ``[2, total_edges]`` global ids (each undirected edge once, a < b).
        local_edges: ``[2, total_edges]`` local ids aligned with ``edges``.
    """

    links: np.ndarray
    labels: np.ndarray
    node_ptr: np.ndarray
    nodes: np.ndarray
    z: np.ndarray
    edge_ptr: np.ndarray
    edges: np.ndarray
    local_edges: np.ndarray

    def __len__(self) -> int:
        return int(self.links.shape[1])

    def read_only(self) -> SubgraphSet:
        """This set, its arrays made read-only (a set shared between fits); returns ``self``."""
        _read_only(*(getattr(self, field.name) for field in fields(self)))
        return self

    @cached_property
    def degrees(self) -> np.ndarray:
        """``[total_nodes]`` int64: each node's neighbours in its own subgraph (computed once, for
        every batch of every epoch; :func:`~graphpriv.linkpred.local_rows.local_degrees`; read-only)."""
        return _read_only(local_degrees(self.node_ptr, self.edge_ptr, self.local_edges))

    @cached_property
    def target_edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(ptr [L+1], src [K], dst [K])`` int64 local ids: each subgraph's directed edges into its
        targets (local 0 and 1), in subgraph order (computed once; read-only)."""
        owner = np.repeat(np.arange(len(self)), np.diff(self.edge_ptr))
        a, b = self.local_edges
        into_b, into_a = b < 2, a < 2  # (a -> b) and (b -> a)
        src = np.concatenate([a[into_b], b[into_a]])
        dst = np.concatenate([b[into_b], a[into_a]])
        own = np.concatenate([owner[into_b], owner[into_a]])
        order = np.argsort(own, kind="stable")
        ptr = np.concatenate([[0], np.cumsum(np.bincount(own, minlength=len(self)))])
        return _read_only(ptr, src[order], dst[order])

    @cached_property
    def adjacency_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(row_ptr [total_nodes + 1] int64, col [2 total_edges + total_nodes] int32,
        entry_ptr [L + 1] int64)``: each node's row of A + I in its own subgraph, the local ids of
        its neighbours and of itself in increasing order; subgraph i's rows are the contiguous
        entries ``entry_ptr[i]:entry_ptr[i+1]`` (computed once, so that a batch's sparse A + I is a
        gather, not a sort; :func:`~graphpriv.linkpred.local_rows.local_adjacency_rows`; read-only)."""
        row_ptr, col = local_adjacency_rows(self.node_ptr, self.edge_ptr, self.local_edges, self.degrees)
        return _read_only(row_ptr, col, row_ptr[self.node_ptr])

    @property
    def num_nodes_per_subgraph(self) -> np.ndarray:
        """``[L]`` node counts."""
        return np.diff(self.node_ptr)


def extract_subgraphs(adj: sp.csr_matrix, links: np.ndarray, labels: np.ndarray, *,
                      extractor: Extractor, k: int = 2, h: int = 1, max_nodes: int | None = None,
                      rng: np.random.Generator | None = None, progress: Progress = no_progress) -> SubgraphSet:
    """Extract and DRNL-label the subgraph of every link.

    Args:
        adj: Symmetric CSR adjacency ``[N, N]`` of the graph to extract from (the projected
            training graph for training examples; the training graph for evaluation).
        links: ``[2, L]``. labels: ``[L]``. extractor: path or neighbourhood.
        k: path length bound (path extractor). h: hops (neighbourhood extractor).
        max_nodes, rng: neighbourhood extractor only: cut every subgraph above ``max_nodes``
            nodes to its closest ones, ties broken with ``rng``; the same set as
            :func:`cap_subgraph_size` (``max_nodes``, ``rng``) of the whole subgraphs, bit for bit,
            without listing them whole
            (:func:`~graphpriv.linkpred.neighbourhood.capped_neighbourhood_subgraphs`).
        progress: ``progress(links extracted, L)``, every
            :data:`~graphpriv.linkpred.neighbourhood.CHUNK` links (the result does not depend on it).

    Returns:
        :class:`SubgraphSet`; the target edge is never part of its own subgraph.

    Raises:
        ValueError: ``max_nodes`` with the path extractor, or without ``rng``.
    """
    links = np.asarray(links, dtype=np.int64).reshape(2, -1)
    num_nodes = adj.shape[0]
    cut_labels = None
    if max_nodes is not None and (Extractor(extractor) is Extractor.PATH or rng is None):
        raise ValueError("'max_nodes' cuts neighbourhood subgraphs and needs an 'rng' for its ties")
    if Extractor(extractor) is Extractor.PATH:
        node_ptr, nodes, edge_ptr, edges = _path_subgraphs(adj, links, k=k, progress=progress)
    elif max_nodes is not None:
        node_ptr, nodes, edge_ptr, edges, cut_labels = capped_neighbourhood_subgraphs(
            adj, links, h=h, max_nodes=max_nodes, rng=rng, progress=progress)
    else:
        node_ptr, nodes, edge_ptr, edges = neighbourhood_subgraphs(adj, links, h=h, progress=progress)
    local_edges, z = localize_and_label(node_ptr, nodes, edge_ptr, edges[0], edges[1], num_nodes)
    if cut_labels is not None:  # a cut subgraph keeps the labels of the whole one
        z = np.where(cut_labels >= 0, cut_labels, z)
    return SubgraphSet(links, np.asarray(labels, dtype=np.float32), node_ptr, nodes, z, edge_ptr,
                       edges, local_edges)


def _trimmed(array: np.ndarray) -> np.ndarray:
    """``array``, or a copy of it when it is a view of a kernel buffer more than a quarter larger
    (the kernels grow their outputs by doubling): the chunks kept until their join hold no slack."""
    base = array.base
    return array.copy() if isinstance(base, np.ndarray) and base.nbytes > 1.25 * array.nbytes else array


def _path_subgraphs(adj: sp.csr_matrix, links: np.ndarray, *, k: int,
                    progress: Progress) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(node_ptr [L+1], nodes, edge_ptr [L+1], edges [2, E])`` of the path subgraphs, extracted
    :data:`~graphpriv.linkpred.neighbourhood.CHUNK` links at a time; each chunk's edge rows are
    copied once, into their place in ``edges``."""
    parts = []
    for chunk in link_chunks(links.shape[1]):
        edge_ptr, *edges = path_subgraph_edge_rows(adj, links[:, chunk], k=k)
        node_ptr, nodes = path_subgraph_nodes(edge_ptr, edges, links[:, chunk], adj.shape[0])
        parts.append((node_ptr, nodes, edge_ptr, *(_trimmed(row) for row in edges)))
        progress(chunk.stop, links.shape[1])
    return concat_parts_stacked(parts)


def _ranges(ptr: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flat positions of the ranges ptr[i]:ptr[i+1] for i in idx, and their owner (0..len(idx)-1)."""
    lengths = ptr[idx + 1] - ptr[idx]
    owner = np.repeat(np.arange(idx.size), lengths)
    offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(ptr[idx], lengths) + offsets, owner


def collate_dense(subgraphs: SubgraphSet, indices: Tensor | np.ndarray, *,
                  max_label: int) -> tuple[tuple[Tensor, Tensor, Tensor], Tensor]:
    """Pad a batch of subgraphs into dense tensors.

    Args:
        subgraphs: The set. indices: ``[B]`` example ids. max_label: DRNL labels are clamped to it.

    Returns:
        ``((z [B, n] long, adj [B, n, n] float with self-loops on real nodes, mask [B, n] bool),
        y [B] float)`` where n is the largest subgraph in the batch.
    """
    idx = np.asarray(indices, dtype=np.int64)
    sizes = subgraphs.node_ptr[idx + 1] - subgraphs.node_ptr[idx]
    n = int(sizes.max()) if idx.size else 1
    pos, owner = _ranges(subgraphs.node_ptr, idx)
    local = pos - subgraphs.node_ptr[idx][owner]
    z = np.zeros((idx.size, n), dtype=np.int64)
    z[owner, local] = np.minimum(subgraphs.z[pos], max_label)
    mask = np.zeros((idx.size, n), dtype=bool)
    mask[owner, local] = True
    adj = np.zeros((idx.size, n, n), dtype=np.float32)
    epos, eowner = _ranges(subgraphs.edge_ptr, idx)
    a, b = subgraphs.local_edges[:, epos]
    adj[eowner, a, b] = 1.0
    adj[eowner, b, a] = 1.0
    adj[owner, local, local] = 1.0
    y = torch.from_numpy(subgraphs.labels[idx])
    return (torch.from_numpy(z), torch.from_numpy(adj), torch.from_numpy(mask)), y


def collate_sparse(subgraphs: SubgraphSet, indices: Tensor | np.ndarray, *,
                   max_label: int) -> tuple[tuple[SparseBatch], Tensor]:
    """A batch of subgraphs as one disjoint union, without padding (what :func:`collate_dense`
    pads; :class:`~graphpriv.nn.subgraph_gnn.SubgraphGNN` gives both the same scores).

    Work is O(nodes + edges into the targets) of the batch, with the per-node degrees and the
    target edges computed once per set (:attr:`SubgraphSet.degrees`,
    :attr:`SubgraphSet.target_edges`); the batch's full edge list is built only when a model reads it.

    Args:
        subgraphs: The set. indices: ``[B]`` example ids. max_label: DRNL labels are clamped to it.

    Returns:
        ``((batch,), y [B] float)`` with ``batch`` a :class:`~graphpriv.nn.subgraph_gnn.SparseBatch`
        (``T`` nodes; ``width`` the largest subgraph).
    """
    idx = np.asarray(indices, dtype=np.int64)
    sizes = subgraphs.node_ptr[idx + 1] - subgraphs.node_ptr[idx]
    pos, owner = _ranges(subgraphs.node_ptr, idx)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    tptr, tsrc, tdst = subgraphs.target_edges
    tpos, towner = _ranges(tptr, idx)

    def load_edges() -> tuple[Tensor, Tensor]:
        epos, eowner = _ranges(subgraphs.edge_ptr, idx)
        a, b = subgraphs.local_edges[:, epos] + ptr[eowner]
        return torch.from_numpy(np.concatenate([a, b])), torch.from_numpy(np.concatenate([b, a]))

    def load_adjacency() -> tuple[Tensor, Tensor]:
        row_ptr, col, entry_ptr = subgraphs.adjacency_rows
        # a subgraph's rows are contiguous: gather its entries as one range, shifted to its batch position
        entries, entry_owner = _ranges(entry_ptr, idx)
        crow = np.concatenate([[0], np.cumsum(row_ptr[pos + 1] - row_ptr[pos])])
        return torch.from_numpy(crow), torch.from_numpy(col[entries] + ptr[entry_owner])

    batch = SparseBatch(z=torch.from_numpy(np.minimum(subgraphs.z[pos], max_label)), owner=torch.from_numpy(owner),
                        local=torch.from_numpy(pos - subgraphs.node_ptr[idx][owner]), ptr=torch.from_numpy(ptr),
                        degree=torch.from_numpy(subgraphs.degrees[pos].astype(np.float32)),
                        target_src=torch.from_numpy(tsrc[tpos] + ptr[towner]),
                        target_slot=torch.from_numpy(2 * towner + tdst[tpos]),
                        width=int(sizes.max()) if idx.size else 1, load_edges=load_edges,
                        load_adjacency=load_adjacency)
    return (batch,), torch.from_numpy(subgraphs.labels[idx])


def cap_subgraph_size(subgraphs: SubgraphSet, max_nodes: int, rng: np.random.Generator) -> SubgraphSet:
    """Keep at most ``max_nodes`` nodes per subgraph: the target pair and the nodes closest to it.

    Nodes are ranked within their subgraph by DRNL label (smaller = closer to both targets;
    unreachable nodes, label 0, last), ties broken at random; edges between kept nodes are kept.
    Labels are those of the full subgraph. This is SEAL's ``max_nodes_per_hop`` idea for dense
    graphs, where 2-hop enclosing subgraphs approach the whole graph.

    Args:
        subgraphs: The set. max_nodes: >= 2. rng: tie-breaking.

    Returns:
        A new :class:`SubgraphSet` (the same object when no subgraph exceeds the cap).

    Raises:
        ValueError: ``max_nodes < 2``.
    """
    if max_nodes < 2:
        raise ValueError(f"'max_nodes' must be >= 2 (got {max_nodes})")
    sizes = subgraphs.num_nodes_per_subgraph
    if sizes.size == 0 or sizes.max() <= max_nodes:
        return subgraphs
    owner = np.repeat(np.arange(sizes.size), sizes)
    local = np.arange(owner.size) - subgraphs.node_ptr[owner]
    z = subgraphs.z.astype(np.int64)
    key = np.where(local < 2, -1, np.where(z == 0, np.iinfo(np.int64).max, z))
    order = np.lexsort((rng.random(owner.size), key, owner))
    rank = np.empty(owner.size, dtype=np.int64)
    rank[order] = np.arange(owner.size) - subgraphs.node_ptr[owner[order]]
    keep = rank < max_nodes
    # kept nodes in their original order, so the target pair stays at local ids 0 and 1
    new_local = np.cumsum(keep) - 1
    new_sizes = np.bincount(owner[keep], minlength=sizes.size)
    node_ptr = np.concatenate([[0], np.cumsum(new_sizes)])
    new_local = new_local - node_ptr[owner]
    e_sizes = np.diff(subgraphs.edge_ptr)
    e_owner = np.repeat(np.arange(sizes.size), e_sizes)
    a = subgraphs.node_ptr[e_owner] + subgraphs.local_edges[0]
    b = subgraphs.node_ptr[e_owner] + subgraphs.local_edges[1]
    e_keep = keep[a] & keep[b]
    edge_ptr = np.concatenate([[0], np.cumsum(np.bincount(e_owner[e_keep], minlength=sizes.size))])
    return SubgraphSet(subgraphs.links, subgraphs.labels, node_ptr, subgraphs.nodes[keep], subgraphs.z[keep],
                       edge_ptr, subgraphs.edges[:, e_keep],
                       np.stack([new_local[a[e_keep]], new_local[b[e_keep]]]))
