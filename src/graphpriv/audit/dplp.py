"""Canary audit of DPLP's DP-SGD link predictor (:class:`~graphpriv.methods.dplp_subgraph.DPLPLinkPredictor`,
method ids ``dplp-ps`` and ``dplp-ns``; edge level).

Sources: Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run" (NeurIPS 2023),
Thm. 5.2 (the one-run bound with delta) and Sec. 7 ("Dirac canaries"); Ran, Ye, Hu, Huang, Xu,
Fu, "Differentially private graph neural networks for link prediction", Algorithms 1-2 (the
training audited), Lemma 2 and Theorem 1 (the dependency bound M).

The audit runs the estimator's own ``fit`` once, on the graph it is given with canary edges
inserted, through ``fit(..., audit_hook=AuditHook(noise_scale, canaries=DiracCanaries(...)))``
(:class:`graphpriv.privacy.hooks.AuditHook`): the projection, the training examples, the
calibration, the sampler and the DP-SGD engine are the code a user runs. There is no link split
and no validation pairs, so the model is the last iterate. That one fit carries two canary sets,
each audited with the one-run bound at half the error level (a union bound keeps the confidence):

- **gradient canaries** (white box, "Dirac canaries"), :class:`DiracCanaries`: m slots of K
  examples each, K the group size one edge can change (``info_["group_size"]``: ``group_size(M)``
  under rigorous accounting). Every example of slot i has the clipped gradient +C e_i (slot
  inserted, coin 1/2) or -C e_i (not inserted) on a canary coordinate e_i that no real example
  touches: the two neighbouring datasets differ by substituting K examples, each moving the
  clipped sum by 2C, the worst case the accountant's hypergeometric group bound covers. The slots
  join the real examples in one population of N + K m (the estimator's sampler, calibration and
  step count cover it), the canary coordinates receive Gaussian noise of each step's std (the
  engine's, ``noise_scale`` included), and the score of slot i is the log-likelihood ratio of "+"
  against "-" of its coordinate's released noisy values y_t over the steps (:func:`canary_llr`;
  every iterate is covered by the guarantee): sum_t log E_n[exp(-(y_t - n C)^2 / 2 s^2)] -
  log E_n[exp(-(y_t + n C)^2 / 2 s^2)], n the number of the slot's K examples in a batch
  (hypergeometric), s the noise std: the Neyman-Pearson statistic for the per-step mechanism (the
  plain sum of y_t wastes the steps where the slot is not sampled). The auditor guesses
  "inserted" for the m/10 highest scores and "not inserted" for the m/10 lowest, abstaining on the
  rest. This checks the noise scale, the sampler, the step count and the accountant; it does not
  check the bound M itself (tested against brute force, and enforced at run time by
  ``check_dependency_bound`` in every fit).
- **canary edges** (black box, the model's score on the canary pair): pairs at distance 2 (friends
  of friends, non-edges of the graph, :func:`distance_two_non_edges`), each added to the graph
  given to ``fit`` with probability 1/2 (so before the degree projection); the score is the fitted
  model's link score on the pair's subgraph extracted from the graph without canaries
  (``predict_proba(pairs, data=...)``: what the auditor knows, and no canary's score reads the
  other canaries' coins). The models see structure only (DRNL labels), so a canary edge is
  remembered only through the shape of its own subgraph: this attack is weak even without noise.

The claim audited is the fitted copy's own: ``privacy_report_.epsilon`` at its delta, under the
estimator's accounting (:func:`graphpriv.audit.fitting.claim`); the one-run bound is taken at the
same delta. ``noise_scale`` is the audit's fault test: 0.01 (noise 100x too small, the ledger
unchanged) must fail, 0 (the same clipped steps without noise) claims nothing (inf).
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.special import logsumexp
from scipy.stats import hypergeom
from torch import Tensor
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
from graphpriv.data.graph import decode_pairs, pair_codes, to_csr, undirected_pairs
from graphpriv.data.validation import check_data
from graphpriv.errors import ConfigError
from graphpriv.methods.dplp_subgraph import DPLPLinkPredictor
from graphpriv.privacy.hooks import AuditHook
from graphpriv.privacy.mechanisms import gaussian_noise
from graphpriv.progress import Progress, no_progress, prefixed_progress

__all__ = ["DiracCanaries", "audit_dplp", "canary_llr", "distance_two_non_edges"]


def distance_two_non_edges(pairs: np.ndarray, num_nodes: int, count: int, *, forbidden: np.ndarray,
                           rng: np.random.Generator, max_rounds: int = 50) -> np.ndarray:
    """``count`` distinct pairs (u, v), u < v, joined by a path of length 2 in ``pairs`` and not in
    ``forbidden``: u, a neighbour w of u and a neighbour v of w, drawn uniformly at each stage.

    Args:
        pairs: ``[2, E]`` undirected graph. num_nodes: N. count: pairs wanted.
        forbidden: ``[2, F]`` pairs to avoid (the whole graph). rng: the draws.
        max_rounds: rounds of draws before giving up.

    Returns:
        ``[2, count]`` int64.

    Raises:
        ConfigError: fewer than ``count`` such pairs found in ``max_rounds`` rounds of draws.
    """
    adj = to_csr(pairs, num_nodes)
    degree = np.diff(adj.indptr)
    nodes = np.flatnonzero(degree > 0)
    banned = pair_codes(forbidden, num_nodes) if forbidden.size else np.empty(0, np.int64)
    chosen = np.empty(0, np.int64)
    for _ in range(max_rounds):
        draw = 4 * (count - chosen.size) + 16
        u = rng.choice(nodes, draw)
        w = adj.indices[adj.indptr[u] + (rng.random(draw) * degree[u]).astype(np.int64)]
        v = adj.indices[adj.indptr[w] + (rng.random(draw) * degree[w]).astype(np.int64)]
        keep = u != v
        codes = pair_codes(np.stack([u[keep], v[keep]]), num_nodes)
        codes = codes[~np.isin(codes, banned) & ~np.isin(codes, chosen)]
        _, first = np.unique(codes, return_index=True)
        chosen = np.concatenate([chosen, codes[np.sort(first)]])[:count]
        if chosen.size == count:
            return decode_pairs(chosen, num_nodes)
    raise ConfigError(f"found only {chosen.size} distance-2 non-edges of the {count} canaries asked for")


def canary_llr(released: np.ndarray, *, std: float, max_grad_norm: float, population: int, group: int,
               batch: int) -> np.ndarray:
    """Per-slot log-likelihood ratio of "+" (inserted) against "-" of released canary coordinates.

    Args:
        released: ``[T, m]`` noisy canary coordinates, one row per step. std: the noise std s
            (0: no noise, the plain sum is returned). max_grad_norm: C. population, group, batch:
            N', K and b of the fixed-size sampler (n ~ Hypergeometric(N', K, b) slot examples per batch).

    Returns:
        ``[m]``: sum_t [log E_n exp(-(y - nC)^2 / 2s^2) - log E_n exp(-(y + nC)^2 / 2s^2)].
    """
    if std == 0:
        return released.sum(axis=0)
    counts = np.arange(min(group, batch) + 1)
    log_p = hypergeom.logpmf(counts, population, group, batch)
    keep = log_p > log_p.max() - 60  # counts below e^-60 of the mode change nothing in float64
    log_p, shift = log_p[keep][:, None, None], counts[keep][:, None, None] * max_grad_norm
    total = np.zeros(released.shape[1])
    for start in range(0, released.shape[0], 256):  # [counts, 256, m] at a time
        y = released[None, start:start + 256]
        plus = logsumexp(log_p - (y - shift) ** 2 / (2 * std**2), axis=0)
        minus = logsumexp(log_p - (y + shift) ** 2 / (2 * std**2), axis=0)
        total += (plus - minus).sum(axis=0)
    return total


class DiracCanaries:
    """m slots of K white-box gradient canaries riding along a DP-SGD population (module docstring).

    Implements :class:`graphpriv.privacy.hooks.GradientCanaries`: :meth:`attach` learns K and C and
    asks for K m extra examples (slot i: extras ``i K .. (i + 1) K - 1``); each :meth:`step` adds
    ``sign_i * C`` per sampled example of slot i to canary coordinate i, plus Gaussian noise of the
    step's std from the canaries' own generator, and keeps the result (what the mechanism
    publishes about the canaries).

    Args:
        inserted: ``[m]`` bool, the slots' coins (True: gradient +C e_i, False: -C e_i); m >= 1.
        generator: the canary coordinates' noise (separate from the fit's generators).

    Attributes:
        group_size, max_grad_norm: K and C (``None`` before :meth:`attach`).
        num_examples: K m, the extra examples (0 before :meth:`attach`).
        noise_std: the std of the last step's noise (``None`` before the first step).
        released: one ``[m]`` float64 tensor per step.

    Raises:
        ValueError: ``inserted`` is not a non-empty 1-d array.
    """

    def __init__(self, inserted: np.ndarray, *, generator: torch.Generator) -> None:
        inserted = np.asarray(inserted, dtype=bool)
        if inserted.ndim != 1 or inserted.size == 0:
            raise ValueError(f"inserted must be a non-empty [m] array of coins (got shape {inserted.shape})")
        self.signs = torch.from_numpy(np.where(inserted, 1.0, -1.0))
        self.generator = generator
        self.group_size: int | None = None
        self.max_grad_norm: float | None = None
        self.num_examples = 0
        self.noise_std: float | None = None
        self.released: list[Tensor] = []

    @property
    def slots(self) -> int:
        """m, the number of slots."""
        return self.signs.numel()

    def attach(self, *, group_size: int, max_grad_norm: float) -> int:
        """Learn K (``group_size``) and C (``max_grad_norm``); returns K m, the extra examples.

        Raises:
            ValueError: K < 1 or C not > 0.
        """
        if group_size < 1 or not max_grad_norm > 0:
            raise ValueError(f"need group_size >= 1 and max_grad_norm > 0 (got {group_size}, {max_grad_norm})")
        self.group_size, self.max_grad_norm = int(group_size), float(max_grad_norm)
        self.num_examples, self.released, self.noise_std = self.group_size * self.slots, [], None
        return self.num_examples

    def step(self, indices: Tensor, noise_std: float) -> None:
        """One DP-SGD step: ``indices`` ``[b]`` int64, the sampled extras (0-based among them);
        ``noise_std``: the std of the step's Gaussian noise. Appends the ``[m]`` noisy canary
        coordinates to ``released``.

        Raises:
            RuntimeError: before :meth:`attach`.
        """
        if self.group_size is None:
            raise RuntimeError("DiracCanaries.step before attach")
        slots = torch.as_tensor(indices, dtype=torch.int64) // self.group_size
        total = torch.bincount(slots, minlength=self.slots).double() * self.signs * self.max_grad_norm
        noise = gaussian_noise((self.slots,), float(noise_std), generator=self.generator, dtype=torch.float64)
        self.noise_std = float(noise_std)
        self.released.append(total + noise)

    def released_array(self) -> np.ndarray:
        """``[T, m]`` float64: every step's noisy canary coordinates (``[0, m]`` before a step)."""
        if not self.released:
            return np.zeros((0, self.slots))
        return torch.stack(self.released).numpy()


