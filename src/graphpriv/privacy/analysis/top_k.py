"""Privacy of one-shot top-K selection, of composed (eps, delta) mechanisms, and of subsampling.

Sources: Durfee & Rogers, "Practical differentially private top-k selection with pay-what-you-get
composition" (NeurIPS 2019), Theorem 1 (one-shot Gumbel top-K); Dwork, Rothblum & Vadhan, "Boosting
and differential privacy" (FOCS 2010), Thm. III.3 (advanced composition); dp-accounting's privacy
loss distributions for (eps, delta) mechanisms (Meiser & Mohammadi 2018); Balle, Barthe & Gaboardi,
"Privacy amplification by subsampling" (NeurIPS 2018), Thm. 9 (Poisson subsampling:
ln(1 + q (e^eps - 1)), q delta). Used by DPAR's accounting (:mod:`graphpriv.privacy.dpar_accounting`).
"""

from __future__ import annotations

import math

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld
from dp_accounting.pld.common import DifferentialPrivacyParameters

__all__ = ["amplified_by_subsampling", "compose_approx_dp", "one_shot_top_k_epsilon"]


def one_shot_top_k_epsilon(epsilon: float, k: int, delta: float) -> float:
    """eps' of K rounds of the exponential mechanism with ``epsilon`` each (one-shot Gumbel top-K):
    min(K eps, K eps (e^eps - 1) / (e^eps + 1) + eps sqrt(2 K ln(1 / delta))), at that ``delta``
    (delta = 0 gives the pure K eps).

    Raises:
        ValueError: epsilon <= 0, k < 1 or delta outside [0, 1).
    """
    if not (epsilon > 0 and k >= 1 and 0 <= delta < 1):
        raise ValueError(f"need epsilon > 0, k >= 1, delta in [0, 1) (got {epsilon}, {k}, {delta})")
    pure = k * epsilon
    if delta == 0:
        return pure
    e = math.exp(epsilon)
    return min(pure, k * epsilon * (e - 1) / (e + 1) + epsilon * math.sqrt(2 * k * math.log(1 / delta)))


def compose_approx_dp(epsilon: float, delta: float, count: int, *, target_delta: float) -> tuple[float, str]:
    """Epsilon of ``count`` (epsilon, delta)-DP mechanisms composed, at total ``target_delta``:
    the smallest of basic composition, advanced composition (with the slack target_delta -
    count delta) and the PLD of the (epsilon, delta) privacy profile self-composed.

    Returns:
        ``(epsilon, method)`` with method ``basic``, ``advanced`` or ``pld``.

    Raises:
        ValueError: target_delta below count * delta (no composition theorem reaches it).
    """
    if count < 1 or not epsilon > 0 or not 0 <= delta < 1:
        raise ValueError(f"need count >= 1, epsilon > 0, delta in [0, 1) (got {count}, {epsilon}, {delta})")
    if target_delta < count * delta:
        raise ValueError(f"target_delta {target_delta:g} < count x delta = {count * delta:g}")
    options = {"basic": count * epsilon}
    slack = target_delta - count * delta
    if slack > 0:
        options["advanced"] = (math.sqrt(2 * count * math.log(1 / slack)) * epsilon
                               + count * epsilon * (math.exp(epsilon) - 1))
    with np.errstate(over="ignore"):  # dp-accounting divides by tiny masses at very large epsilon
        profile = pld.from_privacy_parameters(DifferentialPrivacyParameters(epsilon, delta))
        options["pld"] = float(profile.self_compose(count).get_epsilon_for_delta(target_delta))
    best = min(options, key=options.get)
    return options[best], best


def amplified_by_subsampling(epsilon: float, delta: float, rate: float) -> tuple[float, float]:
    """(ln(1 + q (e^eps - 1)), q delta): an (eps, delta)-DP mechanism run on a Poisson sample of
    rate q (each unit kept independently with probability q).

    Raises:
        ValueError: rate outside (0, 1].
    """
    if not 0 < rate <= 1:
        raise ValueError(f"'rate' must be in (0, 1] (got {rate})")
    if rate == 1:
        return float(epsilon), float(delta)
    # ln(1 - q + q e^eps), stable for large eps
    return float(np.logaddexp(math.log1p(-rate), math.log(rate) + epsilon)), rate * delta
