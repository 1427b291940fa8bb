"""DPAR's privacy accounting: DP-APPR rows, DP-SGD, node subsampling; rigorous and paper modes.

Source: Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with Node-Level
Differential Privacy" (WWW 2024), Sec. 3.1-3.2, Theorems 1-2 and Algorithm 2. Where the paper's
analysis is not a bound (a node's effect on a DP-SGD step is not r C; GM rows have sensitivity
2 C1; node sampling amplifies eps to ln(1 + q'(e^eps - 1)), not q' eps), rigorous mode departs
from it: docs/dpar.md, "Privacy".

Neighbouring relation: node-level add/remove (one node with its features, label and edges) on the
training graph. Flow: each training node is kept with probability q' (Poisson); on the sample,
phase 1 releases M DP-APPR rows, phase 2 runs DP-SGD given those rows; the two phases compose
(basic composition) and the whole is amplified by the node sampling.

``rigorous`` (default):
- EM rows: one-shot Gumbel top-K (Durfee & Rogers) per row, EM1's Laplace values added (pure);
  the M rows composed with the best of basic, advanced and PLD composition
  (:func:`~graphpriv.privacy.analysis.top_k.compose_approx_dp`).
- GM rows: one node can move a clipped row anywhere in the L2 ball of radius C1, so the L2
  sensitivity is 2 C1; the M Gaussian rows compose in RDP.
- DP-SGD: one node reaches every training row that holds it (its own and each row with
  Pi[v, j] != 0): ``group_size`` m rows, each moving the clipped sum by <= 2C; Poisson batches;
  noise std z 2C m; the multi-term bound (:class:`~graphpriv.privacy.events.BinomialGroupGaussianDpEvent`).
- Node sampling: (ln(1 + q'(e^eps - 1)), q' delta) (Balle et al. 2018, Thm. 9).

``paper`` (the paper's own analysis, not a guarantee): EM and GM rows composed with the paper's
Theorem 1 (eps_row = eps / (2 sqrt(M ln(e + eps / delta))), delta = 2 M delta_row), GM with
sensitivity C1; DP-SGD as ordinary Poisson DP-SGD with noise std z r C (Theorem 2: the noise scales
with the column clip r); the total multiplied by q' linearly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dp_accounting import dp_event
from scipy.optimize import brentq

from graphpriv.errors import PrivacyError
from graphpriv.privacy.accountant import GraphRdpAccountant, check_delta, check_epsilon
from graphpriv.privacy.analysis.top_k import (
    amplified_by_subsampling,
    compose_approx_dp,
    one_shot_top_k_epsilon,
)
from graphpriv.privacy.calibration import calibrate_noise_multiplier, quiet_absl
from graphpriv.privacy.events import BinomialGroupGaussianDpEvent
from graphpriv.privacy.sampling import PoissonSampler

__all__ = [
    "DparPhaseBudget",
    "DparSgdNoise",
    "em_row_epsilon",
    "em_rows_epsilon",
    "gm_row_noise",
    "gm_rows_epsilon",
    "inner_budget",
    "outer_epsilon",
    "paper_row_epsilon",
    "paper_rows_epsilon",
    "quiet_absl",
    "sgd_epsilon",
    "sgd_event",
    "sgd_noise",
]


@dataclass(frozen=True)
class DparPhaseBudget:
    """Budgets of the two phases on the node sample, before amplification.

    Attributes:
        appr_epsilon, appr_delta: phase 1 (the M DP-APPR rows).
        sgd_epsilon, sgd_delta: phase 2 (DP-SGD).
    """

    appr_epsilon: float
    appr_delta: float
    sgd_epsilon: float
    sgd_delta: float


def inner_budget(epsilon: float, delta: float, *, node_rate: float, appr_share: float = 0.5,
                 accounting: str = "rigorous") -> DparPhaseBudget:
    """Split a total (epsilon, delta) into the two phases on the q'-sample.

    ``rigorous``: invert the amplification, eps_in = ln(1 + (e^eps - 1) / q'), delta_in = delta / q';
    ``paper``: eps_in = eps / q', delta_in = delta / q'. The phases get ``appr_share`` and
    1 - ``appr_share`` of eps_in and half of delta_in each.

    Raises:
        PrivacyError: bad epsilon or delta, or delta / q' >= 1 (naming delta, node_rate and the
            fix). ValueError: node_rate outside (0, 1], appr_share outside (0, 1).
    """
    check_epsilon(epsilon)
    check_delta(delta)
    if not 0 < node_rate <= 1:
        raise ValueError(f"'node_rate' (q') must be in (0, 1] (got {node_rate})")
    if not 0 < appr_share < 1:
        raise ValueError(f"'appr_share' must be in (0, 1) (got {appr_share})")
    inner_delta = delta / node_rate
    if inner_delta >= 1:
        raise PrivacyError(f"delta / q' = delta / node_rate = {delta:g} / {node_rate:g} = {inner_delta:g} >= 1: the "
                           "q' node sample spends delta / q' inside it, which must stay below 1; lower delta (below "
                           f"node_rate={node_rate:g}, e.g. under 1 / the number of nodes) or raise node_rate")
    if accounting == "paper":
        inner = epsilon / node_rate
    else:  # ln(1 + (e^eps - 1) / q'), stable for large eps
        inner = epsilon + math.log1p(-math.exp(-epsilon)) - math.log(node_rate) if epsilon > 30 else \
            math.log1p(math.expm1(epsilon) / node_rate)
    return DparPhaseBudget(appr_share * inner, inner_delta / 2, (1 - appr_share) * inner, inner_delta / 2)


def outer_epsilon(inner_epsilon: float, inner_delta: float, *, node_rate: float,
                  accounting: str = "rigorous") -> tuple[float, float]:
    """(epsilon, delta) of the whole run from the composed phases: amplification by the q' node
    sampling (``rigorous``) or the paper's linear q' scaling (``paper``)."""
    if accounting == "paper":
        return node_rate * inner_epsilon, node_rate * inner_delta
    return amplified_by_subsampling(inner_epsilon, inner_delta, node_rate)


def paper_row_epsilon(epsilon: float, delta: float, rows: int) -> float:
    """The paper's Theorem 1 composition inverted: the eps' each of ``rows`` rows may spend so that
    eps' = epsilon / (2 sqrt(rows ln(e + epsilon / delta)))."""
    return epsilon / (2 * math.sqrt(rows * math.log(math.e + epsilon / delta)))


