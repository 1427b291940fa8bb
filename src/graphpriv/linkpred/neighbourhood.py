"""h-hop neighbourhood (enclosing) subgraphs, the target edge removed.

Source: SEAL (Zhang & Chen, NeurIPS 2018); DPLP (Ran et al.), Definition 1: the subgraph induced by
Gamma_h(u) union Gamma_h(v).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.csgraph import connected_components

import graphpriv.linkpred._numba_cache  # noqa: F401 (NUMBA_CACHE_DIR set before numba compiles)
from graphpriv.linkpred.buffers import append, grow_to
from graphpriv.linkpred.drnl import drnl_of
from graphpriv.linkpred.paths import _check_links
from graphpriv.progress import Progress, no_progress


@njit(cache=True)
def _ball(indptr, indices, source, h, bfs_id, visit, depth, queue, stamp, mark, members, count,
          limit):  # pragma: no cover - compiled
    """Add Gamma_h(source) to the members of subgraph ``mark``, in BFS order; the search stops once
    it has visited ``limit`` nodes (the size of the source's connected component: nothing is left
    to find, which on a dense graph ends a 2-hop search after a few neighbour lists)."""
    head, tail = 0, 1
    queue[0] = source
    visit[source] = bfs_id
    depth[source] = 0
    while head < tail < limit:
        x = queue[head]
        head += 1
        if depth[x] >= h:
            continue
        for p in range(indptr[x], indptr[x + 1]):
            y = indices[p]
            if visit[y] != bfs_id:
                visit[y] = bfs_id
                depth[y] = depth[x] + 1
                queue[tail] = y
                tail += 1
                if stamp[y] != mark:
                    stamp[y] = mark
                    members, count = append(members, count, y)
                if tail == limit:
                    break
    return members, count


@njit(cache=True)
def _enclose(indptr, indices, u, v, h, i, visit, depth, queue, stamp, members, start, limit):  # pragma: no cover
    """List subgraph ``i``'s members into ``members`` from position ``start``: the targets ``u``,
    ``v`` (in this order), then Gamma_h(u) and Gamma_h(v) in BFS order, each node once (marked
    ``stamp == i``); returns ``(members, end)``."""
    stamp[u] = i
    stamp[v] = i
    members, count = append(members, start, u)
    members, count = append(members, count, v)
    members, count = _ball(indptr, indices, u, h, 2 * i, visit, depth, queue, stamp, i, members, count, limit[u])
    return _ball(indptr, indices, v, h, 2 * i + 1, visit, depth, queue, stamp, i, members, count, limit[v])


@njit(cache=True)
def _induced_edges(indptr, indices, nodes, lo, hi, mark, i, u, v, out_a, out_b, total):  # pragma: no cover
    """Append to ``out_a`` / ``out_b`` (from ``total``) the edges among ``nodes[lo:hi]``, the nodes
    with ``mark == i``, each once (a < b), the target edge (u, v) excluded; returns
    ``(out_a, out_b, total)``."""
    for j in range(lo, hi):
        a = nodes[j]
        out_a = grow_to(out_a, total + indptr[a + 1] - indptr[a])  # room for every edge of a, once
        out_b = grow_to(out_b, out_a.size)
        for p in range(indptr[a], indptr[a + 1]):
            b = indices[p]
            if b > a and mark[b] == i and not ((a == u and b == v) or (a == v and b == u)):
                out_a[total] = a
                out_b[total] = b
                total += 1
    return out_a, out_b, total


@njit(cache=True)
def _search_buffers(n):  # pragma: no cover - compiled
    """``(stamp, visit, queue, depth, members)``: what :func:`_enclose` needs on N nodes."""
    return (np.full(n, -1, np.int64), np.full(n, -1, np.int64), np.empty(n, np.int64), np.empty(n, np.int64),
            np.empty(1024, np.int64))


@njit(cache=True)
def _output_buffers(num_links):  # pragma: no cover - compiled
    """``(node_ptr, edge_ptr, out_a, out_b)``: an extractor's output for ``num_links`` links."""
    return (np.zeros(num_links + 1, np.int64), np.zeros(num_links + 1, np.int64), np.empty(1024, np.int64),
            np.empty(1024, np.int64))


@njit(cache=True)
def _neighbourhood(indptr, indices, us, vs, h, limit):  # pragma: no cover - compiled
    stamp, visit, queue, depth, members = _search_buffers(indptr.size - 1)
    node_ptr, edge_ptr, out_a, out_b = _output_buffers(us.size)
    count = 0
    total = 0
    for i in range(us.size):
        u, v = us[i], vs[i]
        start = count
        members, count = _enclose(indptr, indices, u, v, h, i, visit, depth, queue, stamp, members, start, limit)
        node_ptr[i + 1] = count
        out_a, out_b, total = _induced_edges(indptr, indices, members, start, count, stamp, i, u, v, out_a, out_b,
                                             total)
        edge_ptr[i + 1] = total
    return node_ptr, members[:count], edge_ptr, out_a[:total], out_b[:total]


