"""The protected-pair ranking protocol of DPLP-rank (the protocol of the paper's Table 1).

Source: De & Chakrabarti, "Differentially Private Link Prediction with Protected Connections"
(AAAI 2021), Sec. 6.1 ("Evaluation protocol and metrics") and App. 14.

1. sigma_prot of the edges are protected, uniformly at random (``data.splits.protected_pairs``).
2. Queries: the top ``query_fraction`` (80%) of nodes by triangle count (ties by node id).
3. Per query q: ``int(0.2 |N(q)|)`` neighbours and ``int(0.2 |non-N(q)|)`` non-neighbours held out
   as its test candidates. Every held-out edge is removed from the training graph (both
   directions: the reference code kept a held-out edge when the other endpoint, as a query, had it
   in training, so most test edges stayed visible; here none does).
4. The base scores and the transform see the training graph; test candidates are ranked.

Training pairs of the transform (Eq. 5) for query q: public training neighbours (edge kept and not
protected) against non-neighbours of q that are not among q's test candidates; non-neighbours in G
(the paper) or in the public graph (graphpriv's rigorous mode, see ``training_pairs``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from torch_geometric.data import Data

from graphpriv.data.graph import decode_pairs, pair_codes, to_csr, undirected_pairs
from graphpriv.data.splits import protected_pairs
from graphpriv.errors import ConfigError, DatasetError

__all__ = ["RankingSplit", "ranking_split", "triangle_counts"]


def triangle_counts(adj: sp.spmatrix) -> np.ndarray:
    """Triangles through each node, ``[N]`` int64: diag(A^3) / 2 without forming A^3."""
    adj = sp.csr_matrix(adj, dtype=np.float64)
    adj.data[:] = 1.0
    return np.rint(np.asarray((adj @ adj).multiply(adj).sum(axis=1)).ravel() / 2).astype(np.int64)


@dataclass(frozen=True)
class RankingSplit:
    """One seed's protocol.

    Attributes:
        num_nodes: N. full: ``[N, N]`` CSR adjacency of G. train: ``[N, N]`` CSR of the training
            graph (G minus every held-out edge; protected edges kept). public: ``[N, N]`` CSR of
            the training graph without its protected edges.
        protected: ``[2, P]`` protected edges of G (u < v). queries: ``[Q]`` query nodes.
        test_ptr: ``[Q + 1]`` offsets into the test arrays (query i owns ``test_ptr[i]:test_ptr[i+1]``).
        test_nodes: ``[T]`` candidates, in random order within each query. test_labels: ``[T]`` 1 for a held-out neighbour.
        test_protected: ``[T]`` True when (q, candidate) is a protected edge.
    """

    num_nodes: int
    full: sp.csr_matrix
    train: sp.csr_matrix
    public: sp.csr_matrix
    protected: np.ndarray
    queries: np.ndarray
    test_ptr: np.ndarray
    test_nodes: np.ndarray
    test_labels: np.ndarray
    test_protected: np.ndarray

    def test_of(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(candidates, labels) of the i-th query."""
        sl = slice(self.test_ptr[i], self.test_ptr[i + 1])
        return self.test_nodes[sl], self.test_labels[sl]

    def training_pairs(self, i: int, *, known: str = "full") -> tuple[np.ndarray, np.ndarray]:
        """(public positives, negatives) of the i-th query for training the transform (Eq. 5).

        Args:
            known: what decides that a node is not a neighbour: ``full`` (G's edges, protected ones
                included: the paper's public non-neighbours) or ``public`` (only the public graph:
                a protected neighbour may then be drawn as a negative, but the pairs no longer
                depend on anyone's protected pairs -- graphpriv's rigorous mode).
        """
        q = self.queries[i]
        pos = self.public.indices[self.public.indptr[q]:self.public.indptr[q + 1]]
        graph = {"full": self.full, "public": self.public}[known]
        allowed = np.ones(self.num_nodes, dtype=bool)
        allowed[graph.indices[graph.indptr[q]:graph.indptr[q + 1]]] = False
        allowed[q] = False
        allowed[self.test_of(i)[0]] = False
        return pos.astype(np.int64), np.flatnonzero(allowed)


