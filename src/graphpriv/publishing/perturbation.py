"""Non-private graph-perturbation baselines of PPGSL (Wu et al., TKDE 2025, Sec. V-A.4).

Neither gives a formal guarantee; both are judged empirically by the attack suite. Pairs are
``[2, E]`` int64 with u < v over node ids ``0..N-1``; the output keeps the node set.
"""

from __future__ import annotations

import numpy as np

from graphpriv.data.graph import decode_pairs, pair_codes
from graphpriv.data.splits import sample_non_edges
from graphpriv.errors import DatasetError

__all__ = ["dice", "perturbation_budget", "random_perturb"]


def perturbation_budget(num_edges: int, ratio: float) -> int:
    """``round(ratio * |E|)`` edges removed (and as many added).

    Raises:
        ValueError: ratio outside [0, 1].
    """
    if not 0 <= ratio <= 1:
        raise ValueError(f"'ratio' must be in [0, 1] (got {ratio})")
    return round(ratio * num_edges)


def _non_edges_within(nodes: np.ndarray, count: int, forbidden_codes: np.ndarray, num_nodes: int,
                      rng: np.random.Generator) -> np.ndarray:
    """``count`` distinct uniform pairs of ``nodes`` (both ends in the set) not in ``forbidden``.

    Raises:
        DatasetError: fewer than ``count`` such pairs exist (or rejection sampling found too few).
    """
    k = nodes.size
    local_total = k * (k - 1) // 2
    if local_total == 0 and count:
        raise DatasetError(_too_few(count, k, 0))
    chosen = np.empty(0, np.int64)
    for _ in range(64):
        if chosen.size >= count:
            break
        draw = rng.integers(0, local_total, size=2 * (count - chosen.size) + 16)
        local = decode_pairs(draw, k)
        codes = pair_codes(nodes[local], num_nodes)
        codes = codes[~np.isin(codes, forbidden_codes) & ~np.isin(codes, chosen)]
        _, first = np.unique(codes, return_index=True)
        chosen = np.concatenate([chosen, codes[np.sort(first)]])
    if chosen.size < count:  # 64 rounds of rejection sampling: the pairs of `nodes` are nearly all edges
        raise DatasetError(_too_few(count, k, None))
    return decode_pairs(chosen[:count], num_nodes)


def _too_few(count: int, k: int, free: int | None) -> str:
    have = f"only {free} of the {k * (k - 1) // 2} pairs are not edges" if free is not None else \
        "nearly every pair is an edge"
    return (f"cannot add {count} edges (node pairs that are not edges) between the {k} nodes outside the sensitive "
            f"links' endpoints: {have}; lower ratio, pass fewer sensitive links, or use a sparser or larger graph")


def random_perturb(pairs: np.ndarray, num_nodes: int, *, ratio: float, rng: np.random.Generator) -> np.ndarray:
    """Random: remove ``round(ratio |E|)`` uniform edges and add as many uniform non-edges.

    Source: PPGSL Sec. V-A.4 "Random" (after Hay et al. / [15] there). The edge count is kept.

    Args:
        pairs: ``[2, E]`` edges (u < v). num_nodes: N. ratio: p in [0, 1]. rng: numpy Generator.

    Returns:
        ``[2, E]`` published edges (u < v), sorted by pair code.

    Raises:
        ValueError: ratio outside [0, 1]. DatasetError: not enough non-edges.
    """
    budget = perturbation_budget(pairs.shape[1], ratio)
    removed = rng.choice(pairs.shape[1], budget, replace=False)
    kept = np.delete(pairs, removed, axis=1)
    added = sample_non_edges(num_nodes, budget, forbidden=pairs, rng=rng)
    return decode_pairs(np.sort(pair_codes(np.concatenate([kept, added], axis=1), num_nodes)), num_nodes)


def dice(pairs: np.ndarray, num_nodes: int, sensitive: np.ndarray, *, ratio: float,
         rng: np.random.Generator) -> np.ndarray:
    """DICE for sensitive links: delete edges at the sensitive nodes, add edges elsewhere.

    Source: Waniek, Michalak, Wooldridge, Rahwan, "Hiding individuals and communities in a social
    network" (Nature Human Behaviour 2018), "Disconnect Internally, Connect Externally"; PPGSL
    Sec. V-A.4 adapts it: the nodes with sensitive links are S = endpoints of E_s; delete
    ``round(ratio |E|)`` uniform edges with an endpoint in S (all of them if fewer) and add as many
    uniform non-edges with both endpoints outside S, so the edge count is kept as in Random.

    Args:
        pairs: ``[2, E]`` edges (u < v). num_nodes: N. sensitive: ``[2, |E_s|]`` hidden links the
            publisher protects. ratio: p in [0, 1]. rng: numpy Generator.

    Returns:
        ``[2, E]`` published edges (u < v), sorted by pair code.

    Raises:
        ValueError: ratio outside [0, 1]. DatasetError: too few non-edges with both endpoints
            outside S to add (e.g. every node is an endpoint of a sensitive link, or the nodes
            outside S are already all linked).
    """
    budget = perturbation_budget(pairs.shape[1], ratio)
    in_s = np.zeros(num_nodes, dtype=bool)
    in_s[np.asarray(sensitive, dtype=np.int64).ravel()] = True
    touching = np.flatnonzero(in_s[pairs[0]] | in_s[pairs[1]])
    removed = rng.choice(touching, min(budget, touching.size), replace=False)
    kept = np.delete(pairs, removed, axis=1)
    outside = np.flatnonzero(~in_s)
    free = outside.size * (outside.size - 1) // 2 - int(np.count_nonzero(~in_s[pairs[0]] & ~in_s[pairs[1]]))
    if free < removed.size:
        raise DatasetError(_too_few(int(removed.size), int(outside.size), free))
    added = _non_edges_within(outside, removed.size, np.sort(pair_codes(pairs, num_nodes)), num_nodes, rng)
    return decode_pairs(np.sort(pair_codes(np.concatenate([kept, added], axis=1), num_nodes)), num_nodes)
