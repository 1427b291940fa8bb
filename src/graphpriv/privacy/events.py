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