def paper_rows_epsilon(row_epsilon: float, rows: int, delta: float) -> float:
    """The paper's Theorem 1 forward: the total epsilon of ``rows`` rows of ``row_epsilon`` each
    (the inverse of :func:`paper_row_epsilon`, by root finding), at total ``delta``."""
    return brentq(lambda e: paper_row_epsilon(e, delta, rows) - row_epsilon, 1e-12, 1e6, xtol=1e-12)


def em_rows_epsilon(round_epsilon: float, *, k: int, rows: int, row_delta: float, values: bool,
                    target_delta: float) -> float:
    """Rigorous epsilon of ``rows`` EM rows (K Gumbel rounds of ``round_epsilon`` each, plus EM1's
    Laplace values with as much again when ``values``) at ``target_delta``."""
    per_row = one_shot_top_k_epsilon(round_epsilon, k, row_delta)
    if values:
        per_row *= 2  # the K values get the selection's eps' (the authors' default)
    return compose_approx_dp(per_row, row_delta, rows, target_delta=target_delta)[0]


def em_row_epsilon(budget_epsilon: float, budget_delta: float, *, k: int, rows: int, values: bool,
                   accounting: str = "rigorous") -> tuple[float, float]:
    """The largest per-round epsilon of the EM rows that fits ``budget_epsilon`` at ``budget_delta``.

    Returns:
        ``(round_epsilon, row_delta)``; each row is one-shot top-K with row_delta = delta / (2 M).
    """
    row_delta = budget_delta / (2 * rows)
    if accounting == "paper":
        target = paper_row_epsilon(budget_epsilon, 2 * rows * row_delta, rows) / (2 if values else 1)
        return brentq(lambda e: one_shot_top_k_epsilon(e, k, row_delta) - target, 1e-12, target), row_delta

    def gap(e: float) -> float:
        return em_rows_epsilon(e, k=k, rows=rows, row_delta=row_delta, values=values,
                               target_delta=budget_delta) - budget_epsilon
    hi = budget_epsilon
    if gap(hi) <= 0:
        return hi, row_delta
    return brentq(gap, 1e-12, hi, xtol=1e-10) * (1 - 1e-9), row_delta


