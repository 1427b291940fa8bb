"""Statistics of a canary audit: a lower bound on epsilon from one run's guesses, and its report.

Sources: Jagielski, Ullman, Oprea, "Auditing differentially private machine learning" (NeurIPS
2020) for turning an attack's true/false positive rates into a lower bound with Clopper–Pearson
intervals; Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run" (NeurIPS 2023),
Theorems 3.1 and 5.2, for the one-run bound (m canaries, each included with probability 1/2; the
guesser may abstain; with or without delta).

- ``one_run``: for an (eps, delta)-DP mechanism the number of correct guesses out of r is
  dominated by Binomial(r, e^eps / (1 + e^eps)) plus a delta term (Thm. 5.2), for any mechanism,
  dependent canaries included. :func:`epsilon_lower_bound_one_run` inverts it; the verdict of
  every audit uses it.
- ``clopper_pearson``: TPR and FPR with Clopper–Pearson bounds (four one-sided rates sharing the
  error level), eps >= max(ln(TPR / FPR), ln(TNR / FNR)); it treats the canaries as independent
  trials (pure DP), a second opinion beside the one-run bound.

The audits themselves (what the canaries are, which estimator they go through) are the modules
beside this one; :mod:`graphpriv.audit.registry` says which audit covers which estimator.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import BaseModel
from scipy.optimize import brentq
from scipy.stats import beta, binom

__all__ = [
    "AuditReport",
    "audit_from_scores",
    "clopper_pearson",
    "epsilon_lower_bound_cp",
    "epsilon_lower_bound_one_run",
    "guesses_made",
    "minimum_guesses",
    "one_run_p_value",
]

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
    one-sided levels share 1 - confidence (pure DP: delta = 0). No guess on an inserted (or on a
    left-out) canary leaves its rates unknown: the bound is then 0."""
    if tp + fn == 0 or fp + tn == 0:
        return 0.0
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


def minimum_guesses(confidence: float) -> int:
    """The fewest guesses with which the one-run bound can exceed 0 at ``confidence``.

    Under eps = 0 each guess is right with probability 1/2, so r guesses all right have p-value
    2^-r: some eps > 0 is shown only when 2^-r <= 1 - confidence, i.e. r >= log2(1 / (1 - confidence))
    (5 at 95%, 6 at 97.5%). Fewer guesses cannot say anything, whatever the attack.

    Raises:
        ValueError: confidence outside (0, 1).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1) (got {confidence})")
    return max(1, math.ceil(math.log2(1 / (1 - confidence)) - 1e-9))


def guesses_made(canaries: int, guesses: int | None = None, *, one_sided: bool = False) -> int:
    """The number r of guesses :func:`audit_from_scores` makes with ``canaries`` and ``guesses``
    (its default rule: m / 5; two-sided guesses come in pairs, at least 2; one-sided at least 1)."""
    if one_sided:
        return min(canaries, max(1, guesses or canaries // 5))
    return 2 * (min(canaries, max(2, guesses or canaries // 5)) // 2)


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


def audit_from_presence(present: np.ndarray, inserted: np.ndarray, *, method: str, dataset: str, unit: str,
                        claimed_epsilon: float, accounting: str, attack: str, confidence: float = 0.95,
                        notes: list[str] | None = None) -> AuditReport:
    """Turn one run's "is the canary in the release" observations into an :class:`AuditReport`
    (pure DP: delta = 0; Steinke et al. 2023, Thm. 3.1).

    Two guessers, each at half the error level so that taking the better one keeps ``confidence``
    (a union bound): "inserted iff present" on every canary, and "inserted" for the present ones
    only (abstaining on the rest); the one-run bound is the larger of the two. Clopper–Pearson and
    the point estimate max(ln(TPR / FPR), ln(TNR / FNR)) come from the first guesser's counts.

    Args:
        present: ``[m]`` bool, the canary is in the release. inserted: ``[m]`` bool, the coins.

    Raises:
        ValueError: shapes differ or fewer than 2 canaries.
    """
    present, inserted = np.asarray(present, dtype=bool), np.asarray(inserted, dtype=bool)
    m = present.size
    if inserted.shape != present.shape or m < 2:
        raise ValueError(f"need as many coins as observations and at least 2 canaries (got {present.shape}, "
                         f"{inserted.shape})")
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
    split = 1 - (1 - confidence) / 2
    lower = max(epsilon_lower_bound_one_run(correct, m, confidence=split),
                epsilon_lower_bound_one_run(tp, tp + fp, confidence=split, canaries=m) if tp + fp else 0.0)
    return AuditReport(method=method, dataset=dataset, unit=unit, claimed_epsilon=claimed_epsilon,
                       accounting=accounting, attack=attack, canaries=m, inserted=int(inserted.sum()),
                       correct=correct, tpr=tpr, fpr=fpr, epsilon_estimate=max(estimate), epsilon_lower_bound=lower,
                       epsilon_lower_bound_cp=epsilon_lower_bound_cp(tp, fn, fp, tn, confidence=confidence),
                       confidence=confidence, passed=lower <= claimed_epsilon, notes=list(notes or []))