def audit_dplp(estimator: DPLPLinkPredictor, data: Data, *, canaries: int = 200, edge_canaries: int | None = None,
               seed: int = 0, noise_scale: float = 1.0, confidence: float = 0.95,
               name: str | None = None, progress: Progress = no_progress) -> list[AuditReport]:
    """Audit one DP-SGD fit of ``estimator`` on ``data`` with gradient and edge canaries (module docstring).

    Args:
        estimator: a private :class:`DPLPLinkPredictor` with fixed ``k`` and ``theta`` (fitted or
            not: only its hyperparameters count; a copy with ``random_state=seed`` is fitted).
        data: the graph (PyG ``Data``: ``edge_index``, ``num_nodes``); the relation audited is
            adding or removing one edge of the graph given to ``fit``.
        canaries: m, gradient-canary slots (K examples each). edge_canaries: canary pairs
            (distance-2 non-edges; default a tenth of the graph's edges, at least 2).
        seed: the canaries, their coins, the canary noise (torch generator ``1000 seed + 3``)
            and the fit's own draws. noise_scale: a deliberate fault on the DP-SGD noise (the
            audit's own test; 1.0 audits the real fit, 0 the same steps without noise).
        confidence: of each report's bounds is 1 - (1 - confidence) / 2 (two attacks, one run).
        name: the reports' ``method`` (default: the class name).
        progress: reports the audited fit, each of its phases prefixed ``audited``
            (:mod:`graphpriv.progress`).

    Returns:
        ``[gradient-canary report, edge-canary report]`` (unit ``edge``).

    Raises:
        ConfigError: another estimator class (SEAL included), ``private=False``, ``auto`` k or
            theta, fewer than 2 canaries or edge canaries, a bad noise_scale, confidence or seed,
            too few distance-2 non-edges, or what the fit refuses (a dependency group larger
            than the training set, a batch larger than it).
        DatasetError: ``data`` is not a graph. BudgetExceededError: epsilon too small for the
            number of steps. SensitivityError: an empirical dependency above the bound M.
    """
    if type(estimator) is not DPLPLinkPredictor:
        raise ConfigError(f"audit_dplp covers DPLPLinkPredictor (dplp-ps, dplp-ns) only (got "
                          f"{type(estimator).__name__})")
    params = estimator.get_params()
    if not params["private"]:
        raise ConfigError("the DPLP audit needs a private estimator (private=True): its gradient canaries ride "
                          "along DP-SGD; for the same steps without noise pass noise_scale=0")
    if params["k"] == "auto" or params["theta"] == "auto":
        raise ConfigError("the DPLP audit needs fixed k and theta (the private auto selection is not audited)")
    hook = check_audit_args(canaries, noise_scale, confidence)
    copy = audited_copy(estimator, seed)
    checked = check_data(data, method="audit_dplp")
    n = int(checked.num_nodes)
    pairs = undirected_pairs(checked.edge_index)
    m_edges = max(2, pairs.shape[1] // 10) if edge_canaries is None else edge_canaries
    if isinstance(m_edges, bool) or not isinstance(m_edges, (int, np.integer)) or m_edges < 2:
        raise ConfigError(f"edge_canaries must be an integer of at least 2 (got {edge_canaries!r})")
    split_confidence = 1 - (1 - confidence) / 2
    check_enough_guesses(guesses_made, canaries, split_confidence, what="gradient")
    if edge_canaries is not None:  # the default (a tenth of the edges) is what the graph allows
        check_enough_guesses(guesses_made, int(m_edges), split_confidence, what="edge")
    rng = np.random.default_rng([seed, 3023])
    canary_pairs = distance_two_non_edges(pairs, n, int(m_edges), forbidden=pairs, rng=rng)
    inserted = rng.random(canary_pairs.shape[1]) < 0.5
    slot_inserted = rng.random(canaries) < 0.5
    slots = DiracCanaries(slot_inserted, generator=torch.Generator().manual_seed(seed * 1000 + 3))
    graph = np.concatenate([pairs, canary_pairs[:, inserted]], axis=1)
    both = torch.from_numpy(np.concatenate([graph, graph[::-1]], axis=1).copy())
    fitted = copy.fit(Data(edge_index=both, num_nodes=n), progress=prefixed_progress(progress, "audited"),
                      audit_hook=AuditHook(noise_scale=hook.noise_scale, canaries=slots))

    claimed, accounting = claim(fitted, None, noise_scale)
    audit_delta = fitted.privacy_report_.delta
    info, batch = fitted.info_, int(params["batch_size"])
    k_group, num_real = int(info["group_size"]), int(info["num_train_examples"])
    std = slots.noise_std if slots.noise_std is not None else float(info["noise_std"]) * noise_scale
    method, dataset = describe(estimator, name), dataset_name(data)
    llr = canary_llr(slots.released_array(), std=std, max_grad_norm=slots.max_grad_norm,
                     population=num_real + slots.num_examples, group=k_group, batch=batch)
    gradient = audit_from_scores(
        llr, slot_inserted, method=method, dataset=dataset, unit="edge", claimed_epsilon=claimed,
        accounting=accounting, attack=f"gradient canaries (white box): {canaries} slots of K = {k_group} examples",
        confidence=split_confidence, audit_delta=audit_delta,
        notes=[(f"one DPLPLinkPredictor.fit: {info['steps']} DP-SGD steps over {num_real} real + "
                f"{slots.num_examples} canary examples, noise multiplier {info['noise_multiplier']:.4g}, "
                f"noise std used {std:.4g}"),
               "score: log-likelihood ratio of each slot's released noisy coordinates over every step"])
    scores = fitted.predict_proba(canary_pairs, data=checked).numpy()
    edges = audit_from_scores(
        scores, inserted, method=method, dataset=dataset, unit="edge", claimed_epsilon=claimed,
        accounting=accounting,
        attack=f"canary edges (black box): model score on {canary_pairs.shape[1]} distance-2 pairs",
        confidence=split_confidence, audit_delta=audit_delta,
        notes=["score: the last iterate's link score on the pair's subgraph of the graph without canaries"])
    return [gradient, edges]
