"""Canary audits of the DP-SGD link predictors ``dplp-ps`` and ``dplp-ns`` (edge level; issue 10).

One training run carries two canary sets, each audited with the one-run bound of Steinke, Nasr
and Jagielski (NeurIPS 2023, Thm. 5.2) at half the error level (a union bound keeps the 95%):

- **gradient canaries** (white box, Steinke et al. Sec. 7, "Dirac canaries"): m slots of K
  examples each, K the group size one edge can change (``group_size(M)``, M the dependency bound
  of :func:`graphpriv.methods.dplp_subgraph.dependency_bound`). Every example of slot i has the
  clipped gradient +C e_i (slot inserted, coin 1/2) or -C e_i (not inserted) on a canary
  coordinate e_i that no real example touches: the two neighbouring datasets differ by
  substituting K examples, each moving the clipped sum by 2C, the worst case the accountant's
  hypergeometric group bound covers. The slots are sampled with the real examples (one population
  of N + K m), the canary coordinates receive the same Gaussian noise as the model's parameters,
  and the score of slot i is the log-likelihood ratio of "+" against "-" of its coordinate's
  released noisy values y_t over the steps (every iterate is covered by the guarantee):
  sum_t log E_n[exp(-(y_t - n C)^2 / 2 s^2)] - log E_n[exp(-(y_t + n C)^2 / 2 s^2)], n the number
  of the slot's K examples in a batch (hypergeometric), s the noise std: the Neyman-Pearson
  statistic for the per-step mechanism (the plain sum of y_t wastes the steps where the slot is
  not sampled). The auditor guesses "inserted" for the m/10 highest scores and "not inserted" for
  the m/10 lowest, abstaining on the rest. This checks the noise scale, the sampler, the step count
  and the accountant; it does not check the bound M itself (tested against brute force in
  tests/privacy and enforced at run time by ``check_dependency_bound``).
- **canary edges** (black box, the issue's "model score on the canary pair"): pairs at distance 2
  (friends of friends, non-edges of the whole graph), each added to the training graph with
  probability 1/2 before the degree projection; the score is the trained model's link score on the
  pair's subgraph extracted from the training graph without canaries (what the auditor knows).
  The models see structure only (DRNL labels), so a canary edge is remembered only through the
  shape of its own subgraph: this attack is weak even without noise (measured in docs/privacy.md).

The claim audited is the rigorous accountant's epsilon of the run's noise at the method's delta
(1e-5); the model is the last iterate (no validation-based epoch selection).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from scipy.special import logsumexp
from scipy.stats import hypergeom
from torch import Tensor
from torch_geometric.data import Data

from graphpriv.data.graph import decode_pairs, pair_codes, to_csr
from graphpriv.data.splits import link_split
from graphpriv.errors import ConfigError
from graphpriv.linkpred.dependency import check_dependency_bound
from graphpriv.linkpred.examples import training_links
from graphpriv.linkpred.projection import project_degree
from graphpriv.linkpred.subgraphs import Extractor, collate_dense, extract_subgraphs
from graphpriv.methods.dplp_subgraph import (
    DPLPConfig,
    calibrate_training_noise,
    dependency_bound,
    label_cap,
    make_optimizer,
    training_steps,
)
from graphpriv.nn.subgraph_gnn import SubgraphGNN, bce_loss, predict
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.audit import AuditReport, audit_from_scores
from graphpriv.privacy.engine import DPSGD
from graphpriv.privacy.mechanisms import audit_test_noise_factor
from graphpriv.privacy.sampling import WithoutReplacementSampler
from graphpriv.privacy.sensitivity import group_size
from graphpriv.privacy.units import Accounting, PrivacyUnit

__all__ = ["DPLP_AUDITABLE", "audit_dplp", "canary_llr", "distance_two_non_edges"]

#: Methods :func:`audit_dplp` covers (``seal``-style: ``dplp-ns`` with ``private=False``).
DPLP_AUDITABLE = ("dplp-ps", "dplp-ns")


def distance_two_non_edges(pairs: np.ndarray, num_nodes: int, count: int, *, forbidden: np.ndarray,
                           rng: np.random.Generator, max_rounds: int = 50) -> np.ndarray:
    """``count`` distinct pairs (u, v), u < v, joined by a path of length 2 in ``pairs`` and not in
    ``forbidden``: u, a neighbour w of u and a neighbour v of w, drawn uniformly at each stage.

    Args:
        pairs: ``[2, E]`` undirected graph. forbidden: ``[2, F]`` pairs to avoid (the whole graph).

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


