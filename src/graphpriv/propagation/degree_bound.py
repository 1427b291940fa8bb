"""The degree bound of node-level aggregation perturbation: cut an undirected graph to degree <= D.

Source: Sajadmanesh, Shamsabadi, Bellet, Gatica-Perez, "GAP: Differentially Private Graph Neural
Networks with Aggregation Perturbation" (USENIX Security 2023), Sec. 5.2 (node-level privacy: the
degree is bounded by D by edge sampling before aggregation, so that one node reaches at most D
other nodes' aggregates).

The cut keeps every edge of a graph whose degrees are all at most D (it is the identity there:
the node-level guarantee of :mod:`graphpriv.propagation.aggregation_perturbation` is stated for
such graphs). Above the bound it samples: in rounds, every node marks up to its remaining capacity
of its still-open edges at random, an edge marked by both endpoints is kept, and the capacities
shrink; an edge at a full endpoint closes. Every node keeps at most D edges.

What the cut does not give: stability under removing a node from a graph above the bound. A node
that loses a kept neighbour has a free slot, which another of its edges can take (a "refill"),
so the cut graphs of two node-neighbouring inputs can differ in edges between other nodes, as
many as the removed node has neighbours above the bound. The public GAP code's out-degree
sampling has the same property, and GAP's node-level argument does not cover it (Xiang, Wang,
Wang, "Preserving Node-level Privacy in Graph Neural Networks", IEEE S&P 2024, report flaws in
that argument); graphpriv therefore states the node-level guarantee for graphs within the bound
(docs/privacy.md) and says in a fit's report when the input was above it. Tested: identity within the bound, degrees <= D
above it, and a refill shown on a small graph (``tests/propagation/test_degree_bound.py``).
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["bound_degree", "max_degree_of"]


def max_degree_of(edge_index: Tensor, num_nodes: int) -> int:
    """The largest number of distinct neighbours of a node (a self-loop counts once; 0 without edges).

    Args:
        edge_index: ``[2, M]`` long, an undirected graph with both directions listed.
        num_nodes: N.
    """
    pairs = _pairs(edge_index)
    if pairs.shape[1] == 0:
        return 0
    loop = pairs[0] == pairs[1]
    ends = torch.cat([pairs[0], pairs[1][~loop]])
    return int(torch.bincount(ends, minlength=num_nodes).max())


def bound_degree(edge_index: Tensor, num_nodes: int, max_degree: int, *, generator: torch.Generator,
                 rounds: int = 16) -> Tensor:
    """The graph cut to degree <= ``max_degree`` by random edge sampling (module docstring).

    Args:
        edge_index: ``[2, M]`` long, an undirected graph with both directions of every edge (a
            direction listed alone counts as the undirected edge; duplicates count once).
        num_nodes: N. max_degree: D >= 1. generator: the sampling's randomness.
        rounds: the marking rounds; each keeps every edge both of whose endpoints still have room
            for it in the round's random order, so more rounds keep more edges (the bound holds
            after any number).

    Returns:
        ``[2, M']`` long: the kept undirected edges, both directions, sorted by (source, target); a
        self-loop once. Equal to the input's edges (sorted, deduplicated) when every degree is at
        most D.

    Raises:
        ValueError: ``max_degree`` < 1, ``rounds`` < 1, a node id outside [0, N).
    """
    if isinstance(max_degree, bool) or not isinstance(max_degree, int) or max_degree < 1:
        raise ValueError(f"'max_degree' (the degree bound D) must be an integer >= 1 (got {max_degree!r})")
    if rounds < 1:
        raise ValueError(f"'rounds' must be >= 1 (got {rounds!r})")
    if edge_index.numel() and (int(edge_index.min()) < 0 or int(edge_index.max()) >= num_nodes):
        raise ValueError(f"edge_index holds node ids outside [0, {num_nodes})")
    pairs = _pairs(edge_index)
    a, b = pairs[0], pairs[1]
    count = a.numel()
    loop = a == b
    keep = torch.zeros(count, dtype=torch.bool)
    capacity = torch.full((num_nodes,), max_degree, dtype=torch.long)
    open_ = torch.ones(count, dtype=torch.bool)
    for _ in range(rounds):
        ids = open_.nonzero().flatten()
        if ids.numel() == 0:
            break
        two = ~loop[ids]
        node = torch.cat([a[ids], b[ids][two]])
        pair = torch.cat([ids, ids[two]])
        priority = torch.rand(ids.numel(), generator=generator, dtype=torch.float64)
        order = torch.argsort(torch.cat([priority, priority[two]]))
        order = order[torch.argsort(node[order], stable=True)]  # by node, then at random
        node, pair = node[order], pair[order]
        counts = torch.bincount(node, minlength=num_nodes)
        rank = torch.arange(node.numel()) - (torch.cumsum(counts, 0) - counts)[node]  # position among the node's
        unmarked = torch.zeros(count, dtype=torch.long).index_add_(0, pair, (rank >= capacity[node]).long())
        accepted = open_ & (unmarked == 0)
        keep |= accepted
        capacity -= torch.bincount(node[accepted[pair]], minlength=num_nodes)
        open_ &= ~accepted & (capacity[a] > 0) & (capacity[b] > 0)
    a, b = a[keep], b[keep]
    two = a != b
    out = torch.stack([torch.cat([a, b[two]]), torch.cat([b, a[two]])])
    return out[:, torch.argsort(out[0] * num_nodes + out[1])]


def _pairs(edge_index: Tensor) -> Tensor:
    """``[2, P]``: each undirected edge once as (min, max), sorted."""
    if edge_index.numel() == 0:
        return torch.zeros(2, 0, dtype=torch.long)
    low = torch.minimum(edge_index[0], edge_index[1]).long()
    high = torch.maximum(edge_index[0], edge_index[1]).long()
    return torch.unique(torch.stack([low, high]), dim=1)
