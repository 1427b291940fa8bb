"""Random-walk pair batches of PrivDPR (Algorithm 2, lines 4-7).

Source: Zhang, Hu, Ye, Xu, "PrivDPR: Synthetic Graph Publishing with Deep PageRank under
Differential Privacy" (KDD 2025), Algorithm 2 and Sec. 6 (R_wn = 2 walks of length R_wl = 16):
for each batch node, R_wn walks of length R_wl; a pair is (walk start, a node the walk visits).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["walk_pairs"]


def walk_pairs(adj: sp.csr_matrix, starts: np.ndarray, *, num_walks: int = 2, walk_length: int = 16,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (start, visited) from uniform random walks on the out-edges of ``adj``.

    Args:
        adj: ``[N, N]`` CSR adjacency (row i lists i's out-neighbours). starts: ``[b]`` nodes.
        num_walks: R_wn walks per start. walk_length: R_wl steps per walk.
        rng: numpy generator.

    Returns:
        ``(sources, targets)`` int64 ``[P]``, P <= b R_wn R_wl: one pair per step taken; a walk
        that reaches a node without out-edges stops there (an isolated start gives no pair).
    """
    indptr = adj.indptr.astype(np.int64)
    indices = adj.indices.astype(np.int64)
    degree = np.diff(indptr)
    start = np.repeat(np.asarray(starts, dtype=np.int64), num_walks)
    current = start.copy()
    alive = degree[current] > 0
    sources, targets = [], []
    for _ in range(walk_length):
        walkers = np.flatnonzero(alive)
        if walkers.size == 0:
            break
        here = current[walkers]
        step = (rng.random(walkers.size) * degree[here]).astype(np.int64)
        current[walkers] = indices[indptr[here] + step]
        sources.append(start[walkers])
        targets.append(current[walkers])
        alive[walkers] = degree[current[walkers]] > 0
    if not sources:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(sources), np.concatenate(targets)