def ranking_split(data: Data, *, sigma_prot: float = 0.3, query_fraction: float = 0.8, holdout: float = 0.2,
                  seed: int) -> RankingSplit:
    """Build the protocol for one seed.

    Args:
        data: the graph (undirected). sigma_prot: protected share of edges, in [0, 1].
        query_fraction: share of nodes (by triangle count) that are queries, in (0, 1].
        holdout: per-query share of neighbours and of non-neighbours held out, in (0, 1).
        seed: everything random.

    Returns:
        :class:`RankingSplit`; queries whose test set lacks a positive or a negative are dropped.

    Raises:
        ConfigError: ratios out of range. DatasetError: no query keeps a positive and a negative.
    """
    if not 0 < query_fraction <= 1 or not 0 < holdout < 1:
        raise ConfigError(f"query_fraction must be in (0, 1] and holdout in (0, 1) (got {query_fraction}, {holdout})")
    n = int(data.num_nodes)
    pairs = undirected_pairs(data.edge_index)
    full = to_csr(pairs, n)
    prot = protected_pairs(data, sigma_prot=sigma_prot, seed=seed).protected
    rng = np.random.default_rng([seed, 61])
    tri = triangle_counts(full)
    order = np.lexsort((np.arange(n), -tri))
    candidates_q = np.sort(order[: round(query_fraction * n)])
    queries, ptr, nodes, labels = [], [0], [], []
    removed = []
    for q in candidates_q:
        nbr = full.indices[full.indptr[q]:full.indptr[q + 1]]
        mask = np.ones(n, dtype=bool)
        mask[nbr] = False
        mask[q] = False
        non = np.flatnonzero(mask)
        pos = rng.choice(nbr, int(holdout * nbr.size), replace=False) if nbr.size else nbr
        neg = rng.choice(non, int(holdout * non.size), replace=False)
        if pos.size == 0 or neg.size == 0:
            continue
        queries.append(q)
        # candidates in random order: no positives-first storage order for anything to pick up
        order = rng.permutation(pos.size + neg.size)
        nodes.append(np.concatenate([pos, neg])[order])
        labels.append(np.r_[np.ones(pos.size, np.int64), np.zeros(neg.size, np.int64)][order])
        ptr.append(ptr[-1] + pos.size + neg.size)
        removed.append(np.stack([np.minimum(q, pos), np.maximum(q, pos)]))
    if not queries:
        need = math.ceil(1 / holdout)
        top = int(np.diff(full.indptr)[candidates_q].max(initial=0))
        raise DatasetError(f"no query node keeps a held-out neighbour and non-neighbour: with holdout={holdout:g} a "
                           f"query node needs at least {need} edges and {need} non-neighbours, and the query "
                           f"nodes' largest degree is {top} (the graph has {full.nnz // 2} edges on {n} nodes); use "
                           "a denser graph or a larger holdout")
    queries = np.asarray(queries, dtype=np.int64)
    nodes, labels = np.concatenate(nodes), np.concatenate(labels)
    gone = np.unique(pair_codes(np.concatenate(removed, axis=1), n))
    codes = pair_codes(pairs, n)
    train_pairs = decode_pairs(codes[~np.isin(codes, gone)], n)
    prot_codes = pair_codes(prot, n)
    public_pairs = decode_pairs(codes[~np.isin(codes, gone) & ~np.isin(codes, prot_codes)], n)
    qrep = np.repeat(queries, np.diff(ptr))
    test_codes = pair_codes(np.stack([np.minimum(qrep, nodes), np.maximum(qrep, nodes)]), n)
    return RankingSplit(
        num_nodes=n, full=full, train=to_csr(train_pairs, n), public=to_csr(public_pairs, n), protected=prot,
        queries=queries, test_ptr=np.asarray(ptr, dtype=np.int64), test_nodes=nodes.astype(np.int64),
        test_labels=labels, test_protected=np.isin(test_codes, prot_codes) & (labels == 1))

