"""Canary audit of PrivDPR (:class:`~graphpriv.methods.privdpr.PrivDPR`, method ids ``privdpr`` and
``dpr``; node level, bounded: replace one node and its edges).

Sources: Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run" (NeurIPS 2023):
Theorem 5.2 for the one-run bound with delta, Sec. 7 for white-box "Dirac" gradient canaries;
Zhang, Hu, Ye, Xu, "PrivDPR: Synthetic Graph Publishing with Deep PageRank under Differential
Privacy" (KDD 2025) for the mechanism audited (Algorithm 2; Theorem 4.2 and Eq. 13 for the
gradient bound).

The audit runs the estimator's own ``fit`` once, on the graph it is given (no link split: the
relation audited is replacing one node of the graph given to ``fit``), with the audit's seed
(:func:`graphpriv.audit.fitting.audited_copy`) and, for the white-box attack, through
``fit(..., audit_hook=AuditHook(noise_scale, canaries=DiracCanaries(...)))``
(:class:`graphpriv.privacy.hooks.AuditHook`): the walks, the depth, the calibration, the noise and
Adam's steps are the code a user runs. The run's hyperparameters (epochs included) are the
estimator's; the noise is calibrated for the T = epochs floor(N / b) steps actually run.

PrivDPR adds N(0, (2 S_grad / T)^2 z^2) noise to every coordinate of V's summed gradient in each of
its T steps; S_grad / T is a worst-case bound that the real gradients are far below: their norm is
about 1e-14 where the bound is about 1e-2 (``gradient_norm_mean`` against ``gradient_bound`` in
``info_``). Two kinds of attack, one verdict rule
(:func:`graphpriv.audit.statistics.audit_from_scores`: the one-run bound at ``audit_delta``
against the fit's own claim at ``audit_delta``):

- ``gradient`` (white box, worst case; default): m Dirac canaries, one coordinate each, in extra
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
  as much as the claim allows; noise 100x too small (``noise_scale=0.01``) separates them
  completely. Canaries are cheap (m / r extra rows of V), so m defaults to 5000.
- ``node-embedding`` and ``node-graph`` (black box, canary nodes): m new nodes appended to the
  graph, N + m public; each canary gets ``partners`` distinct random real nodes, and with
  probability 1/2 (inserted) edges to all of them, else no edges (replace-one: the same node with
  or without its edges). Score: ``node-embedding``, the norm of the canary's row of the released
  V (an isolated node gets no gradient; where V moves at all, moved rows grow: measured better
  than the cosine similarity to the partners, ROC AUC 0.77 against 0.62 for ``dpr`` with Adam eps
  1e-20); ``node-graph``, the number of synthetic edges between the canary and its partners in
  the graph ``generate`` returns (the model's edge count when the estimator reads the input's).
  Measured on Cora (1 and 5 epochs, 300 canaries, 10 partners): no power at all, lower bound 0,
  for a correct run, with noise 100x too small and without noise (``dpr``). Three reasons: the
  real V-gradients (about 1e-14) are about 1e12 below the bound the noise is calibrated to; Adam's
  update is invariant to the gradient's scale, so when noise dominates, V is nearly the same with
  1% of the noise (the correct and faulty runs gave identical guesses); and without noise, Adam
  with eps = 1e-8 moves V by about lr 1e-14 / (B 1e-8), below float32 resolution: in ``dpr``'s
  default configuration V is exactly its initialisation. The black-box attacks are kept as the
  honest answer to "can a canary node be detected in PrivDPR's release", not as a check of the
  implementation; the white-box attack is that check.

Claim: the fitted copy's own accounting at ``audit_delta``
(:func:`graphpriv.audit.fitting.claim`; under rigorous accounting the RDP accountant's epsilon of
the T Gaussian steps, replace-one, equal to the estimator's epsilon when ``audit_delta`` is its
delta). The one-run bound's delta term is 2 m delta, so ``audit_delta`` must be small (1e-5 with
m = 5000: 0.1). ``private=False`` (``dpr``, no noise) and ``noise_scale=0`` claim nothing (inf);
``noise_scale`` in (0, 1) is the audit's fault test: the noise shrinks, the claim does not.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

import numpy as np
import torch
from torch_geometric.data import Data

from graphpriv.audit.fitting import (
    audited_copy,
    check_audit_args,
    check_enough_guesses,
    claim,
    dataset_name,
    describe,
)
from graphpriv.audit.statistics import AuditReport, audit_from_scores, guesses_made
from graphpriv.data.graph import pair_codes, undirected_pairs
from graphpriv.data.validation import check_data, check_seed
from graphpriv.errors import ConfigError
from graphpriv.methods.privdpr import PrivDPR
from graphpriv.privacy.accountant import check_delta
from graphpriv.progress import Progress, no_progress, prefixed_progress
from graphpriv.synthesis.privdpr import rdp_epsilon

__all__ = ["PRIVDPR_ATTACKS", "DiracCanaries", "audit_privdpr"]

#: The attacks :func:`audit_privdpr` runs (module docstring).
PRIVDPR_ATTACKS = ("gradient", "node-embedding", "node-graph")


class DiracCanaries:
    """m one-coordinate gradient canaries riding along PrivDPR's V (module docstring): a
    :class:`graphpriv.synthesis.privdpr.GradientCanary`, passed to ``PrivDPR.fit`` as
    ``AuditHook(canaries=...)``; canary c is coordinate c of the flattened ``[rows, r]`` canary block.

    Args:
        inserted: ``[m]`` bool coins. r: V's width. step_value: S_grad / T, added (inserted) or
            subtracted (not inserted) in every step.

    Attributes:
        rows: extra rows of V. released_sum: ``[m]`` float64, the sum over the steps of the
            released (noisy) summed gradient on each canary's coordinate. steps: steps observed.

    Raises:
        ValueError: ``inserted`` is not a non-empty 1-d array, or r < 1.
    """

    def __init__(self, inserted: np.ndarray, *, r: int, step_value: float) -> None:
        inserted = np.asarray(inserted, dtype=bool)
        if inserted.ndim != 1 or inserted.size == 0 or r < 1:
            raise ValueError(f"need a non-empty [m] array of coins and r >= 1 (got shape {inserted.shape}, r = {r})")
        m = inserted.size
        self.rows = -(-m // r)
        signs = np.zeros(self.rows * r, dtype=np.float32)
        signs[:m] = np.where(inserted, 1.0, -1.0)
        self._delta = torch.from_numpy(signs * np.float32(step_value)).reshape(self.rows, r)
        self._m = m
        self.released_sum = np.zeros(m, dtype=np.float64)
        self.steps = 0

    def add(self, grad: torch.Tensor) -> None:
        """Add each canary's +-S_grad / T to its coordinate of the step's ``[rows, r]`` summed gradient (in place)."""
        grad.add_(self._delta)

    def observe(self, noisy_grad: torch.Tensor) -> None:
        """Add the step's released ``[rows, r]`` noisy sum on the canary coordinates to ``released_sum``."""
        self.released_sum += noisy_grad.reshape(-1)[:self._m].double().numpy()
        self.steps += 1


