"""Ranking metrics of DPLP-rank: AUC@K, precision@K and the AUC of a whole ranked list.

Source: De & Chakrabarti, "Differentially Private Link Prediction with Protected Connections"
(AAAI 2021), Sec. 6.1 (the AUC of each query's top-K list, averaged over the queries).

All take one query's ranked list of labels (1 = held-out neighbour, 0 = held-out non-neighbour)
in ranked order, best first.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

__all__ = ["auc_at_k", "precision_at_k", "ranking_auc"]


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
