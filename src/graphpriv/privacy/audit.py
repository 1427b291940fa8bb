"""Empirical privacy auditing with canaries: a lower bound on epsilon from a membership attack.

Sources: Jagielski, Ullman, Oprea, "Auditing differentially private machine learning" (NeurIPS
2020) for turning an attack's true/false positive rates into a lower bound with Clopper–Pearson
intervals; Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run" (NeurIPS 2023),
Theorem 3.1, for the one-run bound; issue 10.

Edge-level audit of a graph release (:func:`audit_edge_release`): m canary pairs (non-edges of the
graph) each inserted as an edge independently with probability 1/2; the mechanism runs once on
the graph with the inserted canaries; the attack scores each canary by its presence in the
release and guesses "inserted" exactly when it is present. Two lower bounds at 95% confidence:

- ``one_run``: for an eps-DP mechanism (add/remove one edge), the number of correct guesses out of
  r is stochastically dominated by Binomial(r, e^eps / (1 + e^eps)) (Steinke et al., Thm. 3.1),
  for any mechanism, dependent canaries included, and the guesser may abstain. Two guessers, each
  at 2.5%: "inserted iff present" on all m canaries, and "inserted" on the present ones only
  (abstaining on the rest); the bound is the larger of the two largest eps whose binomial tail
  at the observed count is still <= 2.5%. It is the one the audit's verdict uses.
- ``clopper_pearson``: TPR and FPR of the attack with Clopper–Pearson bounds (each one-sided at
  1.25%, four rates, 95% jointly), eps >= max(ln(TPR / FPR), ln(TNR / FNR)); it treats the canaries
  as independent trials, which holds for EdgeRand (independent bits), not exactly for LapGraph's
  top-T selection.

The audited mechanisms here are pure eps-DP (EdgeRand, LapGraph), so both bounds use delta = 0.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from dp_accounting import dp_event
from pydantic import BaseModel
from scipy.optimize import brentq
from scipy.stats import beta, binom
from torch_geometric.data import Data

from graphpriv.data.graph import pair_codes, undirected_pairs
from graphpriv.data.splits import sample_non_edges
from graphpriv.errors import ConfigError
from graphpriv.privacy.accountant import Ledger, check_epsilon
from graphpriv.privacy.events import PureDpEvent
from graphpriv.privacy.units import PrivacyUnit

__all__ = [
    "EDGE_AUDITABLE",
    "AuditReport",
    "audit_dp_mlp",
    "audit_edge_release",
    "audit_from_scores",
    "clopper_pearson",
    "epsilon_lower_bound_cp",
    "epsilon_lower_bound_one_run",
    "one_run_p_value",
]

#: Edge-level releases the audit can run, and their kind.
EDGE_AUDITABLE = ("edgerand", "lapgraph", "random-perturb")


class AuditReport(BaseModel):
    """What an audit measured.

    Attributes:
        claimed_epsilon: the method's accounted epsilon (rigorous; inf for a non-private method).
        epsilon_lower_bound: the one-run 95% lower bound (the verdict's). epsilon_lower_bound_cp:
            the Clopper–Pearson 95% lower bound. epsilon_estimate: max(ln(TPR/FPR), ln(TNR/FNR)) at
            the observed rates. passed: lower bound <= claimed epsilon.
    """

    method: str
    dataset: str
    unit: str
    claimed_epsilon: float
    accounting: str
    attack: str
    canaries: int
    inserted: int
    correct: int
    tpr: float
    fpr: float
    epsilon_estimate: float
    epsilon_lower_bound: float
    epsilon_lower_bound_cp: float
    confidence: float
    passed: bool
    notes: list[str] = []


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """Exact two-sided (1 - alpha) binomial interval for k successes in n trials (each side alpha/2).

    Raises:
        ValueError: k outside [0, n] or n < 1.
    """
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1 (got {k}, {n})")
    lo = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def epsilon_lower_bound_cp(tp: int, fn: int, fp: int, tn: int, *, confidence: float = 0.95) -> float:
    """max(ln(TPR_lo / FPR_hi), ln(TNR_lo / FNR_hi), 0) with Clopper–Pearson bounds whose four
    one-sided levels share 1 - confidence (pure DP: delta = 0)."""
    alpha = 2 * (1 - confidence) / 4  # two-sided alpha per rate, so each one-sided side is (1-conf)/4
    tpr_lo, _ = clopper_pearson(tp, tp + fn, alpha)
    _, fpr_hi = clopper_pearson(fp, fp + tn, alpha)
    tnr_lo, _ = clopper_pearson(tn, fp + tn, alpha)
    _, fnr_hi = clopper_pearson(fn, tp + fn, alpha)
    bounds = [0.0]
    if tpr_lo > 0 and fpr_hi > 0:
        bounds.append(math.log(tpr_lo / fpr_hi))
    if tnr_lo > 0 and fnr_hi > 0:
        bounds.append(math.log(tnr_lo / fnr_hi))
    return max(bounds)


def one_run_p_value(canaries: int, guesses: int, correct: int, epsilon: float, delta: float = 0.0) -> float:
    """P[at least ``correct`` right out of ``guesses``] under (epsilon, delta)-DP with ``canaries``
    canaries each included with probability 1/2 (Steinke, Nasr, Jagielski 2023, Thm. 5.2):
    beta + 2 m delta alpha, with beta = P[Binomial(r, q) >= v], q = e^eps / (1 + e^eps) and
    alpha = max_{1 <= i <= v} P[v > Binomial(r, q) >= v - i] / i (pure DP: beta).

    Raises:
        ValueError: not 0 <= correct <= guesses <= canaries, epsilon < 0 or delta outside [0, 1].
    """
    if not 0 <= correct <= guesses <= canaries or epsilon < 0 or not 0 <= delta <= 1:
        raise ValueError(f"need 0 <= correct <= guesses <= canaries, epsilon >= 0, delta in [0, 1] "
                         f"(got {correct}, {guesses}, {canaries}, {epsilon}, {delta})")
    q = 1 / (1 + math.exp(-epsilon))
    beta_tail = float(binom.sf(correct - 1, guesses, q))
    if delta == 0 or correct == 0:
        return min(beta_tail, 1.0)
    i = np.arange(1, correct + 1)
    window = np.cumsum(binom.pmf(correct - i, guesses, q))  # P[v > X >= v - i]
    alpha = float((window / i).max())
    return min(beta_tail + 2 * canaries * delta * alpha, 1.0)


def epsilon_lower_bound_one_run(correct: int, guesses: int, *, confidence: float = 0.95, canaries: int | None = None,
                                delta: float = 0.0) -> float:
    """The largest eps whose p-value (:func:`one_run_p_value`) at the observed count is still
    <= 1 - confidence: eps-DP (or (eps, delta)-DP) is rejected at that level for every smaller eps
    (0 when even eps = 0 is not rejected).

    Raises:
        ValueError: correct outside [0, guesses].
    """
    if guesses < 1 or not 0 <= correct <= guesses:
        raise ValueError(f"need 0 <= correct <= guesses and guesses >= 1 (got {correct}, {guesses})")
    alpha = 1 - confidence
    m = guesses if canaries is None else canaries

    def p_value(eps: float) -> float:
        return one_run_p_value(m, guesses, correct, eps, delta)

    if p_value(0.0) > alpha:
        return 0.0
    if p_value(50.0) <= alpha:
        return 50.0
    return brentq(lambda e: p_value(e) - alpha, 0.0, 50.0, xtol=1e-6)


def _pure_epsilon(events: list[dp_event.DpEvent]) -> float:
    """Pure epsilon of the release's events, composed by the basic-composition accountant: binary
    randomized response with flip probability f is ln((1 - f) / f)-DP, Laplace(b) on a
    sensitivity-1 query is 1/b-DP."""
    ledger = Ledger(PrivacyUnit.EDGE, delta=0.0, accountant="basic")
    for event in events:
        if isinstance(event, dp_event.RandomizedResponseDpEvent):
            flip = event.noise_parameter / 2
            ledger.spend(PureDpEvent(math.log((1 - flip) / flip)), phase="release")
        elif isinstance(event, dp_event.LaplaceDpEvent):
            ledger.spend(PureDpEvent(1.0 / event.noise_multiplier), phase="release")
        else:
            raise ConfigError(f"the edge audit needs pure-DP events, got {event}")
    return ledger.epsilon(0.0)


def _release(method: str, pairs: np.ndarray, num_nodes: int, epsilon: float, ratio: float,
             rng: np.random.Generator) -> tuple[np.ndarray, float, str]:
    """(released pairs, claimed epsilon, accounting) of one edge-level release."""
    if method == "edgerand":
        from graphpriv.privacy.mechanisms import randomized_response_edges

        released, event = randomized_response_edges(pairs, num_nodes, epsilon=epsilon, rng=rng)
        return released, _pure_epsilon([event]), "rigorous (pure epsilon-DP, basic composition)"
    if method == "lapgraph":
        from graphpriv.privacy.lapgraph import lapgraph

        released, events = lapgraph(pairs, num_nodes, epsilon=epsilon, rng=rng)
        return released, _pure_epsilon(events), "rigorous (pure epsilon-DP, basic composition)"
    from graphpriv.publishing.perturbation import random_perturb

    return random_perturb(pairs, num_nodes, ratio=ratio, rng=rng), math.inf, "non-private"


def audit_edge_release(method: str, data: Data, *, epsilon: float = 1.0, canaries: int = 5000, seed: int = 0,
                       ratio: float = 0.0, confidence: float = 0.95) -> AuditReport:
    """Audit one edge-level release with ``canaries`` canary edges (see the module docstring).

    Args:
        method: ``edgerand``, ``lapgraph`` or ``random-perturb`` (non-private; ``ratio`` of edges
            rewired, 0 publishes the input). data: the graph. epsilon: target (private methods).
        canaries: m, canary pairs drawn among the graph's non-edges. seed: canaries, coins, noise.

    Returns:
        :class:`AuditReport`.

    Raises:
        ConfigError: a method the edge audit does not cover. PrivacyError: bad epsilon.
    """
    if method not in EDGE_AUDITABLE:
        raise ConfigError(f"the edge-level audit covers {', '.join(EDGE_AUDITABLE)} (got {method!r}); "
                          "DP-SGD methods (dplp-ps, dplp-ns) and node-level methods are not audited yet")
    if method != "random-perturb":
        check_epsilon(epsilon)
    rng = np.random.default_rng([seed, 1013])
    n = int(data.num_nodes)
    pairs = undirected_pairs(data.edge_index)
    canary_pairs = sample_non_edges(n, canaries, forbidden=pairs, rng=rng)
    inserted = rng.random(canary_pairs.shape[1]) < 0.5
    graph = np.concatenate([pairs, canary_pairs[:, inserted]], axis=1)
    released, claimed, accounting = _release(method, graph, n, epsilon, ratio, rng)
    present = np.isin(pair_codes(canary_pairs, n), pair_codes(released, n))
    tp, fn = int((present & inserted).sum()), int((~present & inserted).sum())
    fp, tn = int((present & ~inserted).sum()), int((~present & ~inserted).sum())
    correct = tp + tn
    tpr, fpr = tp / max(tp + fn, 1), fp / max(fp + tn, 1)
    estimate = [0.0]
    if tpr > 0 and fpr > 0:
        estimate.append(math.log(tpr / fpr))
    if fn > 0 and tn > 0:
        estimate.append(math.log((1 - fpr) / (1 - tpr)))
    if fp == 0 and tp > 0 or fn == 0 and tn > 0:
        estimate.append(math.inf)
    # two guessing strategies (every canary; only the present ones, abstaining on the rest), each
    # at half the error level so that taking the better one keeps the 95% (a union bound)
    split = 1 - (1 - confidence) / 2
    lower = max(epsilon_lower_bound_one_run(correct, canary_pairs.shape[1], confidence=split),
                epsilon_lower_bound_one_run(tp, tp + fp, confidence=split, canaries=canary_pairs.shape[1])
                if tp + fp else 0.0)
    lower_cp = epsilon_lower_bound_cp(tp, fn, fp, tn, confidence=confidence)
    return AuditReport(method=method, dataset=str(getattr(data, "name", "graph")), unit="edge",
                       claimed_epsilon=claimed, accounting=accounting, attack="canary present in the release",
                       canaries=int(canary_pairs.shape[1]), inserted=int(inserted.sum()), correct=correct,
                       tpr=tpr, fpr=fpr, epsilon_estimate=max(estimate), epsilon_lower_bound=lower,
                       epsilon_lower_bound_cp=lower_cp, confidence=confidence, passed=lower <= claimed,
                       notes=[(f"{canary_pairs.shape[1]} canary non-edges, each inserted with probability 1/2; "
                               "one release; the guess is 'inserted' iff the pair is in the release")])


def audit_from_scores(scores: np.ndarray, inserted: np.ndarray, *, method: str, dataset: str, unit: str,
                      claimed_epsilon: float, accounting: str, attack: str, guesses: int | None = None,
                      confidence: float = 0.95, audit_delta: float = 0.0, notes: list[str] | None = None,
                      one_sided: bool = False, threshold: float | None = None) -> AuditReport:
    """Turn one run's canary scores into an :class:`AuditReport` (Steinke et al. 2023, Sec. 3 and 5).

    The auditor guesses "inserted" for the ``guesses`` / 2 highest scores and "not inserted" for
    the ``guesses`` / 2 lowest, abstaining on the rest (default ``guesses`` = m / 5, at least 2);
    the one-run bound at (``confidence``, ``audit_delta``) gives the verdict, Clopper–Pearson the
    second bound. ``one_sided``: "inserted" for the ``guesses`` highest scores only (default m / 5,
    at least 1), abstaining on the rest (for mechanisms that use only some inserted canaries, e.g.
    a node sample, so the low scores mix unused inserted canaries with absent ones); TPR, FPR and
    Clopper–Pearson then count the abstentions as "not inserted". ``threshold``: guess on every
    canary, "inserted" above it and "not inserted" below it (for scores whose two cases are
    symmetric about a known value, e.g. the sign of a white-box gradient canary).

    Args:
        scores: ``[m]`` float, higher = more likely inserted. inserted: ``[m]`` bool, the coins.

    Raises:
        ValueError: shapes differ or fewer than 2 canaries.
    """
    scores, inserted = np.asarray(scores, dtype=np.float64), np.asarray(inserted, dtype=bool)
    m = scores.size
    if inserted.shape != scores.shape or m < 2:
        raise ValueError(f"need as many coins as scores and at least 2 canaries (got {scores.shape}, {inserted.shape})")
    order = np.argsort(-scores, kind="stable")
    if threshold is not None:
        guess_in, guess_out = scores > threshold, scores < threshold
        r = int(guess_in.sum() + guess_out.sum())
        tp, fp = int((inserted & guess_in).sum()), int((~inserted & guess_in).sum())
        tn, fn = int((~inserted & guess_out).sum()), int((inserted & guess_out).sum())
        correct = tp + tn
    elif one_sided:
        r = min(m, max(1, guesses or m // 5))
        guess_in = order[:r]
        tp, fp = int(inserted[guess_in].sum()), int((~inserted[guess_in]).sum())
        fn, tn = int(inserted.sum()) - tp, int((~inserted).sum()) - fp
        correct = tp
    else:
        k = min(m, max(2, guesses or m // 5)) // 2
        r = 2 * k
        guess_in, guess_out = order[:k], order[-k:]
        tp, fp = int(inserted[guess_in].sum()), int((~inserted[guess_in]).sum())
        tn, fn = int((~inserted[guess_out]).sum()), int(inserted[guess_out].sum())
        correct = tp + tn
    lower = (epsilon_lower_bound_one_run(correct, r, confidence=confidence, canaries=m, delta=audit_delta)
             if r else 0.0)
    lower_cp = epsilon_lower_bound_cp(tp, fn, fp, tn, confidence=confidence)
    tpr, fpr = tp / max(tp + fn, 1), fp / max(fp + tn, 1)
    estimate = math.log(tpr / fpr) if tpr > 0 and fpr > 0 else (math.inf if tpr > 0 else 0.0)
    return AuditReport(method=method, dataset=dataset, unit=unit, claimed_epsilon=claimed_epsilon,
                       accounting=accounting, attack=attack, canaries=m, inserted=int(inserted.sum()),
                       correct=correct, tpr=tpr, fpr=fpr, epsilon_estimate=max(0.0, estimate),
                       epsilon_lower_bound=lower, epsilon_lower_bound_cp=lower_cp, confidence=confidence,
                       passed=lower <= claimed_epsilon,
                       notes=[f"{r} guesses{' (inserted only)' if one_sided else ''} of {m} canaries"]
                       + list(notes or []))


#: The delta node-level audits calibrate their runs' noise at (DPAR's paper setting on Cora-ML); the
#: claim audited is the same noise's epsilon at ``audit_delta``.
CALIBRATION_DELTA = 2e-3


def audit_dp_mlp(data: Data, *, epsilon: float = 1.0, canaries: int = 500, seed: int = 0, epochs: int = 200,
                 guesses: int | None = None, confidence: float = 0.95, audit_delta: float = 1e-5) -> AuditReport:
    """Node-level canary audit of ``dp-mlp`` (DP-SGD on node features, one row per node).

    ``canaries`` synthetic nodes (random binary features with the dataset's mean number of active
    features, a random label: examples the model can only fit by memorising them) each join the
    training nodes with probability 1/2; one DP-SGD training (the method's calibration, epochs,
    batch and clip); each canary is scored by minus the loss of its label; the auditor guesses
    "inserted" for the ``guesses`` / 2 lowest losses and "not inserted" for the ``guesses`` / 2
    highest, abstaining on the rest (default guesses = canaries / 5). The claim tested is the
    accountant's epsilon of the same noise at ``audit_delta`` (the one-run bound's delta term,
    2 m delta, is useless at the method's delta of 2e-3), with the one-run bound at that delta
    (Steinke et al., Thm. 5.2).

    Raises:
        DatasetError: a graph without features or labels.
    """
    import torch

    from graphpriv.data.splits import node_split
    from graphpriv.errors import DatasetError
    from graphpriv.methods.dpar import train_rows
    from graphpriv.methods.mlp import (
        MLPConfig,
        calibrated_noise,
        calibrated_noise_epsilon,
    )

    if getattr(data, "x", None) is None or getattr(data, "y", None) is None:
        raise DatasetError("the dp-mlp audit needs node features and labels")
    check_epsilon(epsilon)
    config = MLPConfig(epsilon=epsilon, epochs=epochs, delta=CALIBRATION_DELTA)
    rng = np.random.default_rng([seed, 2029])
    x, y = torch.as_tensor(data.x, dtype=torch.float32), torch.as_tensor(data.y, dtype=torch.long)
    num_classes = int(y.max()) + 1
    train = node_split(data, train_ratio=1 - config.test_ratio, seed=seed, inductive=True).train_idx
    train = train[y.numpy()[train] >= 0]
    active = max(1, round(float((x[train] > 0).sum(1).float().mean())))
    canary_x = torch.zeros(canaries, x.shape[1])
    for i in range(canaries):
        canary_x[i, torch.from_numpy(rng.choice(x.shape[1], active, replace=False))] = float(x[x > 0].mean())
    canary_y = torch.from_numpy(rng.integers(0, num_classes, canaries))
    inserted = rng.random(canaries) < 0.5
    xs = torch.cat([x[train], canary_x[torch.from_numpy(inserted)]])
    ys = torch.cat([y[train], canary_y[torch.from_numpy(inserted)]])
    z, steps, rate, _ = calibrated_noise(config, xs.shape[0])
    ledger_epsilon = calibrated_noise_epsilon(z, steps, rate, xs.shape[0], audit_delta)
    model = train_rows(xs, ys, sp.identity(xs.shape[0], format="csr"), num_classes=num_classes, config=config,
                       steps=steps, sample_rate=rate, noise_std=z * config.max_grad_norm, seed=seed)
    with torch.no_grad():
        scores = -torch.nn.functional.cross_entropy(model.mlp(canary_x), canary_y, reduction="none").numpy()
    return audit_from_scores(
        scores, inserted, method="dp-mlp", dataset=str(getattr(data, "name", "graph")), unit="node",
        claimed_epsilon=ledger_epsilon,
        accounting=f"rigorous (RDP at delta = {audit_delta:g}; calibrated to eps {epsilon:g} at delta {config.delta:g})",
        attack="loss of the canary's label (lowest: inserted, highest: not)", guesses=guesses,
        confidence=confidence, audit_delta=audit_delta, notes=["canary nodes, one training run"])
