"""The ``compute_dp_sgd_privacy`` questions, answered by graphpriv's accountant.

Epsilon of DP-SGD for a noise multiplier, sampling scheme, steps and delta; the multi-term group
bound (one unit changes K examples); and the inverse (noise multiplier for a target epsilon).
"""

from __future__ import annotations

import enum
import math

import torch
from dp_accounting import dp_event
from pydantic import BaseModel

from graphpriv.errors import PrivacyError
from graphpriv.privacy.accountant import MAX_EPSILON, GraphRdpAccountant, check_delta, check_epsilon
from graphpriv.privacy.calibration import calibrate_noise_multiplier
from graphpriv.privacy.sampling import PoissonSampler, WithoutReplacementSampler
from graphpriv.privacy.units import Accounting


class Sampling(str, enum.Enum):
    """``poisson``: each example independently with rate q = m/N. ``wor``: m of N without replacement."""

    POISSON = "poisson"
    WOR = "wor"


class DpSgdSetting(BaseModel):
    """One DP-SGD run as the accountant sees it.

    Noise conventions: Poisson, std = z C (add/remove one example) or z 2C K (a unit changes K > 1
    examples; binomial multi-term bound). Without replacement, std = z 2C min(K, m): each of the K
    examples a unit touches moves by at most 2C.
    """

    sampling: Sampling
    dataset_size: int
    batch_size: int
    steps: int
    delta: float
    group_size: int = 1
    accounting: Accounting = Accounting.RIGOROUS

    def sampler(self) -> PoissonSampler | WithoutReplacementSampler:
        """The sampler DP-SGD would run; it decides the step's event and sensitivity."""
        generator = torch.Generator()
        if self.sampling is Sampling.POISSON:
            return PoissonSampler(self.dataset_size, self.batch_size / self.dataset_size, generator=generator)
        return WithoutReplacementSampler(self.dataset_size, self.batch_size, generator=generator)

    def event(self, noise_multiplier: float) -> dp_event.DpEvent:
        """The whole run's event for ``noise_multiplier`` (the sampler's step event, composed)."""
        step = self.sampler().step_event(noise_multiplier, group_size=self.group_size,
                                         accounting=self.accounting)
        return dp_event.SelfComposedDpEvent(step, self.steps)

    def validate_sizes(self) -> None:
        """Check the sizes before any accounting.

        Raises:
            PrivacyError: delta outside (0, 1), paper accounting with Poisson sampling, dataset_size < 1, batch_size outside
                [1, dataset_size], steps < 1, or group_size outside [1, dataset_size].
        """
        check_delta(self.delta)
        if self.accounting is Accounting.PAPER and self.sampling is Sampling.POISSON:
            raise PrivacyError("paper accounting is DPLP's effective-rate bound for batches drawn without "
                               "replacement; use --sampling wor, or rigorous accounting with Poisson sampling")
        if self.dataset_size < 1:
            raise PrivacyError(f"'dataset_size' must be >= 1 (got {self.dataset_size})")
        if not 1 <= self.batch_size <= self.dataset_size:
            raise PrivacyError(f"'batch_size' must be in [1, dataset_size={self.dataset_size}] (got {self.batch_size})")
        if self.steps < 1:
            raise PrivacyError(f"'steps' must be >= 1 (got {self.steps})")
        if not 1 <= self.group_size <= self.dataset_size:
            raise PrivacyError(f"'group_size' must be in [1, dataset_size={self.dataset_size}] (got {self.group_size})")


def steps_for_epochs(epochs: float, dataset_size: int, batch_size: int) -> int:
    """ceil(epochs * N / m).

    Raises:
        PrivacyError: epochs not a finite number > 0, or N or m below 1.
    """
    if not (math.isfinite(epochs) and epochs > 0):
        raise PrivacyError(f"'epochs' must be a finite number > 0 (got {epochs})")
    if dataset_size < 1 or batch_size < 1:
        raise PrivacyError(f"'dataset_size' and 'batch_size' must be >= 1 (got {dataset_size}, {batch_size})")
    return math.ceil(epochs * dataset_size / batch_size)


def epsilon_for(setting: DpSgdSetting, noise_multiplier: float) -> tuple[float, float]:
    """(epsilon, optimal RDP order) of the run at ``setting.delta``."""
    setting.validate_sizes()
    if not (math.isfinite(noise_multiplier) and noise_multiplier > 0):
        raise PrivacyError(f"'noise_multiplier' must be a finite number > 0 (got {noise_multiplier})")
    accountant = GraphRdpAccountant().compose(setting.event(noise_multiplier))
    eps, order = accountant.get_epsilon_and_optimal_order(setting.delta)
    return float(eps), float(order)


def noise_multiplier_for(setting: DpSgdSetting, target_epsilon: float) -> float:
    """Smallest noise multiplier (to calibration tolerance) with epsilon <= target.

    Raises:
        PrivacyError: bad sizes, or a target epsilon not a finite number in (0, MAX_EPSILON].
        BudgetExceededError: no noise multiplier reaches the target.
    """
    setting.validate_sizes()
    if check_epsilon(target_epsilon) > MAX_EPSILON:
        raise PrivacyError(f"target epsilon {target_epsilon:g} is above graphpriv's maximum {MAX_EPSILON:g}; ask "
                           "for a smaller one")
    return calibrate_noise_multiplier(setting.event, target_epsilon=target_epsilon, delta=setting.delta)