@njit(cache=True)
def _ball_sizes(indptr, indices, us, vs, h, limit):  # pragma: no cover - compiled
    """``[L]`` node counts of the h-hop enclosing subgraphs (what :func:`_neighbourhood` would list)."""
    stamp, visit, queue, depth, members = _search_buffers(indptr.size - 1)
    sizes = np.empty(us.size, np.int64)
    for i in range(us.size):
        members, count = _enclose(indptr, indices, us[i], vs[i], h, i, visit, depth, queue, stamp, members, 0, limit)
        sizes[i] = count
    return sizes


@njit(cache=True)
def _expand(indptr, indices, queue, head, tail, dist, seen, mark, banned, stamp, level):  # pragma: no cover
    """One BFS layer inside subgraph ``mark`` (nodes with ``stamp == mark``), never entering
    ``banned``: the nodes of ``queue[head:tail]`` (all at distance ``level``) are expanded and the
    new ones appended at distance ``level + 1``; returns the new tail."""
    end = tail
    for k in range(head, end):
        x = queue[k]
        for p in range(indptr[x], indptr[x + 1]):
            y = indices[p]
            if stamp[y] == mark and y != banned and seen[y] != mark:
                seen[y] = mark
                dist[y] = level + 1
                queue[tail] = y
                tail += 1
    return tail


@njit(cache=True)
def _closest(indptr, indices, u, v, i, stamp, members, size, max_nodes, noise, du, dv, seen_u, seen_v,
             queue_u, queue_v, keep, label):  # pragma: no cover - compiled
    """Mark (``keep == i``) the targets and the ``max_nodes - 2`` other members of subgraph ``i``
    with the smallest DRNL labels, ties broken by ``noise`` (members' order), and set ``label``
    for each kept node; unreachable nodes (label 0) come last.

    DRNL labels grow with d = du + dv (then with min(du, dv)), so the search from u (v removed) and
    from v (u removed) runs layer by layer and stops once the nodes with d <= t + 1, all known
    after t layers, are enough: on a dense graph, after one layer (the common neighbours).
    """
    seen_u[u] = i
    du[u] = 0
    queue_u[0] = u
    seen_v[v] = i
    dv[v] = 0
    queue_v[0] = v
    head_u, tail_u, head_v, tail_v = 0, 1, 0, 1
    need = max_nodes - 2
    level = 0
    finished = False
    while True:
        new_u = _expand(indptr, indices, queue_u, head_u, tail_u, du, seen_u, i, v, stamp, level)
        new_v = _expand(indptr, indices, queue_v, head_v, tail_v, dv, seen_v, i, u, stamp, level)
        head_u, tail_u, head_v, tail_v = tail_u, new_u, tail_v, new_v
        level += 1
        finished = head_u == tail_u and head_v == tail_v
        known = 0
        for k in range(1, tail_u):
            y = queue_u[k]
            if seen_v[y] == i and du[y] + dv[y] <= level + 1:
                known += 1
        if known >= need or finished:
            break
    # candidates and their keys: the nodes with d <= level + 1 (early stop), or every member
    cand = np.empty(size, np.int64)
    key = np.empty(size, np.int64)
    order_noise = np.empty(size, np.float64)
    c = 0
    for j in range(2, size):
        y = members[j]
        both = seen_u[y] == i and seen_v[y] == i
        if both and (finished or du[y] + dv[y] <= level + 1):
            cand[c] = y
            key[c] = drnl_of(du[y], dv[y])
            order_noise[c] = noise[j]
            c += 1
        elif finished:
            cand[c] = y
            key[c] = np.iinfo(np.int64).max
            order_noise[c] = noise[j]
            c += 1
    by_noise = np.argsort(order_noise[:c], kind="mergesort")
    order = by_noise[np.argsort(key[:c][by_noise], kind="mergesort")]
    keep[u] = i
    keep[v] = i
    label[u] = 1
    label[v] = 1
    for r in range(min(need, c)):
        y = cand[order[r]]
        keep[y] = i
        label[y] = 0 if key[order[r]] == np.iinfo(np.int64).max else key[order[r]]