def audit_privdpr(estimator: PrivDPR, data: Data, *,
                  attack: Literal["gradient", "node-embedding", "node-graph"] = "gradient",
                  canaries: int | None = None, partners: int = 10, seed: int = 0, noise_scale: float = 1.0,
                  guesses: int | None = None, confidence: float = 0.95, audit_delta: float = 1e-5,
                  name: str | None = None, progress: Progress = no_progress) -> AuditReport:
    """Canary audit of one ``PrivDPR.fit`` of ``estimator`` on ``data`` (module docstring).

    Args:
        estimator: a :class:`PrivDPR` (fitted or not: only its hyperparameters count, epochs
            included; a copy with ``random_state=seed`` is fitted). ``private=False`` (DPR) is
            audited too: it claims nothing.
        data: the graph (PyG ``Data``: ``edge_index``, ``num_nodes`` N >= ``batch_nodes``); the
            relation audited is replacing one node of the graph given to ``fit``.
        attack: ``gradient`` (white-box Dirac canaries), ``node-embedding`` or ``node-graph``
            (black-box canary nodes).
        canaries: m (default 5000 for ``gradient``, 300 canary nodes for the node attacks).
        partners: edges of an inserted canary node (node attacks), in [1, N).
        seed: the canaries, their coins, the partners and the fit's own draws (and the
            generation's, ``node-graph``).
        noise_scale: a deliberate fault on V's noise (1.0: the real fit; 0.01: noise 100x too
            small, the claim unchanged; 0: the same steps without noise, claim inf).
        guesses, confidence: as in :func:`graphpriv.audit.statistics.audit_from_scores` (default
            guesses m / 5). audit_delta: the delta of the claim and of the one-run bound.
        name: the report's ``method`` (default: the class name).
        progress: reports the audited fit, each of its phases prefixed ``audited``
            (:mod:`graphpriv.progress`).

    Returns:
        :class:`graphpriv.audit.statistics.AuditReport` (unit ``node``); ``passed``: one-run lower
        bound <= claimed epsilon.

    Raises:
        ConfigError: not a PrivDPR, an unknown attack, fewer than 2 canaries, partners outside
            [1, N), a graph with fewer nodes than a batch (``batch_nodes``), a bad noise_scale,
            confidence or seed. PrivacyError: a bad ``audit_delta``. DatasetError: ``data`` is
            not a graph.
    """
    if not isinstance(estimator, PrivDPR):
        raise ConfigError(f"audit_privdpr covers PrivDPR (privdpr, dpr) only (got {type(estimator).__name__})")
    if attack not in PRIVDPR_ATTACKS:
        raise ConfigError(f"the PrivDPR audit's attacks are {', '.join(PRIVDPR_ATTACKS)} (got {attack!r})")
    m = (5000 if attack == "gradient" else 300) if canaries is None else canaries
    hook = check_audit_args(m, noise_scale, confidence)
    check_enough_guesses(lambda c: guesses_made(c, guesses), m, confidence)
    check_delta(audit_delta)
    seed = check_seed(seed)
    params = estimator.get_params()
    epochs, batch_nodes = int(params["epochs"]), int(params["batch_nodes"])
    checked = check_data(data, method="audit_privdpr")
    n = int(checked.num_nodes)
    if n < batch_nodes:
        raise ConfigError(f"the graph has {n} nodes, fewer than a batch of {batch_nodes} (batch_nodes): no step "
                          "to audit")
    if attack != "gradient" and (isinstance(partners, bool) or not isinstance(partners, (int, np.integer))
                                 or not 1 <= partners < n):
        raise ConfigError(f"'partners' must be an integer in [1, {n}) (got {partners!r})")

    rng = np.random.default_rng([seed, 2039])
    inserted = rng.random(m) < 0.5
    if attack == "gradient":
        iterations = epochs * (n // batch_nodes)
        dirac = DiracCanaries(inserted, r=int(params["r"]), step_value=float(params["s_grad"]) / iterations)
        fitted = audited_copy(estimator, seed).fit(checked, audit_hook=dataclasses.replace(hook, canaries=dirac),
                                                   progress=prefixed_progress(progress, "audited"))
        if not dirac.steps == fitted.info_["iterations"] == iterations:  # the hook must see every noisy step
            raise RuntimeError(f"the canaries saw {dirac.steps} steps of {fitted.info_['iterations']} (expected "
                               f"T = {iterations})")
        scores = dirac.released_sum
        attack_text = ("white-box Dirac gradient canaries (+-S_grad/T per step on one coordinate of V's summed "
                       "gradient); score: sum of the released noisy gradients on the coordinate")
        notes = [(f"one PrivDPR.fit, {epochs} epoch(s), T = {iterations} steps on the graph of {n} nodes; each "
                  "canary in w.p. 1/2"),
                 f"{m} canary coordinates in {dirac.rows} extra rows of V, through V's noise addition"]
    else:
        partner_ids = np.stack([rng.choice(n, int(partners), replace=False) for _ in range(m)])
        canary_ids = n + np.arange(m)
        edges = np.stack([np.repeat(canary_ids[inserted], partners), partner_ids[inserted].ravel()])
        graph = np.concatenate([undirected_pairs(checked.edge_index), edges], axis=1)
        audited = Data(edge_index=torch.from_numpy(np.concatenate([graph, graph[::-1]], axis=1).copy()),
                       num_nodes=n + m)
        # no private edge count to read: the generation uses the model's count
        model_count = {"edge_count": "model"} if attack == "node-graph" and params["edge_count"] == "input" else {}
        fitted = audited_copy(estimator, seed, **model_count).fit(audited, audit_hook=hook,
                                                                   progress=prefixed_progress(progress, "audited"))
        if attack == "node-embedding":
            scores = fitted.embeddings_[torch.from_numpy(canary_ids)].double().norm(dim=1).numpy()
            attack_text = "black-box canary nodes; score: norm of the canary's row of the released V"
        else:
            fitted.generate()
            scores = _synthetic_partner_edges(fitted.released_.pairs, canary_ids, partner_ids, n + m)
            attack_text = "black-box canary nodes; score: synthetic edges to the partners in the generated graph"
        info = fitted.info_
        notes = [(f"one PrivDPR.fit, {epochs} epoch(s), T = {info['iterations']} steps on the graph of {n} nodes "
                  f"plus {m} canary nodes (N + m = {n + m} public); each canary in w.p. 1/2"),
                 (f"{partners} partner edges per inserted canary, none otherwise; true V-gradient norm "
                  f"{info['gradient_norm_mean']:.3g} per step against the bound {info['gradient_bound']:.3g}")]

    claimed, accounting = claim(fitted, audit_delta, noise_scale)
    report = fitted.privacy_report_
    if report is not None and report.accounting == "paper" and noise_scale != 0:
        notes.append(f"paper accounting; the RDP accountant gives eps = "
                     f"{rdp_epsilon(fitted.info_['noise_multiplier'], fitted.info_['iterations'], audit_delta):.4g} "
                     f"at delta = {audit_delta:g} for the same noise")
    return audit_from_scores(scores, inserted, method=describe(estimator, name), dataset=dataset_name(data),
                             unit="node", claimed_epsilon=claimed, accounting=accounting, attack=attack_text,
                             guesses=guesses, confidence=confidence, audit_delta=audit_delta, notes=notes)


def _synthetic_partner_edges(pairs: np.ndarray, canary_ids: np.ndarray, partner_ids: np.ndarray,
                             num_nodes: int) -> np.ndarray:
    """Per canary, how many of its partners it is joined to in the synthetic graph ``pairs`` ``[2, E']``."""
    released = np.unique(pair_codes(pairs, num_nodes))
    k = partner_ids.shape[1]
    candidates = np.stack([np.repeat(canary_ids, k), partner_ids.ravel()])
    present = np.isin(pair_codes(candidates, num_nodes), released)
    return present.reshape(-1, k).sum(1).astype(np.float64)
