"""The released DPLP code's ranking protocol (De & Chakrabarti's public code, read to understand, not
copied): the split ``accounting="reference"`` of DPLP-rank runs on (docs/dplp_rank.md, "What the
reference code does").

It differs from :func:`~graphpriv.ranking.protocol.ranking_split` (the paper's protocol as graphpriv
reads it) in four ways, each the released code's:

1. Queries: the top ``query_fraction`` of nodes by the number of distinct endpoints of their
   length-2 walks (the node itself included once it has an edge), ties by node id; not triangles.
2. Held-out edges stay visible: a test edge (q, u) stays in the scoring graph when u is a query
   and (u, q) is among u's training edges (u did not hold it out). Most test edges stay.
3. A development split: from each query's training neighbours and non-neighbours, ``dev_fraction``
   are held out again the same way (its graph, the scoring graph minus the dev edges not kept
   visible, is what the transform trains on), and the protected edges are a ``sigma_prot`` share of
   the scoring graph's edges (after the test edges are taken out), not of the whole graph's.
4. A query is kept when its test and its dev candidates each hold a non-protected positive and a
   negative.

Every pair's scaled score uses the query's own protected edges (``own_protected``): their count
in the graph the score is computed on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from torch_geometric.data import Data

from graphpriv.data.graph import decode_pairs, pair_codes, to_csr, undirected_pairs
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.ranking.protocol import RankingSplit

__all__ = ["REFERENCE_BASES", "ReferenceSplit", "reference_scaled", "reference_split", "reference_top_score",
           "two_walk_reach"]


#: The base scores whose scaling the released code defines and graphpriv reproduces.
REFERENCE_BASES = ("aa", "cn")


def _own_bound(base: str, own: np.ndarray) -> np.ndarray:
    """The released code's "sensitivity" of a query: its own protected edges a, over ln 2 for AA."""
    own = np.asarray(own, dtype=np.float64)
    return own / np.log(2.0) if base == "aa" else own


def reference_scaled(raw: np.ndarray, base: str, own: np.ndarray) -> np.ndarray:
    """The released code's scaling of a query's base scores: raw / (bound + 1) when the query's
    bound (:func:`_own_bound` of its ``own`` protected edges) is above 1.01, raw otherwise; not
    clipped (scores above 1 stay).

    Args:
        raw: ``[P]`` base scores. base: ``aa`` or ``cn``. own: ``[P]`` the query's own protected
            edges for each score.

    Raises:
        ValueError: another base.
    """
    if base not in REFERENCE_BASES:
        raise ValueError(f"the released code's scaling is reproduced for {', '.join(REFERENCE_BASES)} (got {base!r})")
    bound = _own_bound(base, own)
    return np.where(bound > 1.01, np.asarray(raw, dtype=np.float64) / (bound + 1.0), raw)


def reference_top_score(base: str, degree: np.ndarray, own: np.ndarray) -> np.ndarray:
    """The largest scaled score a query can give on any neighbouring graph: CN <= deg(u) and
    AA <= deg(u) / ln 2 (every common neighbour of degree 2 at least), scaled as
    :func:`reference_scaled` scales it; ``[Q]``."""
    top = np.asarray(degree, dtype=np.float64) / (np.log(2.0) if base == "aa" else 1.0)
    return reference_scaled(top, base, own)


def two_walk_reach(adj: sp.spmatrix) -> np.ndarray:
    """``[N]`` int64: how many distinct nodes each node reaches by a walk of exactly 2 steps (itself
    included when it has a neighbour): the released code's query ranking."""
    adj = sp.csr_matrix(adj, dtype=np.float64)
    adj.data[:] = 1.0
    return np.diff((adj @ adj).tocsr().indptr).astype(np.int64)


