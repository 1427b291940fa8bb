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

A fit's epsilon comes from a :class:`~graphpriv.privacy.accountant.Ledger` (:func:`dpar_ledger`,
accountant ``phases``), which alone builds the report: the DP-APPR rows are spent as M copies of
one row event (:func:`appr_event`: :class:`~graphpriv.privacy.events.TopKRowDpEvent` or
:class:`~graphpriv.privacy.events.GaussianRowDpEvent`), DP-SGD step by step as :func:`sgd_event`;
the ledger composes each phase at delta / (2 q'), adds them and amplifies the sum by q' (above).
:func:`spent_ledger` rebuilds that ledger from a fit's record, under either mode. The other
functions calibrate the noise before a fit (the budget split, the rows' and DP-SGD's noise).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dp_accounting import dp_event
from scipy.optimize import brentq

from graphpriv.errors import PrivacyError
from graphpriv.privacy.accountant import GraphRdpAccountant, Ledger, check_delta, check_epsilon, unit_sampled
from graphpriv.privacy.analysis.row_composition import paper_row_epsilon, paper_rows_epsilon
from graphpriv.privacy.analysis.top_k import (
    compose_approx_dp,
    one_shot_top_k_epsilon,
)
from graphpriv.privacy.calibration import calibrate_noise_multiplier, quiet_absl
from graphpriv.privacy.events import BinomialGroupGaussianDpEvent, GaussianRowDpEvent, TopKRowDpEvent
from graphpriv.privacy.sampling import PoissonSampler
from graphpriv.privacy.units import Accounting, PrivacyUnit

__all__ = [
    "DparPhaseBudget",
    "DparSgdNoise",
    "appr_event",
    "dpar_ledger",
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
    "sgd_group",
    "sgd_noise",
    "sgd_noise_multiplier",
    "spent_ledger",
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
                 accounting: Accounting = Accounting.RIGOROUS) -> DparPhaseBudget:
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
                  accounting: Accounting = Accounting.RIGOROUS) -> tuple[float, float]:
    """(epsilon, delta) of the whole run from the composed phases: amplification by the q' node
    sampling (``rigorous``) or the paper's linear q' scaling (``paper``); the Ledger's
    :func:`~graphpriv.privacy.accountant.unit_sampled`."""
    return unit_sampled(inner_epsilon, inner_delta, node_rate, accounting)


def em_rows_epsilon(round_epsilon: float, *, k: int, rows: int, row_delta: float, values: bool,
                    target_delta: float) -> float:
    """Rigorous epsilon of ``rows`` EM rows (K Gumbel rounds of ``round_epsilon`` each, plus EM1's
    Laplace values with as much again when ``values``) at ``target_delta``."""
    per_row = one_shot_top_k_epsilon(round_epsilon, k, row_delta)
    if values:
        per_row *= 2  # the K values get the selection's eps' (the authors' default)
    return compose_approx_dp(per_row, row_delta, rows, target_delta=target_delta)[0]


def em_row_epsilon(budget_epsilon: float, budget_delta: float, *, k: int, rows: int, values: bool,
                   accounting: Accounting = Accounting.RIGOROUS) -> tuple[float, float]:
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
                 accounting: Accounting = Accounting.RIGOROUS) -> float:
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
              accounting: Accounting = Accounting.RIGOROUS) -> dp_event.DpEvent:
    """One DP-SGD step's event: Poisson-sampled Gaussian (one row per node, or ``paper``), else the
    multi-term group event."""
    if accounting == "paper" or group_size == 1:
        return dp_event.PoissonSampledDpEvent(sample_rate, dp_event.GaussianDpEvent(noise_multiplier))
    return BinomialGroupGaussianDpEvent(noise_multiplier, sample_rate, group_size)


def _sgd_sensitivity(max_grad_norm: float, group_size: int, r: float, accounting: Accounting) -> float:
    """r C (paper), else the Poisson sampler's: C for one row per node, 2 C m for m rows."""
    if accounting == "paper":
        return r * max_grad_norm
    return PoissonSampler.sensitivity(max_grad_norm, group_size)


