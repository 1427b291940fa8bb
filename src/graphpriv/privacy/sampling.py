"""Batch samplers for DP-SGD, each pinned to the accounting event it justifies.

A sampler both draws batches and names the ``DpEvent`` of one noisy step under that sampling, so
the sampler the code runs is always the one the accountant assumes (shuffled fixed batches
reported with Poisson accounting understate epsilon: Chua et al., 2024).
"""

from __future__ import annotations

import torch
from dp_accounting import dp_event
from torch import Tensor

from graphpriv.privacy.analysis.effective_rate import effective_sampling_rate
from graphpriv.privacy.events import (
    BinomialGroupGaussianDpEvent,
    EffectiveRateWorGaussianDpEvent,
    HypergeometricGroupGaussianDpEvent,
)
from graphpriv.privacy.units import Accounting


class WithoutReplacementSampler:
    """Each step draws ``batch_size`` distinct examples uniformly from ``num_examples``.

    Steps are independent (a fresh uniform subset per step), as the hypergeometric bound assumes.

    Args:
        num_examples: N >= 1. batch_size: 1 <= m <= N. generator: Randomness.

    Raises:
        ValueError: a batch larger than the training set, or non-positive sizes.
    """

    def __init__(self, num_examples: int, batch_size: int, *, generator: torch.Generator) -> None:
        if num_examples < 1:
            raise ValueError(f"'num_examples' must be >= 1 (got {num_examples})")
        if not 1 <= batch_size <= num_examples:
            raise ValueError(
                f"'batch_size'={batch_size} must be in [1, {num_examples}] (the number of training "
                "examples); lower the batch size"
            )
        self.num_examples = num_examples
        self.batch_size = batch_size
        self.generator = generator

    @property
    def expected_batch_size(self) -> int:
        """m: the divisor of the noisy gradient sum."""
        return self.batch_size

    def sample(self) -> Tensor:
        """Indices of one batch, shape ``[batch_size]``."""
        return torch.randperm(self.num_examples, generator=self.generator)[: self.batch_size]

    def sensitivity(self, max_grad_norm: float, group_size: int) -> float:
        """L2 sensitivity of the clipped sum: 2 C min(K, m) (each changed example moves <= 2C)."""
        return 2.0 * max_grad_norm * min(group_size, self.batch_size)

    def step_event(self, noise_multiplier: float, *, group_size: int,
                   accounting: Accounting = Accounting.RIGOROUS) -> dp_event.DpEvent:
        """Event of one step with noise std ``noise_multiplier * sensitivity``.

        ``rigorous``: :class:`HypergeometricGroupGaussianDpEvent`. ``paper``: the DPLP paper's
        WBK bound at the effective rate rho(N, K, m).
        """
        if Accounting(accounting) is Accounting.PAPER:
            rho = effective_sampling_rate(self.num_examples, group_size, self.batch_size)
            return EffectiveRateWorGaussianDpEvent(noise_multiplier, rho)
        return HypergeometricGroupGaussianDpEvent(
            noise_multiplier, self.num_examples, self.batch_size, group_size
        )


class PoissonSampler:
    """Each example joins each batch independently with probability ``sample_rate``.

    Batch sizes vary; the noisy sum is divided by the expected batch size q N.

    Args:
        num_examples: N >= 1. sample_rate: q in (0, 1]. generator: Randomness.
    """

    def __init__(self, num_examples: int, sample_rate: float, *, generator: torch.Generator) -> None:
        if num_examples < 1:
            raise ValueError(f"'num_examples' must be >= 1 (got {num_examples})")
        if not 0 < sample_rate <= 1:
            raise ValueError(f"'sample_rate' must be in (0, 1] (got {sample_rate})")
        self.num_examples = num_examples
        self.sample_rate = sample_rate
        self.generator = generator

    @property
    def expected_batch_size(self) -> float:
        """q N."""
        return self.sample_rate * self.num_examples

    def sample(self) -> Tensor:
        """Indices of one Poisson batch (variable size, possibly empty)."""
        mask = torch.rand(self.num_examples, generator=self.generator) < self.sample_rate
        return mask.nonzero().flatten()

    @staticmethod
    def sensitivity(max_grad_norm: float, group_size: int) -> float:
        """C for one example per unit (add or remove one example); 2 C K when one unit changes K
        examples (each changed example moves the clipped sum by at most 2C). A static method: it
        does not depend on N or q (``PoissonSampler.sensitivity(C, K)``)."""
        PoissonSampler._check_group(group_size)
        return float(max_grad_norm) if group_size == 1 else 2.0 * max_grad_norm * group_size

    def step_event(self, noise_multiplier: float, *, group_size: int = 1,
                   accounting: Accounting = Accounting.RIGOROUS) -> dp_event.DpEvent:
        """``PoissonSampledDpEvent(q, GaussianDpEvent(z))`` for one example per unit;
        :class:`BinomialGroupGaussianDpEvent` (multi-term bound, Binomial(K, q) changed examples)
        for K > 1. ``accounting`` is accepted for the common interface; both are rigorous."""
        self._check_group(group_size)
        if group_size == 1:
            return dp_event.PoissonSampledDpEvent(self.sample_rate, dp_event.GaussianDpEvent(noise_multiplier))
        return BinomialGroupGaussianDpEvent(noise_multiplier, self.sample_rate, group_size)

    @staticmethod
    def _check_group(group_size: int) -> None:
        if group_size < 1:
            raise ValueError(f"'group_size' must be >= 1 (got {group_size})")