@njit(cache=True)
def _neighbourhood_capped(indptr, indices, us, vs, h, limit, max_nodes, noise, full_ptr):  # pragma: no cover
    """:func:`_neighbourhood` with every subgraph above ``max_nodes`` nodes cut to its closest
    ones (:func:`_closest`); returns also the DRNL labels of the cut subgraphs' nodes (computed in
    the whole subgraph; -1 for the nodes of the subgraphs left whole)."""
    n = indptr.size - 1
    stamp, visit, queue, depth, members = _search_buffers(n)
    node_ptr, edge_ptr, out_a, out_b = _output_buffers(us.size)
    keep = np.full(n, -1, np.int64)
    seen_u = np.full(n, -1, np.int64)
    seen_v = np.full(n, -1, np.int64)
    label = np.empty(n, np.int64)
    queue_v = np.empty(n, np.int64)
    du = np.empty(n, np.int64)
    dv = np.empty(n, np.int64)
    nodes = np.empty(1024, np.int64)
    z = np.empty(1024, np.int64)
    count = 0
    total = 0
    for i in range(us.size):
        u, v = us[i], vs[i]
        members, size = _enclose(indptr, indices, u, v, h, i, visit, depth, queue, stamp, members, 0, limit)
        capped = size > max_nodes
        if capped:
            _closest(indptr, indices, u, v, i, stamp, members, size, max_nodes,
                     noise[full_ptr[i]:full_ptr[i + 1]], du, dv, seen_u, seen_v, queue, queue_v, keep, label)
        nodes = grow_to(nodes, count + size)
        z = grow_to(z, nodes.size)
        for j in range(size):
            a = members[j]
            if not capped:
                keep[a] = i
            if keep[a] == i:
                nodes[count] = a
                z[count] = label[a] if capped else -1
                count += 1
        node_ptr[i + 1] = count
        out_a, out_b, total = _induced_edges(indptr, indices, nodes, node_ptr[i], count, keep, i, u, v, out_a, out_b,
                                             total)
        edge_ptr[i + 1] = total
    return node_ptr, nodes[:count], z[:count], edge_ptr, out_a[:total], out_b[:total]


def _component_sizes(adj: sp.csr_matrix) -> np.ndarray:
    """``[N]`` int64: the size of each node's connected component (where a search can stop)."""
    _, comp = connected_components(adj, directed=False)
    return np.bincount(comp)[comp].astype(np.int64)


#: Links per call of the compiled extractors: each call reports progress, and the results are
#: the same whatever the chunking (every link's subgraph is computed on its own).
CHUNK = 2048


def link_chunks(num_links: int) -> list[slice]:
    """``[slice]``: the links ``0..num_links-1`` in runs of :data:`CHUNK` (none for no link)."""
    return [slice(start, min(start + CHUNK, num_links)) for start in range(0, num_links, CHUNK)]


