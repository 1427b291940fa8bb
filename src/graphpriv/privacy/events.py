"""DpEvents that dp-accounting lacks, for graph-structured data.

Each event holds exactly the parameters an accountant needs (the dp-accounting contract); the
maths lives in :mod:`graphpriv.privacy.analysis` and the composition in
:class:`graphpriv.privacy.accountant.GraphRdpAccountant`. A plain ``RdpAccountant`` does not know
these events and refuses them, so nothing is silently mis-accounted.
"""

from __future__ import annotations

import attr
from dp_accounting import dp_event


@attr.s(frozen=True, slots=True, auto_attribs=True)
class HypergeometricGroupGaussianDpEvent(dp_event.DpEvent):
    """One DP-SGD step in which one privacy unit changes up to ``group_size`` examples.

    A batch of ``batch_size`` examples is drawn uniformly without replacement from
    ``dataset_size``; each example's clipped gradient (norm <= C) changes by at most 2C when the
    unit changes; the noisy sum gets ``N(0, (noise_multiplier * 2C * K_b)^2 I)`` with
    ``K_b = min(group_size, batch_size)``. The number r of changed examples in the batch is
    Hypergeometric(dataset_size, group_size, batch_size), and the step's RDP is the multi-term bound

        eps(alpha) = 1/(alpha-1) log sum_r P[r] exp(alpha (alpha-1) / (2 z^2) (r / K_b)^2).

    Source: Daigavane et al., "Node-level differentially private graph neural networks" (2021),
    Theorem 1; DPLP-subgraph's rigorous accounting (docs/privacy-dplp.md, step 6).
    """

    noise_multiplier: float
    dataset_size: int
    batch_size: int
    group_size: int


@attr.s(frozen=True, slots=True, auto_attribs=True)
class BinomialGroupGaussianDpEvent(dp_event.DpEvent):
    """One Poisson-sampled DP-SGD step in which one privacy unit changes up to ``group_size``
    examples (each in the batch with probability ``sample_rate``, each moving the clipped sum by at
    most 2C); noise std ``noise_multiplier * 2C * group_size``. The number of changed examples in a
    batch is Binomial(group_size, sample_rate); the RDP is the multi-term bound
    (:func:`graphpriv.privacy.analysis.binomial_group.binomial_group_gaussian_rdp`).
    Used by DPAR's DP-SGD, where a node reaches every training row whose Pi entry it holds.
    """

    noise_multiplier: float
    sample_rate: float
    group_size: int


@attr.s(frozen=True, slots=True, auto_attribs=True)
class EffectiveRateWorGaussianDpEvent(dp_event.DpEvent):
    """The DPLP paper's accounting of one step (``paper`` mode only).

    The Gaussian step (RDP ``alpha / (2 z^2)``) is plugged into the Wang–Balle–Kasiviswanathan
    subsampling-without-replacement bound with the "effective sampling rate"
    ``rho = 1 - C(N - M, m) / C(N, m)`` in place of ``m / N``. This is the paper's Theorem 2
    (Eqs. 12-13, Ran et al.), not a proven bound for group changes.
    """

    noise_multiplier: float
    sampling_rate: float


@attr.s(frozen=True, slots=True, auto_attribs=True)
class PureDpEvent(dp_event.DpEvent):
    """A mechanism known to be pure ``epsilon``-DP (e.g. one exponential-mechanism round).

    The RDP accountant uses ``eps(alpha) <= min(epsilon, alpha * epsilon^2 / 2)``
    (Bun & Steinke, TCC 2016, Prop. 3.3 with zCDP -> RDP).
    """

    epsilon: float


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ApproxDpEvent(dp_event.DpEvent):
    """A mechanism taken to be (``epsilon``, ``delta``)-DP by its own analysis, e.g. one Gaussian
    mechanism with sigma = sqrt(2 ln(1.25/delta)) / epsilon (Dwork & Roth 2014, Thm. A.1, for
    epsilon < 1). Only basic composition composes it (sums of epsilons and deltas); it is how
    papers that split (epsilon, delta) evenly over T steps account (PrivDPR, Sec. 4.3.2).
    """

    epsilon: float
    delta: float


@attr.s(frozen=True, slots=True, auto_attribs=True)
class TopKRowDpEvent(dp_event.DpEvent):
    """One row released by one-shot Gumbel top-K: the K largest of the row's (clipped) entries
    perturbed with Gumbel noise, which is K rounds of the exponential mechanism at
    ``round_epsilon`` each; with ``values`` the K released values get Laplace noise at as much
    again (DPAR's EM1), else they are the public 1/K (EM0).

    One row is (eps'(delta_row) x (2 if values else 1), delta_row)-DP for any delta_row in [0, 1),
    eps'(delta) = min(K eps, K eps (e^eps - 1) / (e^eps + 1) + eps sqrt(2 K ln(1 / delta)))
    (:func:`graphpriv.privacy.analysis.top_k.one_shot_top_k_epsilon`). Rows compose in
    (epsilon, delta) (:class:`graphpriv.privacy.accountant.RowCompositionAccountant`: each of the M
    rows at delta_row = delta / (2M)); RDP accountants refuse the event.

    Sources: Durfee & Rogers, "Practical differentially private top-k selection with
    pay-what-you-get composition" (NeurIPS 2019), Theorem 1; Zhang, Lee, Ma, Lou, Yang, Xiong,
    "DPAR: Decoupled Graph Neural Networks with Node-Level Differential Privacy" (WWW 2024),
    Algorithm 1 (DP-APPR by the exponential mechanism).
    """

    round_epsilon: float
    k: int
    values: bool = False


@attr.s(frozen=True, slots=True, auto_attribs=True)
class GaussianRowDpEvent(dp_event.DpEvent):
    """One row, clipped to L2 norm ``l2_clip`` (C1), released with N(0, ``noise_std``^2 I) noise
    (DPAR's DP-APPR by the Gaussian mechanism).

    Rigorous (:class:`graphpriv.privacy.accountant.GraphRdpAccountant`): adding or removing one node
    can move the clipped row anywhere in the ball of radius C1, so the L2 sensitivity is 2 C1 and
    the row is ``GaussianDpEvent(noise_std / (2 C1))``. ``paper`` accounting
    (:class:`graphpriv.privacy.accountant.RowCompositionAccountant`): the DPAR paper's sensitivity C1
    and the classical Gaussian mechanism, (sqrt(2 ln(1.25 / delta_row)) C1 / noise_std, delta_row)
    per row (Dwork & Roth, "The algorithmic foundations of differential privacy", 2014, Thm. A.1),
    not a bound for add/remove.

    Source: Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with Node-Level
    Differential Privacy" (WWW 2024), Algorithm 1 (DP-APPR by the Gaussian mechanism), Sec. 3.1.
    """

    noise_std: float
    l2_clip: float
