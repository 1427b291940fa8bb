"""Training PrivDPR's embeddings V with Gaussian noise on V's gradient (Algorithm 2).

Source: Zhang, Hu, Ye, Xu, "PrivDPR: Synthetic Graph Publishing with Deep PageRank under
Differential Privacy" (KDD 2025), Algorithm 2, Sec. 4.3.2 and Theorem 5.1; graphpriv's
departures (the replace-one factor 2, the RDP accounting) are explained in docs/privdpr.md,
"Decisions".

Privacy (unit: node; relation: *bounded* node-level, neighbouring graphs replace one node and
its edges, N public). Per iteration the pairs' summed gradient w.r.t. V has norm at most
B M (1/s)^(L+1) <= S_grad / T for *any* weights W (Theorem 4.2 with the depth of Eq. 13), so on
two neighbouring graphs the sums differ by at most 2 S_grad / T (graphpriv's replace-one factor 2)
even though the noise-free W, trained on the data, differ too. The step adds
N(0, (2 S_grad / T)^2 z^2 I) to the whole ``[N, r]`` gradient: a Gaussian mechanism with noise
multiplier z. T such steps:

- ``paper``: z = sqrt(2 ln(1.25 T / delta)) / (eps / T), each step (eps/T, delta/T)-DP by the
  classical Gaussian mechanism, sequential composition (the paper's Sec. 4.3.2);
- ``rigorous``: the same T Gaussian steps composed by the RDP accountant, z calibrated so the
  accountant's epsilon meets eps at delta (less noise for the same guarantee).

Each step's noise is drawn, and the step spent on the ledger, by graphpriv's one noisy step,
:func:`graphpriv.privacy.engine.noisy_gradient` (into V's persistent gradient buffer).

Both are reported: a paper-mode result also gives the RDP epsilon of its (larger) noise. W are
never released; V is, and the synthetic graph is post-processing of V.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import scipy.sparse as sp
import torch
from dp_accounting import dp_event
from dp_accounting.privacy_accountant import NeighboringRelation

from graphpriv.errors import ConfigError
from graphpriv.privacy.accountant import GraphRdpAccountant, Ledger
from graphpriv.privacy.calibration import calibrate_noise_multiplier
from graphpriv.privacy.engine import noisy_gradient
from graphpriv.privacy.events import ApproxDpEvent
from graphpriv.privacy.units import Accounting, PrivacyUnit
from graphpriv.synthesis.deep_pagerank import (
    DeepPageRank,
    check_gradient_bound,
    depth_for_sensitivity,
    pair_loss,
)
from graphpriv.synthesis.walks import walk_pairs

__all__ = ["GradientCanary", "PrivDPRTraining", "paper_noise_multiplier", "rdp_epsilon", "train_embeddings"]


def paper_noise_multiplier(epsilon: float, delta: float, iterations: int) -> float:
    """sigma = sqrt(2 ln(1.25 / (delta / T))) / (eps / T) (PrivDPR Sec. 4.3.2).

    Raises:
        ConfigError: eps / T >= 1 (the classical Gaussian mechanism's bound needs eps < 1 per step).
    """
    if epsilon / iterations >= 1:
        raise ConfigError(f"eps / T = {epsilon / iterations:.3g} >= 1: the classical Gaussian mechanism the paper "
                          "composes needs eps < 1 per step")
    return math.sqrt(2 * math.log(1.25 * iterations / delta)) / (epsilon / iterations)


class GradientCanary(Protocol):
    """Audit-only hook of :func:`train_embeddings` (:mod:`graphpriv.audit.privdpr`, which passes it
    through ``PrivDPR.fit(..., audit_hook=AuditHook(canaries=...))``).

    ``rows`` extra rows are appended to V after the N node rows. No walk visits them, so their true
    gradient is 0 and they never enter f; they go through V's noise addition and Adam step like
    every other row. In every step, ``add`` receives the ``[rows, r]`` view of the summed gradient
    (the step's noise is already drawn into it; the canaries' contributions are added in place, and
    addition commutes) and ``observe`` the same view afterwards (the released noisy sum, before the
    division by B); ``observe`` must copy what it keeps. The returned V has the N node rows only.
    """

    rows: int

    def add(self, grad: torch.Tensor) -> None: ...

    def observe(self, noisy_grad: torch.Tensor) -> None: ...


@dataclass
class PrivDPRTraining:
    """What training produced: V, the bound's numbers and the ledger (None without noise)."""

    V: torch.Tensor
    depth: int
    iterations: int
    batch_pairs: int
    noise_multiplier: float | None
    noise_std: float | None
    ledger: Ledger | None
    info: dict = field(default_factory=dict)


def train_embeddings(adj: sp.csr_matrix, *, epsilon: float | None, delta: float = 1e-5,
                     accounting: Accounting = Accounting.RIGOROUS, s_grad: float = 5.0, epochs: int = 5, batch_nodes: int = 16,
                     num_walks: int = 2, walk_length: int = 16, r: int = 128, d: int = 64, s: float = 8.0,
                     lr: float = 1e-3, gamma: float = 0.85, adam_eps: float = 1e-8, seed: int = 0,
                     progress=None, canary: GradientCanary | None = None,
                     noise_scale: float = 1.0, gradient_bound: str = "paper") -> PrivDPRTraining:
    """Algorithm 2, lines 1-12: train V (and the unreleased W) on ``adj``.

    Args:
        adj: ``[N, N]`` CSR adjacency, row i = i's out-neighbours (symmetric for undirected); only
            its structure is read (the stored values are ignored, so any values keep the bound).
        epsilon: node-level budget (> 0), or None for ``dpr`` (no noise, no guarantee).
        delta: in (0, 1). accounting: ``rigorous`` or ``paper`` (module docstring).
        s_grad: preset sensitivity S_grad. epochs, batch_nodes: T = epochs floor(N / b).
        num_walks, walk_length: R_wn, R_wl (B = b R_wn R_wl pairs at most per step).
        r, d, s, lr, gamma: model and optimiser (Adam for V and for W). adam_eps: Adam's epsilon
            (PyTorch's 1e-8; V's gradients are about 1e-14, so this decides whether V moves at all).
        canary: the privacy audit's hook (:class:`GradientCanary`); None (default) trains as usual.
        noise_scale: the noise std 2 S_grad / T * z times this factor (1.0; other values only from a
            privacy audit's fault test, :class:`graphpriv.privacy.hooks.AuditHook`, which breaks
            the noise but not the ledger).
        gradient_bound: ``paper`` (Theorem 4.2: each layer shrinks ||df/dv|| by 1/s) or ``sigmoid``
            (graphpriv's: by 1/(4s), sigmoid' <= 1/4), the factor Eq. 13's depth is computed with
            (:func:`graphpriv.synthesis.deep_pagerank.depth_for_sensitivity`). Either bounds the
            step's summed V-gradient by S_grad / T for every W; ``sigmoid`` with fewer layers.

    Returns:
        :class:`PrivDPRTraining` (V ``[N, r]`` float32); its ledger has spent the T steps (phase
        ``training``), one per noisy step.

    Privacy:
        Node-level, ``REPLACE_ONE`` (bounded: replace one node and its edges; N public); each step
        ``GaussianDpEvent(z)`` (``rigorous``) or ``ApproxDpEvent(eps / T, delta / T)`` (``paper``).

    Raises:
        ConfigError: epsilon <= 0, s <= 1, depth over 64, T = 0, bad accounting, an unknown
            ``gradient_bound``.

    Source: Zhang, Hu, Ye, Xu, "PrivDPR: Synthetic Graph Publishing with Deep PageRank under
    Differential Privacy" (KDD 2025), Algorithm 2 and Sec. 4.3.2.
    """
    n = adj.shape[0]
    iterations = epochs * (n // batch_nodes)
    if iterations < 1:
        raise ConfigError(f"T = epochs * floor(N / b) = {iterations}: need N >= batch_nodes and epochs >= 1")
    if epsilon is not None and not epsilon > 0:
        raise ConfigError(f"'epsilon' must be > 0 (got {epsilon})")
    check_gradient_bound(gradient_bound)
    if accounting not in ("rigorous", "paper"):
        raise ConfigError(f"accounting must be 'rigorous' or 'paper' (got {accounting!r})")
    accounting = Accounting(accounting)
    batch_pairs = batch_nodes * num_walks * walk_length
    depth = depth_for_sensitivity(num_nodes=n, batch_pairs=batch_pairs, iterations=iterations, s=s,
                                  s_grad=s_grad, gamma=gamma, gradient_bound=gradient_bound)
    ledger, z, event, info = None, None, None, {}
    if epsilon is not None:
        ledger, z, event, info = _account(epsilon, delta, accounting, iterations)
    sensitivity = 2.0 * s_grad / iterations  # replace-one: both sums have norm <= S_grad / T
    std = None if z is None else sensitivity * z * noise_scale

    gen = torch.Generator().manual_seed(seed)
    model = DeepPageRank(n + (canary.rows if canary is not None else 0), r=r, d=d, depth=depth, s=s, generator=gen)
    opt_w = torch.optim.Adam(model.weights.parameters(), lr=lr, eps=adam_eps)
    opt_v = torch.optim.Adam([model.V], lr=lr, eps=adam_eps, fused=True)  # fused: one pass over N x r
    out_degree = torch.from_numpy(np.diff(adj.indptr).astype(np.float32))
    # d_in counts stored entries, as the walks and d_out do: the bound needs counts >= 1 for the
    # nodes a walk enters, whatever values adj stores (a weight of inf or NaN would make W NaN)
    in_degree = torch.from_numpy(np.bincount(adj.indices, minlength=n).astype(np.float32))
    rng = np.random.default_rng([seed, 131])
    per_epoch = n // batch_nodes
    losses, signal = [], []
    # V's noisy gradient sum lives in one persistent [N, r] buffer: the noise is drawn into it and the
    # batch's rows are added, so no step allocates (a fresh N x r tensor costs page faults) and f runs
    # once per distinct node of the batch (the sources repeat R_wn R_wl times), not once per pair end.
    grad = torch.zeros_like(model.V)
    for epoch in range(epochs):
        order = rng.permutation(n)
        total = 0.0
        for j in range(per_epoch):
            src, dst = walk_pairs(adj, order[j * batch_nodes:(j + 1) * batch_nodes], num_walks=num_walks,
                                  walk_length=walk_length, rng=rng)
            opt_w.zero_grad()
            summed = None  # the batch's summed V-gradient: its rows only (sparse), the others are 0
            if src.size:
                i, k = torch.from_numpy(src), torch.from_numpy(dst)
                nodes, where = torch.unique(torch.cat([i, k]), return_inverse=True)
                rows = model.V.detach()[nodes].requires_grad_()
                f = model.score(rows)
                loss = pair_loss(f[where[:i.numel()]], f[where[i.numel():]], out_degree[i], in_degree[k],
                                 num_nodes=n, gamma=gamma).sum()
                loss.backward()
                total += float(loss.detach())
                signal.append(float(rows.grad.norm()))  # the true sum's norm: its non-zero rows
                summed = torch.sparse_coo_tensor(nodes.unsqueeze(0), rows.grad, grad.shape, is_coalesced=True,
                                                 check_invariants=False)  # torch.unique: sorted, unique
            if std is not None:  # the one noisy step: noise drawn into the buffer, the sum added, spent
                noisy_gradient({"V": summed}, [("V", grad)], noise_std=std, generator=gen, out={"V": grad},
                               ledger=ledger, event=event, phase="training", noise_multiplier=z)
            else:
                grad.zero_()
                if summed is not None:
                    grad.add_(summed)
            opt_w.step()  # W: no noise (never released; the bound holds for any W)
            if canary is not None:
                canary.add(grad[n:])
                canary.observe(grad[n:])
            model.V.grad = grad.div_(batch_pairs)
            opt_v.step()
        losses.append(total / per_epoch)
        if progress is not None:
            progress(epoch + 1, epochs, loss=losses[-1])
    # signal-to-noise of the released gradient: the true sum's norm against the noise's norm
    noise_norm = None if std is None else std * math.sqrt(n * r)
    info.update(train_loss=losses, gradient_norm_mean=float(np.mean(signal)) if signal else 0.0,
                gradient_norm_max=float(np.max(signal)) if signal else 0.0, gradient_bound=s_grad / iterations,
                noise_norm=noise_norm)
    return PrivDPRTraining(V=model.V.detach()[:n].clone(), depth=depth, iterations=iterations, batch_pairs=batch_pairs,
                           noise_multiplier=z, noise_std=std, ledger=ledger, info=info)


def rdp_epsilon(noise_multiplier: float, iterations: int, delta: float) -> float:
    """The RDP accountant's epsilon at ``delta`` of T = ``iterations`` Gaussian steps with noise
    multiplier z under the replace-one relation (PrivDPR's bounded node-level DP): what the
    rigorous analysis says of any PrivDPR noise, whichever mode calibrated it."""
    return float(GraphRdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE).compose(
        dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(noise_multiplier), iterations)).get_epsilon(delta))