def concat_parts(parts: list[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """Join the per-chunk outputs of an extractor, ``(node_ptr, nodes, edge_ptr, edge_a, edge_b, *more)``
    each with pointers from 0, into one (pointers offset, arrays concatenated; the arrays after
    the fifth are per node, concatenated as they are). An empty ``parts`` is no link at all."""
    if not parts:
        empty = np.zeros(0, np.int64)
        return np.zeros(1, np.int64), empty, np.zeros(1, np.int64), empty, empty
    if len(parts) == 1:
        return parts[0]
    node_ptr, edge_ptr, node_off, edge_off = [np.zeros(1, np.int64)], [np.zeros(1, np.int64)], 0, 0
    for part in parts:
        node_ptr.append(part[0][1:] + node_off)
        edge_ptr.append(part[2][1:] + edge_off)
        node_off += int(part[0][-1])
        edge_off += int(part[2][-1])
    rest = [np.concatenate([part[i] for part in parts]) for i in (1, 3, 4, *range(5, len(parts[0])))]
    return np.concatenate(node_ptr), rest[0], np.concatenate(edge_ptr), rest[1], rest[2], *rest[3:]


def concat_parts_stacked(parts: list[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """:func:`concat_parts`, with the edges' two rows joined into one ``[2, total_edges]`` int64
    array: ``(node_ptr, nodes, edge_ptr, edges, *more)``. Each chunk's rows are copied once, into
    place (no joined rows stacked again)."""
    empty = np.zeros(0, np.int64)
    node_ptr, nodes, edge_ptr, _, _, *more = concat_parts([(*part[:3], empty, empty, *part[5:]) for part in parts])
    edges = np.empty((2, int(edge_ptr[-1])), np.int64)
    for row in (0, 1):
        if parts:
            np.concatenate([part[3 + row] for part in parts], out=edges[row])
    return (node_ptr, nodes, edge_ptr, edges, *more)


def neighbourhood_subgraphs(adj: sp.csr_matrix, links: np.ndarray, *, h: int, progress: Progress = no_progress):
    """Nodes and edges of the h-hop enclosing subgraphs of many links.

    Args:
        adj: Symmetric CSR adjacency ``[N, N]``. links: ``[2, L]`` target pairs. h: radius >= 1.
        progress: ``progress(links done, L)`` after every :data:`CHUNK` links.

    Returns:
        ``(node_ptr [L+1], nodes [total_nodes], edge_ptr [L+1], edges [2, total_edges])`` with
        global ids; each link's node list starts with u, v; each undirected edge once (a < b),
        the target edge excluded.

    Raises:
        ValueError: h < 1 or links out of range.
    """
    if h < 1:
        raise ValueError(f"'h' must be >= 1 (got {h})")
    links = _check_links(links, adj.shape[0])
    indptr, indices, limit = adj.indptr.astype(np.int64), adj.indices.astype(np.int64), _component_sizes(adj)
    parts = []
    for chunk in link_chunks(links.shape[1]):
        parts.append(_neighbourhood(indptr, indices, links[0, chunk], links[1, chunk], h, limit))
        progress(chunk.stop, links.shape[1])
    return concat_parts_stacked(parts)


def capped_neighbourhood_subgraphs(adj: sp.csr_matrix, links: np.ndarray, *, h: int, max_nodes: int,
                                   rng: np.random.Generator, progress: Progress = no_progress):
    """:func:`neighbourhood_subgraphs`, each subgraph above ``max_nodes`` nodes cut to the targets
    and its ``max_nodes - 2`` nodes with the smallest DRNL labels, without listing its edges.

    The result is :func:`~graphpriv.linkpred.subgraphs.cap_subgraph_size` applied to the whole
    subgraphs, bit for bit and with the same draws (one ``rng.random`` over the nodes of all the
    whole subgraphs, made only when a subgraph is cut): ranks by DRNL label computed in the whole
    subgraph (unreachable nodes last), ties at random; kept nodes in their order, edges between
    them. A cut subgraph's nodes are still listed (a search over the whole ball, twice: once to
    size the draws) and its DRNL ranking needs only the breadth-first layers up to the labels
    kept; only the kept nodes' edges are listed, O(kept nodes' neighbour lists) instead of
    O(the whole subgraph's edges), which is what makes 2-hop subgraphs of a dense release
    (EdgeRand at epsilon 0.5 on Cora: the whole graph, 1.4M edges, each) tractable. Memory: the
    tie-breaking draws hold one float per node of every whole subgraph.

    Args:
        adj: Symmetric CSR adjacency ``[N, N]``. links: ``[2, L]``. h: radius >= 1.
        max_nodes: >= 2. rng: tie-breaking (source: SEAL's ``max_nodes_per_hop`` idea).
        progress: ``progress(links done, L)`` after every :data:`CHUNK` links.

    Returns:
        ``(node_ptr, nodes, edge_ptr, edges, z)``: as :func:`neighbourhood_subgraphs`, and ``z``
        ``[total_nodes]`` the DRNL label of each node of a cut subgraph (-1 for the nodes of the
        subgraphs left whole, which their own labelling gives), or ``None`` when none is cut (the
        first four are then :func:`neighbourhood_subgraphs`' own).

    Raises:
        ValueError: h < 1, max_nodes < 2 or links out of range.
    """
    if max_nodes < 2:
        raise ValueError(f"'max_nodes' must be >= 2 (got {max_nodes})")
    if h < 1:
        raise ValueError(f"'h' must be >= 1 (got {h})")
    links = _check_links(links, adj.shape[0])
    indptr, indices, limit = adj.indptr.astype(np.int64), adj.indices.astype(np.int64), _component_sizes(adj)
    sizes = _ball_sizes(indptr, indices, links[0], links[1], h, limit)
    if sizes.size == 0 or sizes.max() <= max_nodes:
        return (*neighbourhood_subgraphs(adj, links, h=h, progress=progress), None)
    full_ptr = np.concatenate([[0], np.cumsum(sizes)])
    noise = rng.random(int(full_ptr[-1]))  # one draw for all the links, whatever the chunks
    parts = []
    for chunk in link_chunks(links.shape[1]):
        first, last = full_ptr[chunk.start], full_ptr[chunk.stop]
        node_ptr, nodes, z, edge_ptr, a, b = _neighbourhood_capped(
            indptr, indices, links[0, chunk], links[1, chunk], h, limit, max_nodes, noise[first:last],
            full_ptr[chunk.start:chunk.stop + 1] - first)
        parts.append((node_ptr, nodes, edge_ptr, a, b, z))
        progress(chunk.stop, links.shape[1])
    return concat_parts_stacked(parts)
