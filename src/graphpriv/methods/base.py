"""What every method returns, and the small protocol methods share."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from graphpriv.errors import ConfigError
from graphpriv.privacy.report import PrivacyReport
from graphpriv.progress import Progress, no_progress, phase_progress  # noqa: F401 (re-exported: methods and protocols take them from here)


class MethodConfig(BaseModel):
    """Base of every method's hyperparameters: unknown keys are errors, values are validated.

    ``accounting="reference"`` (a released code's protocol and noise) is refused by every config
    but those that set ``reference_accounting`` (DPLP-rank's)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, use_enum_values=False)
    reference_accounting: ClassVar[bool] = False

    @model_validator(mode="after")
    def _reference_only_where_implemented(self) -> MethodConfig:
        if getattr(self, "accounting", None) == "reference" and not self.reference_accounting:
            raise ConfigError(f"accounting='reference' (a released code's protocol and noise) exists for DPLP-rank "
                              f"only; {type(self).__name__} takes 'rigorous' or 'paper'")
        return self


#: Margin below which a run and its baseline tie (metrics are shares or AUCs in [0, 1]).
TIE = 1e-6


class Baseline(BaseModel):
    """The trivial baseline of a run's task, measured in the same run on the same split.

    The trivial baselines: the majority class (node classification), common neighbours on the
    training graph (link prediction; not private itself), chance (ranking AUC@K, attack AUC, a
    synthetic graph's link-prediction AUC) and the input graph (publishing: its attack AUC is
    what an unprotected release gives, its utility what a release gives up).

    Attributes:
        name: e.g. ``"majority class"``, ``"common neighbours"``, ``"chance"``, ``"input graph"``.
        metric: the run's metric it is compared with (a key of ``Result.metrics``).
        value: the baseline's value of that metric (same units: a fraction for accuracies and AUCs).
        better: ``"higher"``: the run beats the baseline with a larger value (accuracy, AUC);
            ``"lower"``: with a smaller one (an attack's AUC on a release, against the input
            graph's); ``"reference"``: shown beside the run, never beaten or missed (the input
            graph's utility, the ceiling of a release).
        note: one sentence the reader needs (e.g. that the heuristic is not private).
    """

    name: str
    metric: str
    value: float
    better: Literal["higher", "lower", "reference"] = "higher"
    note: str = ""

    def beaten_by(self, value: float) -> bool | None:
        """Whether a run's ``value`` of :attr:`metric` beats the baseline by more than
        :data:`TIE` (a float32 and a float64 computation of the same share differ by about 1e-8:
        a tie is not a win); ``None`` for a reference or when either value is NaN."""
        if self.better == "reference" or math.isnan(value) or math.isnan(self.value):
            return None
        return value > self.value + TIE if self.better == "higher" else value < self.value - TIE


class Result(BaseModel):
    """A finished run: what was run, what it measured, and the privacy it spent.

    Attributes:
        method, dataset, seed: what ran. config: all hyperparameters.
        metrics: e.g. ``{"test_auc": 0.93}``. privacy: the :class:`PrivacyReport` (``None`` for a
            non-private method, which ``privacy_statement`` then says).
        timings: seconds per phase and ``total``. info: method-specific facts (bounds, sizes).
        baselines: the task's trivial baselines on the same split (:class:`Baseline`; the
            protocols of :mod:`graphpriv.evaluation` fill them). release: see :attr:`release`.
    """

    method: str
    dataset: str
    seed: int
    config: dict[str, Any]
    metrics: dict[str, float]
    privacy: PrivacyReport | None = None
    timings: dict[str, float] = Field(default_factory=dict)
    info: dict[str, Any] = Field(default_factory=dict)
    baselines: list[Baseline] = Field(default_factory=list)
    _release: Any = PrivateAttr(default=None)
    _estimator: Any = PrivateAttr(default=None)

    @property
    def release(self) -> Any:
        """What the run released, when it is more than numbers: e.g. the published graph
        (:class:`~graphpriv.attacks.graph.PublishedGraph`) of a graph-publishing method. Not
        stored in the results database; ``graphpriv run ... --out FILE`` writes it."""
        return self._release

    def with_release(self, release: Any) -> Result:
        """Attach the released object; returns ``self``."""
        self._release = release
        return self

    @property
    def estimator(self) -> Any:
        """The fitted estimator the run trained (``graphpriv run ... --save FILE`` writes it), or
        ``None``; like :attr:`release`, not stored in the results database."""
        return self._estimator

    def with_estimator(self, estimator: Any) -> Result:
        """Attach the fitted estimator; returns ``self``."""
        self._estimator = estimator
        return self

    def with_baselines(self, baselines: list[Baseline]) -> Result:
        """Attach the trivial baselines measured on the run's split; returns ``self``."""
        self.baselines = list(baselines)
        return self

    def baseline_warnings(self) -> list[str]:
        """One sentence per baseline the run does not beat (empty when it beats them all, or has
        none): e.g. ``"accuracy 0.149 does not beat the majority class (0.289)"``."""
        out = []
        for baseline in self.baselines:
            value = self.metrics.get(baseline.metric)
            if value is not None and baseline.beaten_by(value) is False:
                side = "above" if baseline.better == "higher" else "below"
                out.append(f"{baseline.metric} {value:.4g} is not {side} the {baseline.name} ({baseline.value:.4g})"
                           + (f": {baseline.note}" if baseline.note else ""))
        return out

    @property
    def privacy_statement(self) -> str:
        """One line: the guarantee, or that there is none."""
        if self.privacy is None:
            return "non-private: no differential-privacy guarantee"
        p = self.privacy
        return f"({p.epsilon:.4f}, {p.delta:g})-DP, {p.unit}-level, {p.accounting} accounting"


class Timer:
    """Accumulates wall time per named phase."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._start = time.perf_counter()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the enclosed block under ``name``."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t0

    def merge(self, timings: dict[str, float]) -> None:
        """Add another timer's seconds per phase (e.g. an estimator's ``timings_``) to this one's."""
        for name, seconds in timings.items():
            self.timings[name] = self.timings.get(name, 0.0) + seconds

    def finish(self) -> dict[str, float]:
        """The timings with ``total`` added."""
        return {**self.timings, "total": time.perf_counter() - self._start}


RunFn = Callable[..., Result]
