"""Training DPLP-rank's transform as the authors' released code does (``accounting="reference"``).

Read to understand, not copied; docs/dplp_rank.md ("What the reference code does") lists where it
departs from the paper and from graphpriv's rigorous training (:mod:`graphpriv.ranking.training`).
Both stages minimise the summed hinge loss sum over (positive g, negative b) of
ReLU(margin + u_b - u_g) with Adam (lr 0.1, weight decay 1e-5), the queries in their fixed order,
on each query's development candidates scored on the development graph; the noise is drawn once
and reused every epoch, and a query with none of its own protected edges gets none.

1. nu (:class:`~graphpriv.nn.monotone.ReferencePowerTransform`), 50 epochs, 2 queries per step,
   on the non-protected candidates; each of the 170 powers gets its own Gumbel(0, 1) / e_diff
   before nu (e_diff = eps_p / 2).
2. The UMNN (:class:`~graphpriv.nn.monotone.ReferenceUMNNTransform`) on the frozen nu, 10 epochs, 1
   query per step, on every candidate (protected positives included); the utility is
   f(s) + m G / e_diff with m the sum of nu's raw weights (:meth:`multiplier`), a constant the UMNN
   cannot move, and one Gumbel(0, 1) per candidate. The UMNN's log-scale grows until that noise
   no longer matters, which is how the released code's lists stay close to the non-private ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

__all__ = ["DevQuery", "train_reference_power", "train_reference_umnn"]


@dataclass(frozen=True)
class DevQuery:
    """One query's development candidates.

    Attributes:
        scores: ``[c]`` scaled base scores on the development graph. labels: ``[c]`` 1 for an edge.
        protected: ``[c]`` True for a protected edge. noised: whether the query has protected edges
            of its own (the released code gives the others no noise).
    """

    scores: np.ndarray
    labels: np.ndarray
    protected: np.ndarray
    noised: bool


def _hinge(u: Tensor, positive: np.ndarray, negative: np.ndarray, margin: float) -> Tensor:
    return torch.relu(margin + u[torch.from_numpy(negative)].unsqueeze(0)
                      - u[torch.from_numpy(positive)].unsqueeze(1)).sum()


def train_reference_power(nu: nn.Module, queries: Sequence[DevQuery], *, epsilon_p: float, epochs: int = 50,
                          per_step: int = 2, lr: float = 0.1, weight_decay: float = 1e-5, margin: float = 0.1,
                          rng: np.random.Generator) -> list[float]:
    """Stage 1 (module docstring): train ``nu`` in place.

    Args:
        nu: a :class:`~graphpriv.nn.monotone.ReferencePowerTransform`. queries: the development
            candidates of each query, in the protocol's order. epsilon_p: per-draw privacy
            parameter (e_diff = eps_p / 2 scales the noise). per_step: queries per Adam step.
        rng: the noise's generator (one ``[c, 170]`` draw per query, before training).

    Returns:
        The summed loss per epoch.

    Raises:
        ValueError: epsilon_p <= 0 or per_step < 1.
    """
    if not epsilon_p > 0 or per_step < 1:
        raise ValueError(f"epsilon_p must be > 0 and per_step >= 1 (got {epsilon_p!r}, {per_step!r})")
    e_diff = epsilon_p / 2
    scores = [torch.from_numpy(np.asarray(q.scores, dtype=np.float64)) for q in queries]
    noise = [torch.from_numpy(rng.gumbel(size=(q.scores.size, 170)) * (1.0 if q.noised else 0.0) / e_diff)
             for q in queries]
    optimizer = torch.optim.Adam(nu.parameters(), lr=lr, weight_decay=weight_decay)
    history = []
    for _ in range(epochs):
        total = 0.0
        for start in range(0, len(queries), per_step):
            optimizer.zero_grad()
            loss = torch.zeros((), dtype=torch.float64)
            for i in range(start, min(start + per_step, len(queries))):
                q = queries[i]
                kept = ~q.protected
                u = nu(scores[i], noise[i])
                loss = loss + _hinge(u, np.flatnonzero((q.labels == 1) & kept), np.flatnonzero((q.labels == 0) & kept),
                                     margin)
            if loss.requires_grad:
                loss.backward()
                optimizer.step()
            total += float(loss.detach())
        history.append(total)
    return history


def train_reference_umnn(f: nn.Module, queries: Sequence[DevQuery], *, epsilon_p: float, multiplier: float,
                         epochs: int = 10, lr: float = 0.1, weight_decay: float = 1e-5, margin: float = 0.1,
                         rng: np.random.Generator) -> list[float]:
    """Stage 2 (module docstring): train the UMNN ``f`` in place, one query per step.

    Args:
        f: a :class:`~graphpriv.nn.monotone.ReferenceUMNNTransform` on the trained nu.
        queries: as for :func:`train_reference_power`. multiplier: m, the noise's fixed multiplier.
        rng: the noise's generator (one Gumbel per candidate, before training).

    Returns:
        The summed loss per epoch.

    Raises:
        ValueError: epsilon_p <= 0.
    """
    if not epsilon_p > 0:
        raise ValueError(f"epsilon_p must be > 0 (got {epsilon_p!r})")
    e_diff = epsilon_p / 2
    scores = [torch.from_numpy(np.asarray(q.scores, dtype=np.float64)) for q in queries]
    noise = [torch.from_numpy(rng.gumbel(size=q.scores.size) * (1.0 if q.noised else 0.0) * multiplier / e_diff)
             for q in queries]
    optimizer = torch.optim.Adam([p for p in f.parameters() if p.requires_grad], lr=lr, weight_decay=weight_decay)
    history = []
    for _ in range(epochs):
        total = 0.0
        for i, q in enumerate(queries):
            positive, negative = np.flatnonzero(q.labels == 1), np.flatnonzero(q.labels == 0)
            if not positive.size or not negative.size:
                continue
            optimizer.zero_grad()
            loss = _hinge(f(scores[i]) + noise[i], positive, negative, margin)
            loss.backward()
            optimizer.step()
            total += float(loss.detach())
        history.append(total)
    return history
