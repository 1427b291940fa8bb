"""Training the monotone transform f of DPLP-rank (Eq. 4-5) on public pairs only.

Source: De & Chakrabarti, "Differentially Private Link Prediction with Protected Connections"
(AAAI 2021), Sec. 4.2 "Designing a tractable ranking objective" (Eq. 4-5) and App. 14.2 (margin
0.1, Adam with lr 0.1 and weight decay 1e-5, one query per batch).

Scores enter f scaled by their query's bound (s / s_max,u, in [0, 1] on every u-neighbouring
graph, :func:`graphpriv.ranking.scores.score_range`), so the sensitivity of f for every query is
Delta_f = f(1) - f(0) (``rigorous``). ``paper`` accounting uses the reference code's noise scale
2 f(1) / eps_p instead, which training can shrink by moving f's offset (a known flaw, reproduced
in ``paper`` mode only; docs/dplp_rank.md). Step loss for query u, with fresh Gumbel draws eta:

    mean over (g, b) of ReLU(margin + f(s_ub) + c eta_ub - f(s_ug) - c eta_ug),  c = 2 Delta / eps_p,

g a public neighbour of u, b a non-neighbour; one query per step, Adam (lr 0.1, weight decay 1e-5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

__all__ = ["QueryPairs", "noise_scale", "train_transform"]


@dataclass(frozen=True)
class QueryPairs:
    """One query's training scores (already divided by the query's bound, in [0, 1]).

    Attributes: positive ``[p]`` (public neighbours), negative ``[n]`` (non-neighbours).
    """

    positive: np.ndarray
    negative: np.ndarray


def noise_scale(f: nn.Module, epsilon_p: float, accounting: str) -> Tensor:
    """The Gumbel scale c of the exponential mechanism on f's utilities in [f(0), f(1)].

    ``rigorous``: 2 (f(1) - f(0)) / eps_p (the sensitivity of f over the score range).
    ``paper``: 2 f(1) / eps_p (the reference code's scale; not translation invariant).

    Raises:
        ValueError: unknown accounting or eps_p <= 0.
    """
    if epsilon_p <= 0:
        raise ValueError(f"'epsilon_p' must be > 0 (got {epsilon_p})")
    ends = f(torch.tensor([0.0, 1.0], dtype=torch.float64))
    if accounting == "rigorous":
        return 2.0 * (ends[1] - ends[0]) / epsilon_p
    if accounting == "paper":
        return 2.0 * ends[1] / epsilon_p
    raise ValueError(f"accounting must be 'rigorous' or 'paper' (got {accounting!r})")


def train_transform(f: nn.Module, queries: Sequence[QueryPairs], *, epsilon_p: float, accounting: str = "rigorous",
                    epochs: int = 10, lr: float = 0.1, weight_decay: float = 1e-5, margin: float = 0.1,
                    max_negatives: int | None = 1000, max_positives: int | None = 100, seed: int = 0,
                    progress=None) -> list[float]:
    """Minimise Eq. 4-5 over the queries, one query per step, ``epochs`` passes in a seeded order.

    Args:
        f: the transform (its trainable parameters are optimised in place).
        queries: per query, public positive and negative scores (scaled to [0, 1]); queries with
            no positive or no negative are skipped. epsilon_p: per-draw privacy parameter (sets
            the training noise). accounting: ``rigorous`` or ``paper`` (:func:`noise_scale`).
        max_negatives, max_positives: pairs drawn per step from the query's negatives and
            positives (all if None or fewer): the step's hinge matrix is at most their product.
        progress: optional ``progress(done, total, loss=...)``.

    Returns:
        Mean step loss per epoch.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a step's tensors are a few hundred scores: threads only add overhead
    try:
        return _train(f, queries, epsilon_p=epsilon_p, accounting=accounting, epochs=epochs, lr=lr,
                      weight_decay=weight_decay, margin=margin, max_negatives=max_negatives,
                      max_positives=max_positives, seed=seed, progress=progress)
    finally:
        torch.set_num_threads(threads)


def _train(f, queries, *, epsilon_p, accounting, epochs, lr, weight_decay, margin, max_negatives, max_positives,
           seed, progress) -> list[float]:
    usable = [q for q in queries if q.positive.size and q.negative.size]
    params = [p for p in f.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    rng = np.random.default_rng([seed, 71])
    gen = torch.Generator().manual_seed(int(rng.integers(2**31)))
    history = []
    for epoch in range(epochs):
        losses = []
        for i in rng.permutation(len(usable)):
            q = usable[i]
            pos, neg = q.positive, q.negative
            if max_negatives is not None and neg.size > max_negatives:
                neg = neg[rng.choice(neg.size, max_negatives, replace=False)]
            if max_positives is not None and pos.size > max_positives:
                pos = pos[rng.choice(pos.size, max_positives, replace=False)]
            s = torch.from_numpy(np.concatenate([pos, neg])).to(torch.float64)
            p = pos.size
            optimizer.zero_grad()
            noisy = f(s) + noise_scale(f, epsilon_p, accounting) * _gumbel(s.numel(), gen)
            loss = torch.relu(margin + noisy[p:].unsqueeze(0) - noisy[:p].unsqueeze(1)).mean()
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
        history.append(float(np.mean(losses)) if losses else 0.0)
        if progress is not None:
            progress(epoch + 1, epochs, loss=history[-1])
    return history


def _gumbel(size: int, gen: torch.Generator) -> Tensor:
    u = torch.rand(size, generator=gen, dtype=torch.float64).clamp(1e-300, 1 - 1e-16)
    return -torch.log(-torch.log(u))