@dataclass(frozen=True)
class ReferenceSplit(RankingSplit):
    """A :class:`~graphpriv.ranking.protocol.RankingSplit` with the released code's development part.

    Attributes (beyond the parent's; ``train`` is the scoring graph G_sample, ``public`` it without
    the protected edges, ``protected`` the protected edges of G_sample):
        dev: ``[N, N]`` CSR of the graph the transform trains on (``train`` minus the dev edges that
            do not stay visible). dev_ptr, dev_nodes, dev_labels, dev_protected: the queries' dev
            candidates, as the test ones. own_test, own_dev: ``[N]`` int64, each node's protected
            edges in ``train`` and in ``dev``.
    """

    dev: sp.csr_matrix = None
    dev_ptr: np.ndarray = None
    dev_nodes: np.ndarray = None
    dev_labels: np.ndarray = None
    dev_protected: np.ndarray = None
    own_test: np.ndarray = None
    own_dev: np.ndarray = None

    def dev_of(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(candidates, labels, protected) of the i-th query's dev part."""
        sl = slice(self.dev_ptr[i], self.dev_ptr[i + 1])
        return self.dev_nodes[sl], self.dev_labels[sl], self.dev_protected[sl]


def _hold_out(neighbours: np.ndarray, forbidden: np.ndarray, n: int, share: float,
              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``int(share |neighbours|)`` of ``neighbours`` and ``int(share |others|)`` of the other nodes
    outside ``forbidden`` (which holds the node itself and its neighbours in the whole graph),
    drawn without replacement; both sorted."""
    mask = np.ones(n, dtype=bool)
    mask[forbidden] = False
    non = np.flatnonzero(mask)
    pos = rng.choice(neighbours, int(share * neighbours.size), replace=False) if neighbours.size else neighbours
    neg = rng.choice(non, int(share * non.size), replace=False) if non.size else non
    return np.sort(pos).astype(np.int64), np.sort(neg).astype(np.int64)


def _gone(held: dict[int, np.ndarray], out_of_training: dict[int, set], n: int) -> np.ndarray:
    """Codes of the held-out edges that leave the graph: (q, u) of ``held[q]`` goes unless u is a
    query for which (u, q) is still a training edge (not in ``out_of_training[u]``)."""
    gone = [(min(q, int(u)), max(q, int(u))) for q, pos in held.items() for u in pos
            if int(u) not in out_of_training or q in out_of_training[int(u)]]
    if not gone:
        return np.zeros(0, dtype=np.int64)
    return np.unique(pair_codes(np.asarray(gone, dtype=np.int64).T, n))


def _without(pairs: np.ndarray, codes: np.ndarray, n: int) -> np.ndarray:
    own = pair_codes(pairs, n)
    return decode_pairs(own[~np.isin(own, codes)], n)


def _candidates(held, queries, protected_codes, n, rng):
    ptr, nodes, labels, prot = [0], [], [], []
    for q in queries:
        pos, neg = held[int(q)]
        order = rng.permutation(pos.size + neg.size)
        cand = np.concatenate([pos, neg])[order]
        lab = np.r_[np.ones(pos.size, np.int64), np.zeros(neg.size, np.int64)][order]
        codes = pair_codes(np.stack([np.minimum(q, cand), np.maximum(q, cand)]), n)
        nodes.append(cand)
        labels.append(lab)
        prot.append(np.isin(codes, protected_codes) & (lab == 1))
        ptr.append(ptr[-1] + cand.size)
    cat = (lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dt))
    return np.asarray(ptr, np.int64), cat(nodes, np.int64), cat(labels, np.int64), cat(prot, bool)


def reference_split(data: Data, *, sigma_prot: float = 0.3, query_fraction: float = 0.8, holdout: float = 0.2,
                    dev_fraction: float = 0.3, seed: int) -> ReferenceSplit:
    """The released code's protocol for one seed (module docstring).

    Args:
        data: the graph (undirected). sigma_prot: protected share of the scoring graph's edges.
        query_fraction: share of nodes (by two-walk reach) that are queries. holdout: per-query
            held-out share of neighbours and non-neighbours (test). dev_fraction: the same share of
            the training neighbours and non-neighbours held out for the dev part. seed: everything random.

    Returns:
        :class:`ReferenceSplit` of the kept queries.

    Raises:
        ConfigError: a share out of range. DatasetError: no query keeps a non-protected positive and
            a negative in both parts.
    """
    ranges = {"sigma_prot": (sigma_prot, 0.0, 1.0, "[0, 1]"), "query_fraction": (query_fraction, 1e-300, 1.0, "(0, 1]"),
              "holdout": (holdout, 1e-300, np.nextafter(1.0, 0.0), "(0, 1)"),
              "dev_fraction": (dev_fraction, 1e-300, np.nextafter(1.0, 0.0), "(0, 1)")}
    for name, (value, low, high, text) in ranges.items():
        if not (isinstance(value, (int, float)) and low <= value <= high):
            raise ConfigError(f"{name} must be in {text} (got {value!r})")
    n = int(data.num_nodes)
    pairs = undirected_pairs(data.edge_index)
    full = to_csr(pairs, n)
    rng = np.random.default_rng([seed, 67])
    reach = two_walk_reach(full)
    ranked = np.lexsort((np.arange(n), -reach))[: int(query_fraction * n)]

    def around(q: int) -> np.ndarray:
        return full.indices[full.indptr[q]:full.indptr[q + 1]].astype(np.int64)

    test = {}
    for q in ranked.tolist():
        pos, neg = _hold_out(around(q), np.r_[around(q), q], n, holdout, rng)
        if pos.size and neg.size:
            test[q] = (pos, neg)
    queries = np.asarray(list(test), dtype=np.int64)
    out_test = {q: set(pos.tolist()) for q, (pos, _) in test.items()}
    sample_pairs = _without(pairs, _gone({q: p for q, (p, _) in test.items()}, out_test, n), n)
    sample = to_csr(sample_pairs, n)
    # the dev part: each query's training neighbours (its neighbours but its test positives) and
    # non-neighbours (but its test negatives), held out again the same way
    dev = {}
    for q in queries.tolist():
        pos_t, neg_t = test[q]
        kept = np.setdiff1d(around(q), pos_t)
        dev[q] = _hold_out(kept, np.r_[around(q), q, neg_t], n, dev_fraction, rng)
    out_dev = {q: out_test[q] | set(dev[q][0].tolist()) for q in dev}
    dev_pairs = _without(sample_pairs, _gone({q: p for q, (p, _) in dev.items()}, out_dev, n), n)
    keep = rng.permutation(sample_pairs.shape[1])[: sample_pairs.shape[1] - int((1 - sigma_prot) * sample_pairs.shape[1])]
    protected = sample_pairs[:, np.sort(keep)]
    protected_codes = pair_codes(protected, n)
    test_ptr, test_nodes, test_labels, test_prot = _candidates(test, queries, protected_codes, n, rng)
    dev_ptr, dev_nodes, dev_labels, dev_prot = _candidates(dev, queries, protected_codes, n, rng)
    usable = []
    for i in range(queries.size):
        parts = [(test_labels[test_ptr[i]:test_ptr[i + 1]], test_prot[test_ptr[i]:test_ptr[i + 1]]),
                 (dev_labels[dev_ptr[i]:dev_ptr[i + 1]], dev_prot[dev_ptr[i]:dev_ptr[i + 1]])]
        usable.append(all(((lab == 1) & ~prot).any() and (lab == 0).any() for lab, prot in parts))
    usable = np.asarray(usable, dtype=bool)
    if not usable.any():
        raise DatasetError("no query keeps a non-protected positive and a negative in both its test and its dev "
                           "candidates; use a denser graph, a larger holdout or a smaller sigma_prot")

    def pick(ptr, *arrays):
        sizes = np.diff(ptr)[usable]
        take = np.repeat(usable, np.diff(ptr))
        return (np.r_[0, np.cumsum(sizes)].astype(np.int64), *(a[take] for a in arrays))

    test_ptr, test_nodes, test_labels, test_prot = pick(test_ptr, test_nodes, test_labels, test_prot)
    dev_ptr, dev_nodes, dev_labels, dev_prot = pick(dev_ptr, dev_nodes, dev_labels, dev_prot)
    dev_graph = to_csr(dev_pairs, n)
    public = to_csr(_without(sample_pairs, protected_codes, n), n)
    protected_adj = to_csr(protected, n)
    own_test = np.diff(protected_adj.indptr).astype(np.int64)
    both = protected_adj.multiply(dev_graph).tocsr()
    both.eliminate_zeros()
    own_dev = np.diff(both.indptr).astype(np.int64)
    return ReferenceSplit(num_nodes=n, full=full, train=sample, public=public, protected=protected,
                          queries=queries[usable], test_ptr=test_ptr, test_nodes=test_nodes, test_labels=test_labels,
                          test_protected=test_prot, dev=dev_graph, dev_ptr=dev_ptr, dev_nodes=dev_nodes,
                          dev_labels=dev_labels, dev_protected=dev_prot, own_test=own_test, own_dev=own_dev)
