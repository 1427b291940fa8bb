"""DP-APPR: DPAR's differentially private rows of the APPR matrix, and the column clip.

Source: Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with Node-Level
Differential Privacy" (WWW 2024), Sec. 3.1 and Algorithm 1 (DP-APPR with the exponential
mechanism, options I and II), App. B and Algorithm 3 (DP-APPR with the Gaussian mechanism), and
Sec. 3.2, Algorithm 2 line 3 (column clipping of Pi).

Every function works on a dense ``[M, N]`` block of APPR rows (M seeds, N nodes) and returns a
sparse ``[M, N]`` CSR matrix with at most K entries per row. Neighbouring relation: node-level
(one node, its features and all its edges change), which can change every entry of every row;
the per-row guarantees below hold for any such change because the clipped entries lie in
[0, C2] (EM) or the clipped row in the L2 ball of radius C1 (GM).

- EM0 (option I): entries clipped to C2; Gumbel noise of scale 2 C2 / eps_row added to all N
  entries and the top K kept (K rounds of the exponential mechanism with eps_row each, Durfee &
  Rogers 2019); each kept entry is 1 / K.
- EM1 (option II): EM0's selection, then each kept entry is its clipped value plus
  Laplace(K C2 / eps_values) (the K values have L1 sensitivity K C2).
- GM: the row clipped to L2 norm C1; N(0, sigma^2) added to all N entries (sigma = noise
  multiplier x L2 sensitivity: 2 C1 for replace-one, C1 for add/remove neighbours); the top K noisy
  entries kept with their noisy values.

Non-finite inputs keep the bound: a non-finite APPR entry (EM) or a row whose L2 norm is not
finite (GM, float overflow included) contributes zero, i.e. is replaced by 0 before the noise,
which lies in [0, C2] (the L2 ball of radius C1), so the per-row guarantees still hold.

The accounting of these releases is :mod:`graphpriv.privacy` 's (not this module's).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["cap_rows_per_node", "column_clip", "dp_appr_em", "dp_appr_gaussian", "rows_per_node"]


def _top_k_rows(values: np.ndarray, keep: np.ndarray, k: int) -> sp.csr_matrix:
    """CSR ``[M, N]`` holding ``values`` at each row's ``k`` largest ``keep`` entries."""
    m, n = keep.shape
    idx = np.argpartition(-keep, k - 1, axis=1)[:, :k]
    rows = np.repeat(np.arange(m), k)
    out = sp.csr_matrix((np.take_along_axis(values, idx, axis=1).ravel(), (rows, idx.ravel())), shape=(m, n))
    out.sort_indices()
    return out


def _check(p: np.ndarray, k: int) -> np.ndarray:
    p = np.atleast_2d(np.asarray(p, dtype=np.float64))
    if not 1 <= k <= p.shape[1]:
        raise ValueError(f"'k' must be in [1, {p.shape[1]}] (got {k})")
    return p


def dp_appr_em(p: np.ndarray, *, k: int, epsilon_row: float, c2: float, rng: np.random.Generator,
               values: str = "uniform", epsilon_values: float | None = None) -> sp.csr_matrix:
    """EM0 (``values="uniform"``) or EM1 (``values="laplace"``) rows.

    Neighbouring relation: node-level (module docstring); every clipped entry lies in [0, C2]
    whatever p holds: a non-finite entry (inf or NaN) is set to 0.

    Args:
        p: ``[M, N]`` APPR rows (>= 0). k: K entries kept per row. epsilon_row: eps of each of the
            K exponential-mechanism rounds (> 0). c2: entry clip C2 (> 0). rng: numpy generator.
        values: ``uniform`` (1 / K) or ``laplace`` (clipped value + Laplace(K C2 / epsilon_values)).
        epsilon_values: EM1's budget for the K values (> 0).

    Returns:
        ``[M, N]`` CSR with exactly K stored entries per row.

    Raises:
        ValueError: bad k, epsilon, c2 or values; EM1 without epsilon_values.
    """
    p = _check(p, k)
    if not (epsilon_row > 0 and c2 > 0):
        raise ValueError(f"need epsilon_row > 0 and c2 > 0 (got {epsilon_row}, {c2})")
    clipped = np.minimum(np.maximum(p, 0.0), c2)
    clipped[~np.isfinite(p)] = 0.0  # a non-finite entry contributes zero (np.maximum keeps NaN)
    noisy = clipped + (2.0 * c2 / epsilon_row) * rng.gumbel(size=clipped.shape)
    if values == "uniform":
        return _top_k_rows(np.full(clipped.shape, 1.0 / k), noisy, k)
    if values == "laplace":
        if epsilon_values is None or not epsilon_values > 0:
            raise ValueError("EM1 (values='laplace') needs epsilon_values > 0")
        chosen = _top_k_rows(clipped, noisy, k)
        chosen.data = chosen.data + rng.laplace(scale=k * c2 / epsilon_values, size=chosen.data.size)
        return chosen
    raise ValueError(f"values must be 'uniform' or 'laplace' (got {values!r})")