class _CanaryDPSGD(DPSGD):
    """:class:`DPSGD` over N real examples followed by m slots of ``group_size`` gradient canaries.

    Sampled canary examples add ``sign_i * C`` to canary coordinate i; every step adds the same
    N(0, noise_std^2) noise to the m canary coordinates as to each model parameter; ``released``
    keeps each step's noisy canary coordinates (what the mechanism publishes about them), ``[T, m]``.
    """

    def __init__(self, *args, num_real: int, signs: Tensor, canary_generator: torch.Generator, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.num_real, self.signs, self.canary_generator = num_real, signs.double(), canary_generator
        self.released: list[Tensor] = []
        self._canary_sum = torch.zeros(signs.numel(), dtype=torch.float64)

    def _clipped_sum(self, indices: Tensor) -> tuple[dict[str, Tensor], float]:
        slots = (indices[indices >= self.num_real] - self.num_real) // self.group_size
        self._canary_sum = torch.bincount(slots, minlength=self.signs.numel()).double() * self.signs * self.max_grad_norm
        return super()._clipped_sum(indices[indices < self.num_real])

    def step(self) -> float:
        loss = super().step()
        std = self.noise_std * audit_test_noise_factor()
        noise = torch.randn(self.signs.numel(), generator=self.canary_generator, dtype=torch.float64) * std
        self.released.append(self._canary_sum + noise)
        return loss


def audit_dplp(method: str, data: Data, *, epsilon: float = 1.0, private: bool = True, seed: int = 0,
               epochs: int = 5, gradient_canaries: int = 200, edge_canaries: int | None = None,
               confidence: float = 0.95, **overrides) -> list[AuditReport]:
    """Audit one DP-SGD training of ``dplp-ps`` / ``dplp-ns`` with gradient and edge canaries.

    Args:
        method: ``dplp-ps`` (path subgraphs) or ``dplp-ns`` (neighbourhood subgraphs).
        data: the graph (edge-level relation: add or remove one edge of the training graph).
        epsilon: target (delta = the config's, 1e-5). private: False trains the same clipped steps
            without noise (claimed epsilon inf). epochs: passes over the N + K m examples.
        gradient_canaries: m slots (K examples each). edge_canaries: canary pairs (default a tenth
            of the training edges). overrides: other :class:`DPLPConfig` fields (fixed k and theta).

    Returns:
        ``[gradient-canary report, edge-canary report]``, each at confidence 1 - (1 - confidence) / 2.

    Raises:
        ConfigError: another method, ``auto`` k / theta, or too few canaries.
        BudgetExceededError: epsilon too small for the number of steps.
    """
    if method not in DPLP_AUDITABLE:
        raise ConfigError(f"audit_dplp covers {', '.join(DPLP_AUDITABLE)} (got {method!r})")
    extractor = Extractor.PATH if method == "dplp-ps" else Extractor.NEIGHBOURHOOD
    config = DPLPConfig(epsilon=epsilon, extractor=extractor, epochs=epochs, accounting=Accounting.RIGOROUS,
                        **overrides)
    if config.k == "auto" or config.theta == "auto":
        raise ConfigError("the audit needs a fixed k and theta (the private selection is not audited)")
    if gradient_canaries < 2:
        raise ConfigError(f"need at least 2 gradient canaries (got {gradient_canaries})")
    split = link_split(data, val_ratio=config.val_ratio, test_ratio=config.test_ratio, seed=seed)
    n = split.num_nodes
    rng = np.random.default_rng([seed, 3023])
    whole = np.concatenate([split.train_edge_index, split.val_pos, split.test_pos, split.val_neg, split.test_neg], 1)
    m_edges = edge_canaries or max(2, split.train_edge_index.shape[1] // 10)
    canary_pairs = distance_two_non_edges(split.train_edge_index, n, m_edges, forbidden=whole, rng=rng)
    inserted = rng.random(m_edges) < 0.5
    graph = np.concatenate([split.train_edge_index, canary_pairs[:, inserted]], axis=1)
    pairs = project_degree(graph, n, theta=config.theta, rng=rng) if config.project else graph
    theta_cap = config.theta if config.project else n
    links, labels = training_links(pairs, n, lam=config.lam, theta=theta_cap, rng=rng)
    train_set = extract_subgraphs(to_csr(pairs, n), links, labels, extractor=extractor, k=config.k, h=config.h)
    bound = dependency_bound(config)
    k_group = group_size(bound)
    check_dependency_bound(train_set, n, bound)
    signs = torch.from_numpy(np.where(rng.random(gradient_canaries) < 0.5, 1.0, -1.0))
    num_real = len(train_set)
    gens = [torch.Generator().manual_seed(seed * 1000 + i) for i in range(4)]
    sampler = WithoutReplacementSampler(num_real + k_group * gradient_canaries, config.batch_size, generator=gens[1])
    _, steps = training_steps(config, sampler.num_examples)
    z = calibrate_training_noise(config, sampler, k_group, steps)
    ledger = Ledger(PrivacyUnit.EDGE, delta=config.delta, accounting=Accounting.RIGOROUS)
    cap = label_cap(config)
    torch.manual_seed(seed)
    model = SubgraphGNN(cap + 1, backbone=config.backbone, hidden=config.hidden, dropout=config.dropout,
                        num_layers=config.k if extractor is Extractor.PATH else config.h, sort_k=config.sort_k)
    engine = _CanaryDPSGD(model, make_optimizer(model, config), sampler, loss_fn=bce_loss,
                          collate=lambda idx: collate_dense(train_set, idx, max_label=cap),
                          sizes=torch.from_numpy(train_set.num_nodes_per_subgraph), buckets=config.buckets,
                          noise_multiplier=z, max_grad_norm=config.max_grad_norm, group_size=k_group, ledger=ledger,
                          generator=gens[2], accounting=Accounting.RIGOROUS, num_real=num_real, signs=signs,
                          canary_generator=gens[3])
    if not private:
        engine.noise_std = 0.0
    for _ in range(steps):
        model.train()
        engine.step()
    claimed = ledger.epsilon(config.delta) if private else math.inf
    accounting = (f"rigorous (RDP, hypergeometric group bound, K = {k_group}; delta = {config.delta:g})"
                  if private else "non-private (the same clipped steps, no noise)")
    split_confidence = 1 - (1 - confidence) / 2
    dataset = str(getattr(data, "name", "graph"))
    gradient = audit_from_scores(
        canary_llr(torch.stack(engine.released).numpy(), std=engine.noise_std * audit_test_noise_factor(),
                   max_grad_norm=config.max_grad_norm, population=sampler.num_examples, group=k_group,
                   batch=config.batch_size), signs.numpy() > 0, method=method, dataset=dataset, unit="edge",
        claimed_epsilon=claimed, accounting=accounting,
        attack=f"gradient canaries (white box): {gradient_canaries} slots of K = {k_group} examples",
        confidence=split_confidence, audit_delta=config.delta,
        notes=[(f"{steps} DP-SGD steps over {num_real} real + {k_group * gradient_canaries} canary examples, "
               f"noise multiplier {z:.4g}")])
    probe = extract_subgraphs(to_csr(split.train_edge_index, n), canary_pairs, np.zeros(m_edges),
                              extractor=extractor, k=config.k, h=config.h)
    chunks = np.array_split(np.arange(m_edges), max(1, math.ceil(m_edges / config.eval_batch_size)))
    scores = predict(model, (collate_dense(probe, c, max_label=cap)[0] for c in chunks)).numpy()
    edges = audit_from_scores(
        scores, inserted, method=method, dataset=dataset, unit="edge", claimed_epsilon=claimed,
        accounting=accounting, attack=f"canary edges (black box): model score on {m_edges} distance-2 pairs",
        confidence=split_confidence, audit_delta=config.delta,
        notes=["score: the last iterate's link score on the pair's subgraph of the training graph without canaries"])
    return [gradient, edges]

