"""What a privacy audit passes into a private fit: the canaries the mechanism carries, and a noise fault.

An audit (:mod:`graphpriv.audit`) drives an estimator's own ``fit`` (or ``publish``) with an
:class:`AuditHook`; the estimator hands it to its noisy steps, which read it in one place each
(:class:`~graphpriv.privacy.engine.DPSGD`, which also runs the DP-SGD of DPAR and dp-mlp;
PrivDPR's noisy V update; EdgeRand's flips; LapGraph's Laplace noise). Nothing else in a fit changes, so what is
audited is the code a user runs.

- ``canaries``: white-box gradient canaries ("Dirac canaries": Steinke, Nasr, Jagielski, "Privacy
  auditing with one (1) training run", NeurIPS 2023, Sec. 7) that ride along a DP-SGD population
  (:class:`GradientCanaries`) or PrivDPR's summed V-gradient (its own protocol,
  :class:`graphpriv.synthesis.privdpr.GradientCanary`); white-box utility canaries that shift an
  exponential mechanism's utilities by its sensitivity, one draw each (:class:`UtilityCanaries`).
  The estimator's docstring says which.
- ``noise_scale``: every calibrated noise scale of the fit (Gaussian and Laplace stds, EdgeRand's
  flip probability) times this factor while the ledger still claims the calibrated guarantee. It is
  a deliberate fault, the privacy bug an audit must catch (0.01: noise 100x too small), or 0 for
  "the same steps without noise" (the claim is then the audit's to drop). 1.0, the default, is the
  fit a user gets; no other code path sets it.
- ``observed``: white-box facts the estimator writes for the audit's notes (e.g. DPAR's q' sample
  and Pi, which a fit never keeps); empty unless an estimator documents what it writes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

from torch import Tensor

__all__ = ["AuditHook", "GradientCanaries", "UtilityCanaries", "noise_scale_of"]


class GradientCanaries(Protocol):
    """Extra examples appended to a DP-SGD population (after the N real ones) whose clipped
    gradients live on coordinates of their own: the engine samples them with the real examples,
    leaves them out of the model's gradient, and tells the canaries each step what was sampled
    and the noise std of that step (the canaries add noise of that std to their own coordinates).
    """

    def attach(self, *, group_size: int, max_grad_norm: float) -> int:
        """Called once before training with K (examples one privacy unit can change) and C;
        returns how many extra examples to append to the population."""
        ...

    def step(self, indices: Tensor, noise_std: float) -> None:
        """One DP-SGD step: ``indices`` ``[b]`` int64, the sampled extra examples (0-based among
        the extras); ``noise_std``: the std of the Gaussian noise the step adds to each model
        coordinate (``noise_scale`` included)."""
        ...


class UtilityCanaries(Protocol):
    """Canaries of an exponential mechanism: each is a worst-case neighbour of the data (one
    candidate's utility moved by the sensitivity, inserted or not by its own coin) and gets one
    draw of the same mechanism, after the estimator's own draw and independent of it."""

    def draw(self, utility: Tensor, sensitivity: float, mechanism: Any) -> None:
        """``utility`` ``[C]``: the candidates' utilities on the data; ``sensitivity``: the bound
        the mechanism is calibrated to; ``mechanism(u) -> int``: one draw on utilities ``u`` with the
        estimator's epsilon, sensitivity, generator and ``noise_scale``."""
        ...


@dataclass(frozen=True)
class AuditHook:
    """What an audit passes to ``fit(..., audit_hook=...)`` (module docstring).

    Args:
        noise_scale: factor on every calibrated noise scale (>= 0, finite; 1.0: the real fit).
        canaries: the audit's canaries (:class:`GradientCanaries` for DP-SGD estimators, a
            :class:`graphpriv.synthesis.privdpr.GradientCanary` for PrivDPR,
            :class:`UtilityCanaries` for an exponential mechanism's choice), or None.
        observed: filled by the estimator with white-box facts of the fit (module docstring).

    Raises:
        ValueError: a negative or non-finite ``noise_scale``.
    """

    noise_scale: float = 1.0
    canaries: Any = None
    observed: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        scale = self.noise_scale
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale < 0:
            raise ValueError(f"noise_scale must be a finite number >= 0 (got {scale!r})")


def noise_scale_of(hook: AuditHook | None) -> float:
    """``hook.noise_scale``, or 1.0 without a hook (the fit a user gets)."""
    return 1.0 if hook is None else float(hook.noise_scale)
