"""The ramp AUC: a Lipschitz stand-in for the pairwise AUC, summed without the P x R pairs.

sum_{p} (1 / |R|) sum_{q in R} h(s_p - s_q), h(t) = clip((t + margin) / (2 margin), 0, 1): the
pairwise AUC with its step replaced by a ramp of width 2 margin, so that a small move of one score
moves the sum by a small amount (:func:`graphpriv.privacy.influence.ramp_utility_sensitivity`).
With the reference scores sorted, each positive's mean over R is a count (references below
s_p - margin) plus a linear part (those within the ramp), read from prefix sums: O((P + R) log R).

Source: graphpriv (docs/linkpred.md); the ramp is the usual Lipschitz surrogate of the 0-1 step.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ramp_auc_sum"]


def ramp_auc_sum(positive: np.ndarray, reference: np.ndarray, *, margin: float) -> float:
    """sum_p mean_q h(positive[p] - reference[q]) with the ramp h of half-width ``margin``.

    Args:
        positive: ``[P]`` float scores. reference: ``[R]`` float scores (R >= 1).
        margin: the ramp's half-width, > 0.

    Returns:
        The sum, a float in [0, P].

    Raises:
        ValueError: an empty ``reference``, a margin <= 0, or non-finite scores.
    """
    positive = np.asarray(positive, dtype=np.float64).ravel()
    reference = np.sort(np.asarray(reference, dtype=np.float64).ravel())
    if reference.size == 0:
        raise ValueError("'reference' must hold at least one score")
    if not margin > 0:
        raise ValueError(f"'margin' must be > 0 (got {margin!r})")
    if not (np.isfinite(positive).all() and np.isfinite(reference).all()):
        raise ValueError("scores must be finite")
    prefix = np.concatenate([[0.0], np.cumsum(reference)])
    below = np.searchsorted(reference, positive - margin, side="left")  # h = 1: s_q < s_p - margin
    top = np.searchsorted(reference, positive + margin, side="right")  # within: h = (s_p - s_q + m) / 2m
    inside = (top - below) * (positive + margin) - (prefix[top] - prefix[below])
    return float(((below + inside / (2 * margin)) / reference.size).sum())