def dp_appr_gaussian(p: np.ndarray, *, k: int, noise_std: float, c1: float,
                     rng: np.random.Generator) -> sp.csr_matrix:
    """GM rows: L2 clip to ``c1``, N(0, noise_std^2) on all N entries, top K noisy entries kept.

    Neighbouring relation: node-level (module docstring); every clipped row lies in the L2 ball
    of radius C1 whatever p holds: a row whose norm is not finite (an inf or NaN entry, or float
    overflow) is set to 0 (p / inf would give 0 x inf = NaN).

    Args:
        p: ``[M, N]`` APPR rows. k: entries kept per row. noise_std: sigma (>= 0). c1: C1 (> 0).
        rng: numpy generator.

    Returns:
        ``[M, N]`` CSR with K stored entries per row (the noisy values).

    Raises:
        ValueError: bad k, noise_std < 0 or c1 <= 0.
    """
    p = _check(p, k)
    if noise_std < 0 or not c1 > 0:
        raise ValueError(f"need noise_std >= 0 and c1 > 0 (got {noise_std}, {c1})")
    with np.errstate(over="ignore", invalid="ignore"):  # overflow / inf / NaN rows: zeroed below
        norms = np.linalg.norm(p, axis=1, keepdims=True)
        clipped = p / np.maximum(1.0, norms / c1)
    clipped[~np.isfinite(norms[:, 0])] = 0.0  # a non-finite row contributes zero
    noisy = clipped + noise_std * rng.standard_normal(clipped.shape)
    return _top_k_rows(noisy, noisy, k)


def column_clip(pi: sp.spmatrix, r: float = 1.0) -> sp.csr_matrix:
    """Pi[:, j] <- Pi[:, j] / max(1, ||Pi[:, j]||_1 / r): every column's l1 norm ends <= r, so one
    node's features reach the loss with total weight at most r (DPAR Sec. 3.2, Algorithm 2 line 3).

    Raises:
        ValueError: r <= 0.
    """
    if not r > 0:
        raise ValueError(f"'r' must be > 0 (got {r})")
    pi = sp.csr_matrix(pi, dtype=np.float64)
    col = np.asarray(abs(pi).sum(axis=0)).ravel()
    return (pi @ sp.diags(1.0 / np.maximum(1.0, col / r))).tocsr()


def rows_per_node(pi: sp.spmatrix) -> int:
    """m = max over nodes j of |{v : Pi[v, j] != 0} | {j}|: how many training rows one node reaches
    (the rows that read its features, and its own row). ``pi`` is square, rows and columns indexed
    by the same training nodes. It is DPAR's DP-SGD group size (docs/dpar.md "Sensitivity of the
    DP-SGD phase"): the column l1 clip scales these entries but does not reduce their number.

    Raises:
        ValueError: pi is not square.
    """
    pi = sp.csc_matrix(pi)
    if pi.shape[0] != pi.shape[1]:
        raise ValueError(f"Pi must be square (training rows x training nodes), got {pi.shape}")
    pi.eliminate_zeros()
    counts = np.diff(pi.indptr)
    own_stored = np.asarray(pi.diagonal() != 0)
    return int((counts + ~own_stored).max()) if pi.shape[0] else 0


def cap_rows_per_node(pi: sp.spmatrix, max_rows: int) -> sp.csr_matrix:
    """Keep, in every column j, the own entry Pi[j, j] and the ``max_rows - 1`` other entries of
    largest magnitude (ties: lower row first): afterwards :func:`rows_per_node` <= ``max_rows``.
    Post-processing of the released Pi (deterministic), so it costs no privacy.

    Raises:
        ValueError: max_rows < 1 or pi not square.
    """
    if max_rows < 1:
        raise ValueError(f"'max_rows' must be >= 1 (got {max_rows})")
    coo = sp.coo_matrix(pi)
    if coo.shape[0] != coo.shape[1]:
        raise ValueError(f"Pi must be square (training rows x training nodes), got {coo.shape}")
    own = coo.row == coo.col
    order = np.lexsort((coo.row, -np.abs(coo.data), own, coo.col))  # by column, others by |value|
    col = coo.col[order]
    start = np.searchsorted(col, col, side="left")
    rank = np.arange(col.size) - start
    keep = np.zeros(coo.nnz, dtype=bool)
    keep[order] = own[order] | (rank < max_rows - 1)
    out = sp.csr_matrix((coo.data[keep], (coo.row[keep], coo.col[keep])), shape=coo.shape)
    out.sort_indices()
    return out
