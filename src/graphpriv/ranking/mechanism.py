"""Noisy rankings for one query at a time, vectorised over many queries.

Source: De & Chakrabarti (AAAI 2021), Eq. 3 and Sec. 4.2 (iterated exponential mechanism via
Gumbel noise, Durfee & Rogers, NeurIPS 2019, Lemma 4.2); App. 14.4 (Laplace and staircase
baselines); Geng & Viswanath, "The optimal noise-adding mechanism in differential privacy"
(IEEE Trans. Inf. Theory 2016), Algorithm 1, for staircase noise; specs/dplp-rank.md.

Neighbouring relation: u-neighbouring graphs (paper Def. 1): they differ only in the protected
pairs of one node w != u, other than (w, u). With utilities in [f(0), f(1)] on every such graph,
adding Gumbel noise of scale 2 (f(1) - f(0)) / eps_p to every candidate's utility and taking the top
K is distributed exactly as K rounds of the exponential mechanism with eps_p each: the top-K
list is K eps_p-protected-pair DP (paper Prop. 4).
"""

from __future__ import annotations

import numpy as np

__all__ = ["gumbel_noise", "laplace_noise", "rank_within_queries", "staircase_noise"]


def gumbel_noise(size: int, scale: np.ndarray | float, rng: np.random.Generator) -> np.ndarray:
    """``scale * Gumbel(0, 1)``, ``[size]`` float64 (``scale`` broadcasts)."""
    return np.asarray(scale) * rng.gumbel(size=size)


def laplace_noise(size: int, scale: np.ndarray | float, rng: np.random.Generator) -> np.ndarray:
    """``Laplace(0, scale)``, ``[size]`` float64."""
    return rng.laplace(scale=1.0, size=size) * np.asarray(scale)


def staircase_noise(size: int, *, epsilon: float, sensitivity: np.ndarray | float, rng: np.random.Generator,
                    gamma: float | None = None) -> np.ndarray:
    """Staircase noise (Geng & Viswanath 2016, Algorithm 1), ``[size]`` float64.

    The density is a symmetric staircase: a(gamma) e^{-k eps} on [k D, (k + gamma) D) and
    a(gamma) e^{-(k+1) eps} on [(k + gamma) D, (k + 1) D), k = 0, 1, ..., with D the sensitivity.
    Adding it to a numeric query of sensitivity D is eps-DP; gamma defaults to the optimal
    1 / (1 + e^{eps / 2}).

    Raises:
        ValueError: epsilon <= 0, gamma outside [0, 1] or a negative sensitivity.
    """
    if epsilon <= 0:
        raise ValueError(f"'epsilon' must be > 0 (got {epsilon})")
    if gamma is None:
        gamma = 1.0 / (1.0 + np.exp(epsilon / 2.0))
    if not 0 <= gamma <= 1:
        raise ValueError(f"'gamma' must be in [0, 1] (got {gamma})")
    d = np.asarray(sensitivity, dtype=np.float64)
    if (d < 0).any():
        raise ValueError("'sensitivity' must be >= 0")
    b = np.exp(-epsilon)
    sign = rng.choice(np.array([-1.0, 1.0]), size=size)
    geo = rng.geometric(1.0 - b, size=size) - 1.0  # P(G = i) = (1 - b) b^i, i >= 0
    u = rng.random(size)
    upper = rng.random(size) < (1 - gamma) * b / (gamma + (1 - gamma) * b)  # B = 1: the lower step
    x = np.where(upper, geo + gamma + (1 - gamma) * u, geo + gamma * u)
    return sign * x * d


def rank_within_queries(ptr: np.ndarray, scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per query (segment ``ptr[i]:ptr[i+1]``), the positions of its entries sorted by decreasing
    score, ties broken uniformly at random; returns one permutation ``[T]``, query by query.

    Random tie-breaking is part of the mechanism: with a constant utility (a transform whose
    range training collapsed to 0 gives noise scale 0) the exponential mechanism samples
    uniformly, and a deterministic order would instead release the candidates' storage order.
    """
    seg = np.repeat(np.arange(ptr.size - 1), np.diff(ptr))
    return np.lexsort((rng.random(scores.size), -scores, seg))
