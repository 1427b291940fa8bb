"""LapGraph: edge-level DP release of an adjacency matrix by Laplace noise and top-T selection.

Source: Wu, Long, Gunter, Gong, "LinkTeller: recovering private edges from graph neural networks
via influence analysis" (IEEE S&P 2022), Algorithm "LapGraph"; the LapGraph baseline of DPLP
(docs/privacy-dplp.md, "LapGraph baseline").

Privacy: edge-level (one adjacency bit, L1 sensitivity 1 for both the edge count and the
upper-triangular matrix). Events: ``LaplaceDpEvent(1/eps1)`` (edge count) and
``LaplaceDpEvent(1/eps2)`` (matrix), eps1 + eps2 = epsilon; the top-T selection and anything
trained on the released graph are post-processing.
"""

from __future__ import annotations

import numpy as np
from dp_accounting import dp_event

from graphpriv.data.graph import decode_pairs, pair_codes
from graphpriv.privacy.accountant import check_epsilon


def _laplace(rng: np.random.Generator, scale: float, size) -> np.ndarray:
    return rng.laplace(0.0, scale, size=size).astype(np.float32)


def lapgraph(pairs: np.ndarray, num_nodes: int, *, epsilon: float, rng: np.random.Generator,
             count_fraction: float = 0.01, block_entries: int = 1 << 22,
             noise_scale: float = 1.0) -> tuple[np.ndarray, list[dp_event.DpEvent]]:
    """Release a graph with about |E| edges under edge-level epsilon-DP.

    Args:
        pairs: Undirected edges ``[2, E]`` (u < v). num_nodes: N. epsilon: total budget, > 0.
        rng: numpy Generator. count_fraction: share of epsilon for the edge count (0.01).
        block_entries: Noisy entries materialised at once (row blocks of the upper triangle);
            memory stays O(block_entries + T), never N x N.
        noise_scale: both Laplace scales times this factor (1.0; other values only from a privacy
            audit's fault test, :class:`graphpriv.privacy.hooks.AuditHook`: the events still
            claim epsilon).

    Returns:
        ``(released pairs [2, T] with u < v, [count event, matrix event])``.

    Raises:
        ValueError: bad epsilon or count_fraction.
    """
    check_epsilon(epsilon)
    if not 0 < count_fraction < 1:
        raise ValueError(f"'count_fraction' must be in (0, 1) (got {count_fraction})")
    eps1, eps2 = count_fraction * epsilon, (1 - count_fraction) * epsilon
    factor = noise_scale  # 1.0 except in an audit's fault test
    num_pairs = num_nodes * (num_nodes - 1) // 2
    target = int(np.clip(round(pairs.shape[1] + rng.laplace(0.0, factor / eps1)), 1, num_pairs))
    edge_codes = np.sort(pair_codes(pairs, num_nodes))
    best_val = np.empty(0, np.float32)
    best_code = np.empty(0, np.int64)
    rows_per_block = max(1, block_entries // max(num_nodes, 1))
    for start in range(0, num_nodes - 1, rows_per_block):
        rows = np.arange(start, min(start + rows_per_block, num_nodes - 1))
        first = rows * (2 * num_nodes - rows - 1) // 2  # code of (row, row + 1)
        lengths = num_nodes - 1 - rows
        codes = np.repeat(first, lengths) + (np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths))
        values = _laplace(rng, factor / eps2, codes.size)
        lo, hi = np.searchsorted(edge_codes, [codes[0], codes[-1] + 1])
        values[edge_codes[lo:hi] - codes[0]] += 1.0
        best_val = np.concatenate([best_val, values])
        best_code = np.concatenate([best_code, codes])
        if best_val.size > target:
            keep = np.argpartition(-best_val, target - 1)[:target]
            best_val, best_code = best_val[keep], best_code[keep]
    events = [dp_event.LaplaceDpEvent(1.0 / eps1), dp_event.LaplaceDpEvent(1.0 / eps2)]
    return decode_pairs(np.sort(best_code), num_nodes), events
