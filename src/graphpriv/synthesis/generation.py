"""Graph generation from PrivDPR's embeddings V: post-processing, no privacy spent.

Source: Zhang, Hu, Ye, Xu, "PrivDPR: Synthetic Graph Publishing with Deep PageRank under
Differential Privacy" (KDD 2025), Algorithm 2 lines 13 and 18, App. A; NetGAN (Bojchevski et al.,
ICML 2018) and Rendsburg et al. (ICML 2020) for the assembly.

1. Score counts S: each node i draws ``samples_per_node`` neighbours j from softmax_j(v_i . v_j /
   temperature) over j != i (a draw from a softmax is what Gumbel-max computes; ``torch.multinomial``
   draws it exactly). Rows are processed in chunks: no N x N matrix is held.
2. S+ = max(S, S^T). Every node with a non-zero row gets one edge drawn from its row of S+; further
   edges are drawn without replacement from the remaining pairs with probability proportional to
   S+ (Efraimidis–Spirakis keys) until the target edge count.

The target edge count never reads the private graph: ``model_edge_count`` counts the pairs with
sigmoid(v_i . v_j) > 0.5 (a function of V only), or the caller passes a public number
(graphpriv's decision; the paper's generation reads |E|: docs/privdpr.md, "Decisions").
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor

from graphpriv.data.graph import decode_pairs, pair_codes

__all__ = ["assemble_graph", "score_counts"]


def _chunk_rows(num_nodes: int, budget: int = 1 << 25) -> int:
    # 32M logits (128 MB) per chunk: the matmul needs ~80+ rows to run at full speed
    return max(1, min(num_nodes, budget // max(num_nodes, 1)))


def score_counts(V: Tensor, *, samples_per_node: int = 50, temperature: float = 0.5,
                 generator: torch.Generator | None = None, chunk_rows: int | None = None
                 ) -> tuple[sp.csr_matrix, int]:
    """Score counts S and the model's edge count, in one chunked pass over the rows of V V^T.

    Args:
        V: ``[N, r]`` embeddings (float). samples_per_node: draws per row. temperature: softmax
            temperature (0.5). generator: torch RNG. chunk_rows: rows per chunk (default: about
            32M logits, 128 MB, per chunk).

    Returns:
        ``(S, model_edges)``: S ``[N, N]`` CSR int64 counts (row sums = samples_per_node; no
        diagonal), model_edges = #{i < j : v_i . v_j > 0} (sigmoid > 0.5).

    Raises:
        ValueError: fewer than 2 nodes, samples_per_node < 1 or temperature <= 0.
    """
    n = V.shape[0]
    if n < 2 or samples_per_node < 1 or temperature <= 0:
        raise ValueError(f"need N >= 2, samples_per_node >= 1, temperature > 0 (got {n}, {samples_per_node}, "
                         f"{temperature})")
    V = V.detach().to(torch.float32)
    step = chunk_rows or _chunk_rows(n)
    rows, cols = [], []
    positive = 0
    # one logits buffer for every chunk: a fresh 100+ MB tensor per chunk costs as much in page
    # faults as its matmul
    buffer = torch.empty(min(step, n), n)
    with torch.no_grad():
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            logits = torch.matmul(V[lo:hi], V.T, out=buffer[:hi - lo])
            idx = torch.arange(lo, hi)
            # i < j pairs with a positive inner product: the columns right of the block, and the
            # block's own square above its diagonal (count_nonzero: 6x cheaper than a bool sum)
            positive += int(torch.count_nonzero(logits[:, hi:] > 0))
            positive += int(torch.count_nonzero(torch.triu(logits[:, lo:hi] > 0, diagonal=1)))
            logits.div_(temperature)
            logits[idx - lo, idx] = -torch.inf
            # unnormalised softmax weights, in place (multinomial normalises): 2-4x cheaper than softmax
            weights = logits.sub_(logits.amax(dim=1, keepdim=True)).exp_()
            draws = torch.multinomial(weights, samples_per_node, replacement=True, generator=generator)
            rows.append(idx.repeat_interleave(samples_per_node).numpy())
            cols.append(draws.reshape(-1).numpy())
    r, c = np.concatenate(rows), np.concatenate(cols)
    counts = sp.csr_matrix((np.ones(r.size, dtype=np.int64), (r, c)), shape=(n, n))
    counts.sum_duplicates()
    return counts, positive


def assemble_graph(counts: sp.spmatrix, num_edges: int, *, rng: np.random.Generator) -> np.ndarray:
    """Undirected edges ``[2, E']`` (u < v, int64) from score counts (NetGAN's assembly).

    Args:
        counts: ``[N, N]`` non-negative scores S (any symmetry; S+ = max(S, S^T) is used).
        num_edges: target |E'| (>= 1). rng: numpy generator.

    Returns:
        E' = min(num_edges, pairs with S+ > 0) distinct edges; when num_edges is below the
        number of nodes with a non-zero row, the first stage alone is cut down to num_edges
        (drawn uniformly among its edges).

    Raises:
        ValueError: num_edges < 1 or negative scores.
    """
    if num_edges < 1:
        raise ValueError(f"'num_edges' must be >= 1 (got {num_edges})")
    s = sp.csr_matrix(counts, dtype=np.float64)
    if s.nnz and s.data.min() < 0:
        raise ValueError("score counts must be non-negative")
    s = s.maximum(s.T).tocsr()
    s.setdiag(0)
    s.eliminate_zeros()
    n = s.shape[0]
    # stage 1: one edge per node with a non-zero row, drawn from its row
    degree = np.diff(s.indptr)
    nodes = np.flatnonzero(degree > 0)
    cum = np.cumsum(s.data)
    row_start = np.concatenate([[0.0], cum])[s.indptr[nodes]]
    row_total = cum[s.indptr[nodes + 1] - 1] - row_start
    pick = np.searchsorted(cum, row_start + rng.random(nodes.size) * row_total, side="right")
    pick = np.minimum(pick, s.indptr[nodes + 1] - 1)
    first = pair_codes(np.stack([nodes, s.indices[pick].astype(np.int64)]), n)
    first = np.unique(first)
    if first.size >= num_edges:
        return decode_pairs(np.sort(rng.choice(first, num_edges, replace=False)), n)
    # stage 2: the rest without replacement, probability proportional to S+ (upper triangle)
    upper = sp.triu(s, k=1).tocoo()
    codes = pair_codes(np.stack([upper.row, upper.col]).astype(np.int64), n)
    keep = ~np.isin(codes, first)
    codes, weights = codes[keep], upper.data[keep]
    need = min(num_edges - first.size, codes.size)
    if need > 0:
        keys = np.log(rng.random(codes.size)) / weights  # Efraimidis–Spirakis: top keys
        chosen = codes[np.argpartition(-keys, need - 1)[:need]]
        first = np.concatenate([first, chosen])
    return decode_pairs(np.sort(first), n)

