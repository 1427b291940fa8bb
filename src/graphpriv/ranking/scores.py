"""Base link-prediction scores s_A(u, v) >= 0 for the queries of a ranking protocol.

Source: De & Chakrabarti, "Differentially private link prediction with protected connections"
(AAAI 2021), Sec. 3 and App. 14.3. Triad heuristics (Liben-Nowell
& Kleinberg, JASIST 2007): CN |N(u) ∩ N(v)|, AA sum_{z in N(u) ∩ N(v)} 1 / ln |N(z)|, JC CN / |N(u) ∪
N(v)|, PA |N(u)| |N(v)|.

Each score is computed for whole query rows at once: a block of query rows of A (sparse) times
the weighted adjacency gives the common-neighbour sums of the block against every node; only the
requested (query, candidate) entries are kept. Memory is one ``[block, N]`` dense block.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from graphpriv.linkpred.heuristics import adamic_adar_weights

__all__ = ["TRIAD_SCORES", "score_range", "triad_scores"]

TRIAD_SCORES = ("cn", "aa", "jc", "pa")


def _binary(adj: sp.spmatrix) -> sp.csr_matrix:
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1]:
        raise ValueError(f"adjacency must be square, got shape {adj.shape}")
    adj = sp.csr_matrix(adj, dtype=np.float64)
    adj.data[:] = 1.0
    return adj


def triad_scores(adj: sp.spmatrix, rows: np.ndarray, cols: np.ndarray, score: str, *,
                 degree_cap: float | None = None, block: int = 512) -> np.ndarray:
    """``s(rows[i], cols[i])`` for a triad heuristic, ``[P] -> [P]`` float64.

    Args:
        adj: symmetric ``[N, N]`` adjacency of the graph the scores see (values ignored).
        rows, cols: ``[P]`` int node ids (rows are typically few distinct query nodes).
        score: ``cn``, ``aa``, ``jc`` or ``pa``. degree_cap: PA only, required: the candidate's
            degree is clipped to it, PA = deg(u) min(deg(v), cap) (see :func:`score_range`).
        block: query rows per dense block.

    Returns:
        ``[P]`` float64 scores (JC of two isolated nodes is 0).

    Raises:
        ValueError: unknown score, non-square adjacency, ids out of range or shapes that differ.
    """
    if score not in TRIAD_SCORES:
        raise ValueError(f"unknown triad score {score!r}; known: {', '.join(TRIAD_SCORES)}")
    adj = _binary(adj)
    n = adj.shape[0]
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    if rows.shape != cols.shape or rows.ndim != 1:
        raise ValueError(f"rows and cols must be 1-d of one length (got {rows.shape} and {cols.shape})")
    if rows.size and (min(rows.min(), cols.min()) < 0 or max(rows.max(), cols.max()) >= n):
        raise ValueError(f"node ids must lie in [0, {n})")
    deg = np.asarray(adj.sum(axis=1)).ravel()
    if score == "pa":
        score_range("pa", deg[:0], degree_cap=degree_cap)  # raises without a cap
        return deg[rows] * np.minimum(deg[cols], degree_cap)
    if score == "aa":
        right = sp.csr_matrix(adj.multiply(adamic_adar_weights(deg)[:, None]))  # row z scaled by w(z)
    else:
        right = adj
    out = np.empty(rows.size)
    order = np.argsort(rows, kind="stable")
    uniq, start = np.unique(rows[order], return_index=True)
    bounds = np.r_[start, rows.size]
    for b in range(0, uniq.size, block):
        q = uniq[b:b + block]
        dense = (adj[q] @ right).toarray()  # [block, N]: sum of w(z) over common neighbours
        for j in range(q.size):
            idx = order[bounds[b + j]:bounds[b + j + 1]]
            out[idx] = dense[j, cols[idx]]
    if score == "jc":
        union = deg[rows] + deg[cols] - out
        out = np.divide(out, union, out=np.zeros_like(out), where=union > 0)
    return out


def score_range(score: str, degree: np.ndarray, *, degree_cap: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``[s_min, s_max,u]``: the range the base score of query u can take on any u-neighbouring
    graph: graphpriv's rigorous sensitivity bound (docs/dplp_rank.md; the paper's Def. 3 defines
    the sensitivity of f on s_A).

    u's own pairs are the same on every u-neighbouring graph, so its degree is fixed: CN lies in
    [0, deg(u)], AA in [0, deg(u) / ln 2] (a common neighbour has degree >= 2), JC and a link
    classifier's probability in [0, 1]. PA = deg(u) deg(v) has no bound unless every other
    node's degree is capped: [0, deg(u) * degree_cap].

    Args:
        score: ``cn``, ``aa``, ``jc``, ``pa``, or ``prob`` (a classifier's probability).
        degree: ``[Q]`` degrees of the queries (in the graph the scores see).
        degree_cap: PA only: the bound on deg(v) the user asserts.

    Returns:
        ``(s_min [Q], s_max [Q])`` float64.

    Raises:
        ValueError: PA without ``degree_cap``, or an unknown score.
    """
    degree = np.asarray(degree, dtype=np.float64)
    zeros = np.zeros_like(degree)
    if score == "cn":
        return zeros, degree
    if score == "aa":
        return zeros, degree / np.log(2.0)
    if score in ("jc", "prob"):
        return zeros, np.ones_like(degree)
    if score == "pa":
        if degree_cap is None or degree_cap <= 0:
            raise ValueError("PA scores have no sensitivity bound without a degree cap: pass degree_cap (the "
                             "largest degree any candidate may have), and clip PA scores to it")
        return zeros, degree * float(degree_cap)
    raise ValueError(f"unknown score {score!r}")
