"""Ranking metrics of DPLP-rank: AUC@K, precision@K and the AUC of a whole ranked list.

Source: De & Chakrabarti, "Differentially Private Link Prediction with Protected Connections"
(AAAI 2021), Sec. 6.1 (the AUC of each query's top-K list, averaged over the queries).

All take one query's ranked list of labels (1 = held-out neighbour, 0 = held-out non-neighbour)
in ranked order, best first.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import hypergeom, rankdata

__all__ = ["auc_at_k", "chance_auc_at_k", "precision_at_k", "ranking_auc"]


def _labels(ranked: np.ndarray) -> np.ndarray:
    ranked = np.asarray(ranked)
    if ranked.ndim != 1 or not np.isin(ranked, (0, 1)).all():
        raise ValueError("'ranked' must be a 1-d array of 0/1 labels in ranked order")
    return ranked.astype(np.int64)


def auc_at_k(ranked: np.ndarray, k: int) -> float:
    """The paper's AUC@K: within the top ``k`` of the list, the fraction of (positive, negative)
    pairs with the positive ranked above the negative; 0 for a top-k with no positive, 1 for one
    with no negative (the reference code's convention).

    Raises:
        ValueError: k < 1 or labels other than 0/1.
    """
    if k < 1:
        raise ValueError(f"'k' must be >= 1 (got {k})")
    top = _labels(ranked)[:k]
    pos = int(top.sum())
    neg = top.size - pos
    if pos == 0:
        return 0.0
    if neg == 0:
        return 1.0
    # each negative is out-ranked by the positives placed before it
    before = np.cumsum(top)[top == 0]
    return float(before.sum() / (pos * neg))


def chance_auc_at_k(num_positives: int, num_candidates: int, k: int) -> float:
    """Expected :func:`auc_at_k` of a uniformly random ranking of ``num_candidates`` candidates of
    which ``num_positives`` are positives: the chance level of the metric.

    The top ``k`` of a random ranking is a uniform ``k``-subset in random order, so its positive
    count p is hypergeometric, and given p (0 < p < k) each (positive, negative) pair is ordered
    either way with probability 1/2. With the metric's conventions (0 without a positive, 1 without
    a negative): E = P(0 < p < k) / 2 + P(p = k).

    Args:
        num_positives: positives among the candidates, in [0, num_candidates].
        num_candidates: n >= 1. k: the list length (``min(k, n)`` is used, as the protocol does).

    Returns:
        The expectation in [0, 1].

    Raises:
        ValueError: k < 1, n < 1 or a positive count outside [0, n].
    """
    if k < 1 or num_candidates < 1 or not 0 <= num_positives <= num_candidates:
        raise ValueError(f"need k >= 1, num_candidates >= 1 and 0 <= num_positives <= num_candidates (got k={k}, "
                         f"num_candidates={num_candidates}, num_positives={num_positives})")
    k = min(k, num_candidates)
    p = hypergeom(num_candidates, num_positives, k).pmf(np.arange(k + 1))
    return float(p[1:k].sum() / 2 + p[k])


def precision_at_k(ranked: np.ndarray, k: int) -> float:
    """Positives among the first ``k`` entries, divided by k (a shorter list counts as padded
    with negatives)."""
    if k < 1:
        raise ValueError(f"'k' must be >= 1 (got {k})")
    return float(_labels(ranked)[:k].sum() / k)


def ranking_auc(labels: np.ndarray, scores: np.ndarray) -> float:
    """Plain ROC-AUC of (noisy) scores over one query's candidates (Mann-Whitney U with average
    ranks, ties count one half); NaN with one class only."""
    labels = _labels(labels)
    pos = int(labels.sum())
    neg = labels.size - pos
    if pos == 0 or neg == 0:
        return float("nan")
    ranks = rankdata(np.asarray(scores, dtype=np.float64))
    return float((ranks[labels == 1].sum() - pos * (pos + 1) / 2) / (pos * neg))