def gm_rows_epsilon(noise_std: float, *, c1: float, rows: int, delta: float) -> float:
    """Rigorous epsilon of ``rows`` Gaussian rows (std ``noise_std``, L2 sensitivity 2 C1) at delta."""
    event = dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(noise_std / (2 * c1)), rows)
    return float(GraphRdpAccountant().compose(event).get_epsilon(delta))


def gm_row_noise(budget_epsilon: float, budget_delta: float, *, c1: float, rows: int,
                 accounting: str = "rigorous") -> float:
    """Noise std of the GM rows for the phase budget (``paper``: sensitivity C1, the classical
    Gaussian mechanism per row at the paper's Theorem 1 row budget)."""
    if accounting == "paper":
        row_delta = budget_delta / (2 * rows)
        row_eps = paper_row_epsilon(budget_epsilon, budget_delta, rows)
        return math.sqrt(2 * math.log(1.25 / row_delta)) * c1 / row_eps
    z = calibrate_noise_multiplier(
        lambda z: dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(z), rows),
        target_epsilon=budget_epsilon, delta=budget_delta)
    return z * 2 * c1


@dataclass(frozen=True)
class DparSgdNoise:
    """DP-SGD noise: std = ``noise_multiplier * sensitivity``; ``group_size`` rows per node."""

    noise_multiplier: float
    sensitivity: float
    group_size: int

    @property
    def noise_std(self) -> float:
        return self.noise_multiplier * self.sensitivity


def sgd_event(noise_multiplier: float, *, sample_rate: float, group_size: int,
              accounting: str = "rigorous") -> dp_event.DpEvent:
    """One DP-SGD step's event: Poisson-sampled Gaussian (one row per node, or ``paper``), else the
    multi-term group event."""
    if accounting == "paper" or group_size == 1:
        return dp_event.PoissonSampledDpEvent(sample_rate, dp_event.GaussianDpEvent(noise_multiplier))
    return BinomialGroupGaussianDpEvent(noise_multiplier, sample_rate, group_size)


def _sgd_sensitivity(max_grad_norm: float, group_size: int, r: float, accounting: str) -> float:
    """r C (paper), else the Poisson sampler's: C for one row per node, 2 C m for m rows."""
    if accounting == "paper":
        return r * max_grad_norm
    return PoissonSampler.sensitivity(max_grad_norm, group_size)


def sgd_noise(budget_epsilon: float, budget_delta: float, *, sample_rate: float, steps: int, group_size: int,
              max_grad_norm: float, r: float = 1.0, accounting: str = "rigorous") -> DparSgdNoise:
    """Calibrated DP-SGD noise for the phase budget.

    ``rigorous``: sensitivity C for one row per node, else 2 C m (m = ``group_size``).
    ``paper``: sensitivity r C with ordinary Poisson accounting.

    Raises:
        BudgetExceededError: no noise multiplier up to the calibration's cap meets the budget.
    """
    if group_size < 1 or steps < 1:
        raise ValueError(f"need group_size >= 1 and steps >= 1 (got {group_size}, {steps})")

    def run(z: float) -> dp_event.DpEvent:
        return dp_event.SelfComposedDpEvent(sgd_event(z, sample_rate=sample_rate, group_size=group_size,
                                                      accounting=accounting), steps)
    with quiet_absl():
        z = calibrate_noise_multiplier(run, target_epsilon=budget_epsilon, delta=budget_delta)
    return DparSgdNoise(z, _sgd_sensitivity(max_grad_norm, group_size, r, accounting), group_size)


def sgd_epsilon(noise_std: float, *, max_grad_norm: float, sample_rate: float, steps: int, group_size: int,
                delta: float, r: float = 1.0, accounting: str = "rigorous") -> float:
    """Epsilon of ``steps`` DP-SGD steps with noise std ``noise_std`` under either analysis."""
    z = noise_std / _sgd_sensitivity(max_grad_norm, group_size, r, accounting)
    event = sgd_event(z, sample_rate=sample_rate, group_size=group_size, accounting=accounting)
    with quiet_absl():
        return float(GraphRdpAccountant().compose(event, steps).get_epsilon(delta))

