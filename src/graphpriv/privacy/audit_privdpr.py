"""Canary audit of PrivDPR (node-level, bounded: replace one node and its edges; issue 10).

Sources: Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run" (NeurIPS 2023):
Theorem 5.2 for the one-run bound with delta, Sec. 7 for white-box "Dirac" gradient canaries;
Zhang et al., "PrivDPR" (KDD 2025) for the mechanism (:mod:`graphpriv.synthesis.privdpr`).

PrivDPR adds N(0, (2 S_grad / T)^2 z^2) noise to every coordinate of V's summed gradient in each of
its T steps; S_grad / T is a worst-case bound (Theorem 4.2 and Eq. 13) that the real gradients are
far below: their norm is about 1e-14 where the bound is about 1e-2 (``gradient_norm_mean`` against
``gradient_bound`` in the training info). Two kinds of attack, one verdict rule
(:func:`graphpriv.privacy.audit.audit_from_scores`: the one-run bound at ``audit_delta`` against
the accountant's epsilon of the same noise at ``audit_delta``):

- ``gradient`` (white-box, worst case; default): m Dirac canaries, one coordinate each, in extra
  rows of V appended after the N node rows (:class:`graphpriv.synthesis.privdpr.GradientCanary`):
  no walk visits them, so their true gradient is 0, and they go through exactly V's noise addition
  (same call, same std, same steps) and Adam step. Each canary is inserted with probability 1/2; in
  every step an inserted canary adds +S_grad / T to its coordinate of the summed gradient and a
  non-inserted one -S_grad / T: both within the per-graph bound, together a replace-one pair at
  the full sensitivity 2 S_grad / T the accountant assumes (one coordinate: the L2 change is
  exactly the sensitivity). Score: the sum over the T steps of the released noisy gradient on the
  canary's coordinate (the noisy summed gradients are what the DP analysis releases; V, updated by
  Adam, is post-processing of them). The sum is the likelihood-ratio statistic of the T Gaussian
  steps, so this attack is the strongest against the noise; it checks the noise scale, the number
  of noisy steps and the accountant, not the bound S_grad / T itself (which it takes as given).
  With T steps, mean +-S_grad and std 2 S_grad z / sqrt(T): a correct run separates the coins only
  as much as the claim allows; ``broken_noise(0.01)`` separates them completely. Canaries are cheap
  (m / r extra rows of V), so m defaults to 5000.
- ``node-embedding`` and ``node-graph`` (black-box, the issue's canary nodes): m new nodes appended
  to the (80% training) graph, N + m public; each canary gets ``partners`` distinct random real
  nodes, and with probability 1/2 (inserted) edges to all of them, else no edges (replace-one: the
  same node with or without its edges). Score: ``node-embedding``, the norm of the canary's row
  of the released V (an isolated node gets no gradient; where V moves at all, moved rows grow:
  measured better than the cosine similarity to the partners, ROC AUC 0.77 against 0.62 for
  ``dpr`` with Adam eps 1e-20); ``node-graph``, the number of synthetic edges between the canary
  and its partners in the generated graph (the method's generation, model edge count).
  Measured on Cora (1 and 5 epochs, 300 canaries, 10 partners): no power at all, lower bound 0,
  for a correct run, against ``broken_noise(0.01)`` and without noise (``dpr``). Three reasons:
  the real V-gradients (about 1e-14) are about 1e12 below the bound the noise is calibrated to;
  Adam's update is invariant to the gradient's scale, so when noise dominates, V is nearly the
  same with 1% of the noise (the correct and broken runs gave identical guesses); and without
  noise, Adam with eps = 1e-8 moves V by about lr 1e-14 / (B 1e-8), below float32 resolution: in
  ``dpr``'s default configuration V is exactly its initialisation. The black-box attacks are
  kept as the honest answer to "can a canary node be detected in PrivDPR's release", not as a
  check of the implementation; the white-box attack is that check.

What the audit runs: the method's split (80/20 :func:`graphpriv.data.splits.link_split`, the 80%
graph), its hyperparameters (``config``, default :class:`graphpriv.methods.privdpr.PrivDPRConfig`)
except ``epochs`` (default 1, to keep it fast; the noise is calibrated for the T = epochs
floor(N / b) steps actually run, as the method calibrates its own T) and ``epsilon``. Claimed
epsilon: the RDP accountant's epsilon of the T Gaussian steps with the run's noise multiplier, at
``audit_delta``, under the replace-one relation (what ``_account`` computes at the method's delta;
equal to ``epsilon`` when ``audit_delta`` is the method's delta and accounting is rigorous; the
paper accounting's larger noise gives a smaller claim). The one-run bound's delta term is
2 m delta, so ``audit_delta`` must be small (1e-5 with m = 5000: 0.1). ``private=False`` audits
``dpr`` (no noise; claim inf).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import numpy as np
import torch
from dp_accounting import dp_event
from dp_accounting.privacy_accountant import NeighboringRelation
from torch_geometric.data import Data

from graphpriv.errors import ConfigError
from graphpriv.privacy.accountant import GraphRdpAccountant, check_delta, check_epsilon
from graphpriv.privacy.audit import AuditReport, audit_from_scores

if TYPE_CHECKING:
    from graphpriv.methods.privdpr import PrivDPRConfig

__all__ = ["PRIVDPR_ATTACKS", "DiracCanaries", "audit_privdpr"]

#: The attacks :func:`audit_privdpr` runs (module docstring).
PRIVDPR_ATTACKS = ("gradient", "node-embedding", "node-graph")


class DiracCanaries:
    """m one-coordinate gradient canaries for :func:`graphpriv.synthesis.privdpr.train_embeddings`
    (its ``canary`` hook): canary c is coordinate c of the flattened ``[rows, r]`` canary block.

    Args:
        inserted: ``[m]`` bool coins. r: V's width. step_value: S_grad / T, added (inserted) or
            subtracted (not inserted) in every step.

    Attributes:
        rows: extra rows of V. released_sum: ``[m]`` float64, the sum over the steps of the
            released (noisy) summed gradient on each canary's coordinate. steps: steps observed.
    """

    def __init__(self, inserted: np.ndarray, *, r: int, step_value: float) -> None:
        m = inserted.size
        self.rows = -(-m // r)
        signs = np.zeros(self.rows * r, dtype=np.float32)
        signs[:m] = np.where(inserted, 1.0, -1.0)
        self._delta = torch.from_numpy(signs * np.float32(step_value)).reshape(self.rows, r)
        self._m = m
        self.released_sum = np.zeros(m, dtype=np.float64)
        self.steps = 0

    def add(self, grad: torch.Tensor) -> None:
        grad.add_(self._delta)

    def observe(self, noisy_grad: torch.Tensor) -> None:
        self.released_sum += noisy_grad.reshape(-1)[:self._m].double().numpy()
        self.steps += 1


def _claimed_epsilon(noise_multiplier: float, iterations: int, audit_delta: float) -> float:
    """The RDP accountant's epsilon of T Gaussian steps (replace-one) at ``audit_delta``."""
    accountant = GraphRdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    event = dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(noise_multiplier), iterations)
    return float(accountant.compose(event).get_epsilon(audit_delta))