def sgd_noise(budget_epsilon: float, budget_delta: float, *, sample_rate: float, steps: int, group_size: int,
              max_grad_norm: float, r: float = 1.0, accounting: Accounting = Accounting.RIGOROUS) -> DparSgdNoise:
    """Calibrated DP-SGD noise for the phase budget.

    ``rigorous``: sensitivity C for one row per node, else 2 C m (m = ``group_size``).
    ``paper``: sensitivity r C with ordinary Poisson accounting.

    Raises:
        BudgetExceededError: no noise multiplier up to the calibration's cap meets the budget.
    """
    if group_size < 1 or steps < 1:
        raise ValueError(f"need group_size >= 1 and steps >= 1 (got {group_size}, {steps})")
    z = _sgd_noise_multiplier(float(budget_epsilon), float(budget_delta), float(sample_rate), int(steps),
                              int(group_size), Accounting(accounting).value)
    return DparSgdNoise(z, _sgd_sensitivity(max_grad_norm, group_size, r, accounting), group_size)


@functools.lru_cache(maxsize=64)
def _sgd_noise_multiplier(budget_epsilon: float, budget_delta: float, sample_rate: float, steps: int,
                          group_size: int, accounting: str) -> float:
    """The calibration behind :func:`sgd_noise`, kept per process: the seeds of a one-row cell ask
    for the same multiplier (every training node: the same budget, rate and steps; a q' node
    sample's size, and so its rate, differs by seed), and the search composes the accountant
    some hundred times (about a seventh of a DPAR run on Cora-ML)."""

    def run(z: float) -> dp_event.DpEvent:
        return dp_event.SelfComposedDpEvent(sgd_event(z, sample_rate=sample_rate, group_size=group_size,
                                                      accounting=Accounting(accounting)), steps)
    with quiet_absl():
        return calibrate_noise_multiplier(run, target_epsilon=budget_epsilon, delta=budget_delta)


def sgd_epsilon(noise_std: float, *, max_grad_norm: float, sample_rate: float, steps: int, group_size: int,
                delta: float, r: float = 1.0, accounting: Accounting = Accounting.RIGOROUS) -> float:
    """Epsilon of ``steps`` DP-SGD steps with noise std ``noise_std`` under either analysis."""
    z = noise_std / _sgd_sensitivity(max_grad_norm, group_size, r, accounting)
    event = sgd_event(z, sample_rate=sample_rate, group_size=group_size, accounting=accounting)
    with quiet_absl():
        return float(GraphRdpAccountant().compose(event, steps).get_epsilon(delta))


def sgd_group(group_size: int, accounting: Accounting) -> int:
    """The rows per node DP-SGD's analysis counts: m (``rigorous``), or 1 (``paper``: ordinary
    Poisson DP-SGD, the node's reach folded into the sensitivity r C).

    Args:
        group_size: m >= 1, the training rows one node reaches. accounting: the mode.

    Returns:
        The group size of the DP-SGD step's event (node-level add/remove).

    Source: Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with Node-Level
    Differential Privacy" (WWW 2024), Theorem 2 (``paper``); module docstring (``rigorous``).
    """
    return 1 if Accounting(accounting) is Accounting.PAPER else group_size


def sgd_noise_multiplier(noise: DparSgdNoise, *, max_grad_norm: float, r: float, accounting: Accounting) -> float:
    """The noise multiplier of a fit's DP-SGD noise relative to ``accounting``'s sensitivity: the
    calibrated z when that is the sensitivity it was calibrated to, else noise_std / sensitivity
    (the same noise under the other analysis).

    Args:
        noise: the fit's :class:`DparSgdNoise`. max_grad_norm: C. r: the column clip.
        accounting: the analysis (``rigorous``: C or 2 C m; ``paper``: r C).

    Returns:
        z (float, > 0), node-level add/remove.

    Source: Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with Node-Level
    Differential Privacy" (WWW 2024), Theorem 2 and Algorithm 2.
    """
    sensitivity = _sgd_sensitivity(max_grad_norm, noise.group_size, r, accounting)
    return noise.noise_multiplier if sensitivity == noise.sensitivity else noise.noise_std / sensitivity