def _account(epsilon: float, delta: float, accounting: Accounting, iterations: int):
    """The noise multiplier of the mode, its (empty) ledger and one step's event, and the other
    mode's view of the noise. The ledger is bounded node-level: ``REPLACE_ONE``, stated explicitly
    (the node unit's default is add/remove)."""
    relation = NeighboringRelation.REPLACE_ONE
    if accounting == "paper":
        z = paper_noise_multiplier(epsilon, delta, iterations)
        ledger = Ledger(PrivacyUnit.NODE, delta=delta, accounting=Accounting.PAPER, accountant="basic",
                        neighboring_relation=relation)
        event = ApproxDpEvent(epsilon / iterations, delta / iterations)
    else:
        def run_event(multiplier: float) -> dp_event.DpEvent:
            return dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(multiplier), iterations)

        z = calibrate_noise_multiplier(run_event, target_epsilon=epsilon, delta=delta, neighboring_relation=relation)
        ledger = Ledger(PrivacyUnit.NODE, delta=delta, accounting=Accounting.RIGOROUS, neighboring_relation=relation)
        event = dp_event.GaussianDpEvent(z)
    return ledger, z, event, {"noise_multiplier": z, "rdp_epsilon_of_this_noise": rdp_epsilon(z, iterations, delta),
                       "paper_noise_multiplier": paper_noise_multiplier(epsilon, delta, iterations)
                       if epsilon < iterations else None}