def audit_privdpr(data: Data, *, epsilon: float = 3.2, canaries: int | None = None, seed: int = 0,
                  attack: Literal["gradient", "node-embedding", "node-graph"] = "gradient", private: bool = True,
                  epochs: int = 1, partners: int = 10, config: PrivDPRConfig | None = None, guesses: int | None = None,
                  confidence: float = 0.95, audit_delta: float = 1e-5) -> AuditReport:
    """Canary audit of ``privdpr`` (or ``dpr`` with ``private=False``) on ``data`` (module docstring).

    Args:
        data: the graph (the audit trains on its 80% link-split training graph, as the method does).
        epsilon: the method's node-level target (> 0; ignored when ``private`` is False).
        canaries: m (default 5000 for ``gradient``, 300 canary nodes for the node attacks).
        seed: split, canaries, coins, training. attack: ``gradient`` (white-box Dirac canaries),
            ``node-embedding`` or ``node-graph`` (black-box canary nodes). private: False audits
            ``dpr`` (no noise; claimed epsilon inf). epochs: training epochs (T = epochs floor(N / b)).
        partners: edges of an inserted canary node (node attacks). config: a
            :class:`graphpriv.methods.privdpr.PrivDPRConfig` for the other hyperparameters (delta,
            accounting, s_grad, batch_nodes, walks, r, d, s, lr, adam_eps, generation); its
            epsilon, epochs and private are replaced by the arguments.
        guesses, confidence: as in :func:`graphpriv.privacy.audit.audit_from_scores` (default
            guesses m / 5). audit_delta: the delta of the claim and of the one-run bound.

    Returns:
        :class:`graphpriv.privacy.audit.AuditReport` (unit ``node``); ``passed``: one-run lower
        bound <= claimed epsilon.

    Raises:
        ConfigError: unknown attack, canaries < 2, partners outside [1, N), or a graph with fewer
            nodes than a batch. PrivacyError: bad epsilon or audit_delta.
    """
    from graphpriv.data.graph import to_csr
    from graphpriv.data.splits import link_split
    from graphpriv.methods.privdpr import PrivDPRConfig, training_kwargs
    from graphpriv.synthesis.privdpr import train_embeddings

    if attack not in PRIVDPR_ATTACKS:
        raise ConfigError(f"the PrivDPR audit's attacks are {', '.join(PRIVDPR_ATTACKS)} (got {attack!r})")
    m = (5000 if attack == "gradient" else 300) if canaries is None else int(canaries)
    if m < 2:
        raise ConfigError(f"need at least 2 canaries (got {m})")
    if epochs < 1:
        raise ConfigError(f"'epochs' must be >= 1 (got {epochs})")
    if private:
        check_epsilon(epsilon)
    check_delta(audit_delta)
    config = (config or PrivDPRConfig()).model_copy(update={"epochs": int(epochs), "private": private,
                                                            **({"epsilon": float(epsilon)} if private else {})})
    n = int(data.num_nodes)
    rng = np.random.default_rng([seed, 2039])
    inserted = rng.random(m) < 0.5
    split = link_split(data, val_ratio=0.0, test_ratio=config.test_ratio, seed=seed)
    train_kwargs = training_kwargs(config, private=private, seed=seed)
    notes = [f"{config.epochs} epoch(s) on the 80% training graph of {n} nodes; each canary in w.p. 1/2"]
    if attack == "gradient":
        iterations = config.epochs * (n // config.batch_nodes)
        if iterations < 1:
            raise ConfigError(f"the graph has {n} nodes, fewer than a batch of {config.batch_nodes}")
        hook = DiracCanaries(inserted, r=config.r, step_value=config.s_grad / iterations)
        trained = train_embeddings(to_csr(split.train_edge_index, n), canary=hook, **train_kwargs)
        if hook.steps != trained.iterations:  # the hook must have seen every noisy step
            raise RuntimeError(f"the canaries saw {hook.steps} steps of {trained.iterations}")
        scores = hook.released_sum
        attack_text = ("white-box Dirac gradient canaries (+-S_grad/T per step on one coordinate of V's summed "
                       "gradient); score: sum of the released noisy gradients on the coordinate")
        notes.append(f"{m} canary coordinates in {hook.rows} extra rows of V, through V's noise addition")
    else:
        if not 1 <= partners < n:
            raise ConfigError(f"'partners' must be in [1, {n}) (got {partners})")
        partner_ids = np.stack([rng.choice(n, partners, replace=False) for _ in range(m)])
        canary_ids = n + np.arange(m)
        edges = np.stack([np.repeat(canary_ids[inserted], partners), partner_ids[inserted].ravel()])
        graph = np.concatenate([split.train_edge_index, edges], axis=1)
        trained = train_embeddings(to_csr(graph, n + m), **train_kwargs)
        if attack == "node-embedding":
            scores = trained.V[torch.from_numpy(canary_ids)].double().norm(dim=1).numpy()
            attack_text = "black-box canary nodes; score: norm of the canary's row of the released V"
        else:
            scores = _synthetic_partner_edges(trained.V, canary_ids, partner_ids, config, seed)
            attack_text = "black-box canary nodes; score: synthetic edges to the partners in the generated graph"
        notes.append(f"{m} canary nodes (N + m = {n + m} public), {partners} partner edges each when inserted, "
                     f"none otherwise; true V-gradient norm {trained.info['gradient_norm_mean']:.3g} per step "
                     f"against the bound {trained.info['gradient_bound']:.3g}")
    if private:
        claimed = _claimed_epsilon(trained.noise_multiplier, trained.iterations, audit_delta)
        accounting = (f"rigorous (RDP of {trained.iterations} Gaussian steps, z = {trained.noise_multiplier:.4g}, "
                      f"at delta = {audit_delta:g}; calibrated to eps {config.epsilon:g} at delta {config.delta:g}, "
                      f"{config.accounting} accounting)")
    else:
        claimed, accounting = math.inf, "non-private (dpr: no noise)"
    return audit_from_scores(scores, inserted, method="privdpr" if private else "dpr",
                             dataset=str(getattr(data, "name", "graph")), unit="node", claimed_epsilon=claimed,
                             accounting=accounting, attack=attack_text, guesses=guesses, confidence=confidence,
                             audit_delta=audit_delta, notes=notes)


def _synthetic_partner_edges(V: torch.Tensor, canary_ids: np.ndarray, partner_ids: np.ndarray,
                             config: PrivDPRConfig, seed: int) -> np.ndarray:
    """Per canary, its synthetic edges to its partners (the method's generation; an ``input`` edge
    count falls back to the model's, as the audit has no private count to read)."""
    from graphpriv.data.graph import pair_codes
    from graphpriv.methods.privdpr import generate_pairs

    n = V.shape[0]
    if config.edge_count == "input":
        config = config.model_copy(update={"edge_count": "model"})
    pairs, _, _ = generate_pairs(V, config, seed=seed)
    released = np.unique(pair_codes(pairs, n))
    k = partner_ids.shape[1]
    candidates = np.stack([np.repeat(canary_ids, k), partner_ids.ravel()])
    present = np.isin(pair_codes(candidates, n), released)
    return present.reshape(-1, k).sum(1).astype(np.float64)