def dpar_ledger(delta: float, *, node_rate: float, accounting: Accounting) -> Ledger:
    """An empty ledger for a DPAR fit: node-level add/remove, the ``phases`` accountant with the
    q' node sampling (module docstring).

    Args:
        delta: the run's delta (delta / q' < 1). node_rate: q' in (0, 1]. accounting: the mode.

    Returns:
        A :class:`~graphpriv.privacy.accountant.Ledger` (unit node, ``ADD_OR_REMOVE_ONE``).

    Raises:
        PrivacyError: delta outside (0, 1), or delta / q' >= 1.

    Source: Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with Node-Level
    Differential Privacy" (WWW 2024), Sec. 3.2 (the node sampling).
    """
    return Ledger(PrivacyUnit.NODE, delta=delta, accounting=accounting, accountant="phases",
                  unit_sampling_rate=node_rate)


def appr_event(appr_info: Mapping[str, Any], *, c1: float) -> tuple[dp_event.DpEvent, int, str]:
    """The DP-APPR phase of a fit as the ledger spends it: one row's event, the rows M, a label.

    Args:
        appr_info: the fit's DP-APPR facts: ``num_rows``, ``k`` and ``em_round_epsilon`` /
            ``em_value_epsilon`` (EM rows) or ``gm_noise_std`` (GM rows). c1: GM's L2 clip C1.

    Returns:
        ``(event, M, label)``: :class:`TopKRowDpEvent` (EM0/EM1) or :class:`GaussianRowDpEvent` (GM),
        the same under both modes (the ledger's accountant decides the analysis); node-level
        add/remove.

    Raises:
        KeyError: ``appr_info`` lacks ``num_rows``, ``k`` or the mechanism's field.

    Source: Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with Node-Level
    Differential Privacy" (WWW 2024), Algorithm 1.
    """
    rows, k = int(appr_info["num_rows"]), int(appr_info["k"])
    if "em_round_epsilon" in appr_info:
        values = appr_info.get("em_value_epsilon") is not None
        round_epsilon = float(appr_info["em_round_epsilon"])
        label = f"one-shot top-{k} Gumbel row, round epsilon {round_epsilon:.4g}" + (", Laplace values" if values else "")
        return TopKRowDpEvent(round_epsilon, k, values), rows, label
    std = float(appr_info["gm_noise_std"])
    return GaussianRowDpEvent(std, c1), rows, f"Gaussian row, std {std:.4g} (L2 clip C1 = {c1:g})"


def spent_ledger(record: Mapping[str, Any], *, delta: float, node_rate: float, c1: float, max_grad_norm: float,
                 r: float, accounting: Accounting) -> Ledger:
    """A private DPAR fit's ledger rebuilt from its accounting record, under ``accounting``: the M
    DP-APPR rows, then ``steps`` DP-SGD steps of the fit's noise (its epsilon at any delta is
    ``spent_ledger(...).epsilon(delta)``).

    Args:
        record: ``appr_info``, ``noise`` (:class:`DparSgdNoise` fields), ``steps``, ``rate`` (q) and
            ``group`` (m), as JSON values. delta: the run's delta. node_rate: q'. c1, max_grad_norm,
            r: the fit's C1, C and column clip. accounting: the analysis.

    Returns:
        The ledger, phases ``dp-appr`` (M rows) and ``dp-sgd`` (``steps`` steps); node-level
        add/remove.

    Raises:
        PrivacyError: delta outside (0, 1), or delta / q' >= 1.

    Source: Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with Node-Level
    Differential Privacy" (WWW 2024), Algorithms 1-2, Theorems 1-2 (``paper``); module docstring (``rigorous``).
    """
    ledger = dpar_ledger(delta, node_rate=node_rate, accounting=accounting)
    event, rows, label = appr_event(record["appr_info"], c1=c1)
    ledger.spend(event, phase="dp-appr", count=rows, label=label)
    noise = DparSgdNoise(**record["noise"])
    z = sgd_noise_multiplier(noise, max_grad_norm=max_grad_norm, r=r, accounting=accounting)
    ledger.spend(sgd_event(z, sample_rate=float(record["rate"]), group_size=int(record["group"]), accounting=accounting),
                 phase="dp-sgd", count=int(record["steps"]), noise_multiplier=z)
    return ledger
