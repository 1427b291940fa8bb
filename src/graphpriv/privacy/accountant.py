"""graphpriv's one accountant: dp-accounting's RDP accountant taught the graph events, and the Ledger.

Every noisy step is described as a ``DpEvent`` and handed to :class:`Ledger`, which composes it in
:class:`GraphRdpAccountant` (or the PLD, basic-composition or phase-wise accountant it was built
with) and alone builds the run's :class:`~graphpriv.privacy.report.PrivacyReport`: per-phase and
total epsilon, the unit and its neighbouring relation, the accounting mode.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Iterable

import numpy as np
from dp_accounting import dp_event
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from dp_accounting.privacy_accountant import NeighboringRelation, PrivacyAccountant
from dp_accounting.rdp import rdp_privacy_accountant as rdp

from graphpriv.errors import PrivacyError, UnsupportedMechanismError
from graphpriv.privacy.analysis.binomial_group import binomial_group_gaussian_rdp
from graphpriv.privacy.analysis.hypergeometric import hypergeometric_group_gaussian_rdp
from graphpriv.privacy.analysis.top_k import amplified_by_subsampling
from graphpriv.privacy.composition import RowCompositionAccountant
from graphpriv.privacy.events import (
    ApproxDpEvent,
    BinomialGroupGaussianDpEvent,
    EffectiveRateWorGaussianDpEvent,
    GaussianRowDpEvent,
    HypergeometricGroupGaussianDpEvent,
    PureDpEvent,
)
from graphpriv.privacy.limits import MAX_EPSILON, check_delta, check_epsilon  # noqa: F401 (re-exported; they live there)
from graphpriv.privacy.report import PhaseReport, PrivacyReport
from graphpriv.privacy.units import Accounting, PrivacyUnit, describe_relation


def _memoised(rdp_of_step: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """``rdp_of_step(orders, **params)`` memoised on its arguments (``orders`` as a tuple): the
    per-step RDP vector is a pure function of them, and a calibration's bisection, the ledger that
    spends its result and every seed of the same setting in a process ask for the same vectors
    (the Poisson-subsampled Gaussian's fractional orders are slow: a DP-MLP calibration takes 3 s
    uncached and 0.008 s warm, ``benchmarks/bench_calibration.py``). The vectors are returned
    read-only; composing adds ``count * vector`` to a new array. Parameters that cannot be hashed
    (a 0-d numpy array a caller put in an event) are computed afresh, as before the cache."""
    def compute(orders: tuple[float, ...] | np.ndarray, **params: float) -> np.ndarray:
        return np.asarray(rdp_of_step(np.asarray(orders, dtype=float), **params), dtype=float)

    @functools.lru_cache(maxsize=4096)
    def cached(orders: tuple[float, ...], **params: float) -> np.ndarray:
        vector = compute(orders, **params)
        vector.setflags(write=False)
        return vector

    def lookup(orders: np.ndarray, **params: float) -> np.ndarray:
        key = tuple(orders.tolist())
        key = _ORDERS.setdefault(key, key)  # one tuple per order list, shared by every entry
        try:
            return cached(key, **params)
        except TypeError:  # unhashable parameters
            return compute(orders, **params)
    lookup.cache_info, lookup.cache_clear = cached.cache_info, cached.cache_clear
    return lookup


#: the order lists seen, each kept once (a key tuple of 156 floats per cached vector would cost
#: ~5 KB an entry)
_ORDERS: dict[tuple[float, ...], tuple[float, ...]] = {}


_poisson_gaussian_rdp = _memoised(lambda orders, *, q, noise_multiplier: rdp._compute_rdp_poisson_subsampled_gaussian(
    q=q, noise_multiplier=noise_multiplier, orders=orders))
_hypergeometric_rdp = _memoised(hypergeometric_group_gaussian_rdp)
_binomial_group_rdp = _memoised(binomial_group_gaussian_rdp)


class GraphRdpAccountant(rdp.RdpAccountant):
    """``dp_accounting`` RDP accountant that also composes graphpriv's graph events.

    Standard events go to the parent class unchanged (its neighbouring-relation checks included).
    :class:`HypergeometricGroupGaussianDpEvent` and :class:`BinomialGroupGaussianDpEvent` use the
    multi-term bound;
    :class:`EffectiveRateWorGaussianDpEvent` uses the WBK bound at rate rho (paper mode);
    :class:`GaussianRowDpEvent` is ``GaussianDpEvent(noise_std / (2 l2_clip))`` (one node moves a
    row clipped to C1 anywhere in the ball: sensitivity 2 C1).

    Args:
        orders: RDP orders (default: dp-accounting's defaults).
        neighboring_relation: Relation for the standard events.
    """

    def __init__(
        self,
        orders: Iterable[float] | None = None,
        neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE,
    ) -> None:
        super().__init__(None if orders is None else list(orders), neighboring_relation)

    def _maybe_compose(
        self, event: dp_event.DpEvent, count: int, do_compose: bool
    ) -> PrivacyAccountant.CompositionErrorDetails | None:
        if isinstance(event, HypergeometricGroupGaussianDpEvent):
            if do_compose:
                self._rdp += count * _hypergeometric_rdp(
                    self._orders,
                    noise_multiplier=event.noise_multiplier,
                    dataset_size=event.dataset_size,
                    batch_size=event.batch_size,
                    group_size=event.group_size,
                )
            return None
        if isinstance(event, BinomialGroupGaussianDpEvent):
            if do_compose:
                self._rdp += count * _binomial_group_rdp(
                    self._orders, noise_multiplier=event.noise_multiplier, sample_rate=event.sample_rate,
                    group_size=event.group_size)
            return None
        if isinstance(event, GaussianRowDpEvent):  # L2 sensitivity 2 C1 (add/remove one node)
            return super()._maybe_compose(dp_event.GaussianDpEvent(event.noise_std / (2 * event.l2_clip)), count,
                                          do_compose)
        if isinstance(event, EffectiveRateWorGaussianDpEvent):
            if do_compose:
                self._rdp += count * rdp._compute_rdp_sample_wor_gaussian(
                    q=event.sampling_rate,
                    noise_multiplier=event.noise_multiplier,
                    orders=self._orders,
                )
            return None
        if isinstance(event, PureDpEvent):
            if not event.epsilon > 0:
                return PrivacyAccountant.CompositionErrorDetails(
                    invalid_event=event, error_message=f"epsilon must be > 0, got {event.epsilon}"
                )
            if do_compose:
                self._rdp += count * np.minimum(event.epsilon, self._orders * event.epsilon**2 / 2)
            return None
        if (isinstance(event, dp_event.PoissonSampledDpEvent) and isinstance(event.event, dp_event.GaussianDpEvent)
                and self._neighboring_relation in (NeighboringRelation.ADD_OR_REMOVE_ONE,
                                                   NeighboringRelation.REPLACE_SPECIAL)):
            # the parent's own computation for this event, memoised (its checks: the relations it
            # accepts, a Gaussian sub-event; anything else goes to the parent below)
            if do_compose:
                self._rdp += count * _poisson_gaussian_rdp(self._orders, q=event.sampling_probability,
                                                           noise_multiplier=event.event.noise_multiplier)
            return None
        # composed events recurse through the parent, which calls this override for each part
        return super()._maybe_compose(event, count, do_compose)


class BasicCompositionAccountant(PrivacyAccountant):
    """Basic (sequential) composition: epsilons add up, deltas add up.

    Composes :class:`PureDpEvent` (delta 0) and :class:`ApproxDpEvent`, also inside
    ``ComposedDpEvent`` / ``SelfComposedDpEvent``; any other event is refused. k mechanisms that
    are (eps_i, delta_i)-DP are (sum eps_i, sum delta_i)-DP (Dwork & Roth, "The algorithmic
    foundations of differential privacy", 2014, Thm. 3.16). It is the accounting of DPLP-rank's
    K-draw lists (De & Chakrabarti, AAAI 2021, Prop. 4: K eps_p, pure) and of PrivDPR's paper mode
    (T Gaussian steps of (eps/T, delta/T) each).

    Args:
        neighboring_relation: recorded only; basic composition is the same under any relation.
    """

    def __init__(self, neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE) -> None:
        super().__init__(neighboring_relation)
        self._epsilon = 0.0
        self._delta = 0.0

    def _maybe_compose(self, event: dp_event.DpEvent, count: int,
                       do_compose: bool) -> PrivacyAccountant.CompositionErrorDetails | None:
        if isinstance(event, dp_event.NoOpDpEvent):
            return None
        if isinstance(event, (PureDpEvent, ApproxDpEvent)):
            delta = getattr(event, "delta", 0.0)
            if not (np.isfinite(event.epsilon) and event.epsilon > 0 and 0 <= delta < 1):
                return PrivacyAccountant.CompositionErrorDetails(
                    invalid_event=event, error_message=f"need epsilon > 0 and delta in [0, 1), got {event}")
            if do_compose:
                self._epsilon += count * event.epsilon
                self._delta += count * delta
            return None
        if isinstance(event, dp_event.SelfComposedDpEvent):
            return self._maybe_compose(event.event, count * event.count, do_compose)
        if isinstance(event, dp_event.ComposedDpEvent):
            for part in event.events:
                error = self._maybe_compose(part, count, do_compose)
                if error is not None:
                    return error
            return None
        return PrivacyAccountant.CompositionErrorDetails(
            invalid_event=event, error_message="basic composition only composes PureDpEvent and ApproxDpEvent")

    def get_epsilon(self, target_delta: float) -> float:
        """The summed epsilon when ``target_delta`` covers the summed delta, else inf."""
        if target_delta < 0:
            raise PrivacyError(f"'target_delta' must be >= 0 (got {target_delta})")
        return self._epsilon if target_delta >= self._delta * (1 - 1e-12) else float("inf")

    def get_delta(self, target_epsilon: float) -> float:
        """The summed delta when ``target_epsilon`` covers the summed epsilon, else 1."""
        return self._delta if target_epsilon >= self._epsilon else 1.0


def describe_event(event: dp_event.DpEvent) -> str:
    """A short, human-readable description of an event for reports."""
    return repr(event).replace("DpEvent", "")


#: The accountants a :class:`Ledger` composes with, and the name its report states for each.
ACCOUNTANTS = {"rdp": "rdp", "pld": "pld", "basic": "basic", "phases": "rdp + (eps, delta) composition"}


def unit_sampled(epsilon: float, inner_delta: float, rate: float,
                 accounting: Accounting = Accounting.RIGOROUS) -> tuple[float, float]:
    """(epsilon, delta) of a run whose units were Poisson-sampled at ``rate`` q before an
    (``epsilon``, ``inner_delta``)-DP mechanism ran on the sample: amplification by subsampling
    (ln(1 + q (e^eps - 1)), q delta) under ``rigorous`` accounting (Balle, Barthe & Gaboardi,
    "Privacy amplification by subsampling", NeurIPS 2018, Thm. 9), or the linear (q eps, q delta)
    under ``paper`` accounting (the DPAR paper's analysis, Sec. 3.2: not a bound)."""
    if Accounting(accounting) is Accounting.PAPER:
        return rate * epsilon, rate * inner_delta
    return amplified_by_subsampling(epsilon, inner_delta, rate)


class Ledger:
    """Budget ledger of one run: records every event by phase, answers epsilon questions, and
    alone builds the run's :class:`PrivacyReport`.

    The ``accountant`` decides how the recorded events compose:

    - ``"rdp"`` (default): every event of every phase in one :class:`GraphRdpAccountant`;
    - ``"pld"``: dp-accounting's PLD accountant (tight for pure-DP events such as Laplace; it does
      not know graphpriv's graph events and refuses them);
    - ``"basic"``: :class:`BasicCompositionAccountant` (sums of epsilons and deltas of
      :class:`PureDpEvent` and :class:`ApproxDpEvent`; the one accountant that takes delta = 0);
    - ``"phases"``: (epsilon, delta) composition of phases, for runs whose phases are analysed
      apart (DPAR): the units are first Poisson-sampled with rate q = ``unit_sampling_rate``; each of
      the n phases gets delta / (q n) and is composed alone, by
      :class:`~graphpriv.privacy.composition.RowCompositionAccountant` when that accepts its events
      (released rows) and by :class:`GraphRdpAccountant` otherwise; the phase epsilons add (basic
      composition: Dwork & Roth, "The algorithmic foundations of differential privacy", 2014,
      Thm. 3.16); the sum is amplified by the sampling to (ln(1 + q (e^eps - 1)), q delta) (Balle,
      Barthe & Gaboardi, "Privacy amplification by subsampling", NeurIPS 2018, Thm. 9) under
      ``rigorous`` accounting, or scaled linearly to (q eps, q delta) under ``paper`` accounting
      (the DPAR paper's analysis, Zhang et al., WWW 2024, Sec. 3.2: not a bound).

    Args:
        unit: The privacy unit.
        delta: The run's delta, in (0, 1) ([0, 1) for ``basic``); ``phases``: delta / q < 1 too.
        accounting: Which analysis the run's events follow (``rigorous`` or ``paper``).
        neighboring_relation: dp-accounting's relation the run is analysed under; None (default):
            the unit's own (:attr:`PrivacyUnit.relation`). Passed to the accountant (whose
            checks refuse an event it cannot analyse under it) and stated in the report.
        accountant: ``"rdp"``, ``"pld"``, ``"basic"`` or ``"phases"`` (above).
        unit_sampling_rate: q in (0, 1], the Poisson sampling of the units before the run
            (``phases`` only; 1.0: no sampling).

    Raises:
        PrivacyError: delta outside its range, an unknown accountant, a (unit, relation) pair
            graphpriv does not analyse, or a unit sampling rate outside (0, 1] or with another
            accountant than ``phases``.
    """

    def __init__(
        self,
        unit: PrivacyUnit,
        *,
        delta: float,
        accounting: Accounting = Accounting.RIGOROUS,
        neighboring_relation: NeighboringRelation | None = None,
        accountant: str = "rdp",
        unit_sampling_rate: float = 1.0,
    ) -> None:
        if accountant not in ACCOUNTANTS:
            raise PrivacyError(f"'accountant' must be one of {', '.join(map(repr, ACCOUNTANTS))} (got {accountant!r})")
        if not (accountant == "basic" and delta == 0):
            check_delta(delta)
        if not (isinstance(unit_sampling_rate, (int, float)) and 0 < unit_sampling_rate <= 1):
            raise PrivacyError(f"'unit_sampling_rate' must be in (0, 1] (got {unit_sampling_rate!r})")
        if unit_sampling_rate != 1 and accountant != "phases":
            raise PrivacyError("a unit sampling rate is amplified by the 'phases' accountant only "
                               f"(got accountant={accountant!r})")
        self.accountant = accountant
        self.unit = PrivacyUnit(unit)
        self.neighboring_relation = self.unit.relation if neighboring_relation is None else neighboring_relation
        self.relation = describe_relation(self.unit, self.neighboring_relation)
        self.accounting = Accounting(accounting)
        self.unit_sampling_rate = float(unit_sampling_rate)
        self.delta = delta
        if accountant == "phases":
            self._inner_delta(delta)
        self._phases: OrderedDict[str, list[list]] = OrderedDict()  # phase -> [[event, count, label], ...]
        self._noise: dict[str, float] = {}

    def spend(self, event: dp_event.DpEvent, *, phase: str, count: int = 1,
              noise_multiplier: float | None = None, label: str | None = None) -> None:
        """Record ``count`` compositions of ``event`` under ``phase``.

        Args:
            event: the step's event. phase: its phase's name. count: compositions (>= 1).
            noise_multiplier: the phase's noise multiplier, for the report.
            label: how the report names the event (default: the event's repr); consecutive spends
                of the same event and label merge into one ``"<label> x <count>"`` line.

        Raises:
            UnsupportedMechanismError: the accountant cannot analyse the event (fails closed).
        """
        entries = self._phases.get(phase, [])
        error = self._fresh(entries[0][0] if entries else event)._maybe_compose(event, count, False)
        if error is not None:
            raise UnsupportedMechanismError(
                f"the accountant cannot compose {describe_event(error.invalid_event)}: "
                f"{error.error_message}"
            )
        entries = self._phases.setdefault(phase, [])
        if entries and entries[-1][0] == event and entries[-1][2] == label:
            entries[-1][1] += count
        else:
            entries.append([event, count, label])
        if noise_multiplier is not None:
            self._noise[phase] = noise_multiplier

    @property
    def phases(self) -> list[str]:
        """Names of the phases that spent budget so far, in order."""
        return list(self._phases)

    def _fresh(self, first: dp_event.DpEvent | None = None) -> PrivacyAccountant:
        """A new accountant for a phase whose first event is ``first`` (``phases``), or for the run."""
        relation = self.neighboring_relation
        if self.accountant == "pld":
            return PLDAccountant(neighboring_relation=relation)
        if self.accountant == "basic":
            return BasicCompositionAccountant(relation)
        if self.accountant == "phases" and first is not None:
            rows = RowCompositionAccountant(self.accounting, relation)
            if rows.supports(first):
                return rows
        return GraphRdpAccountant(neighboring_relation=relation)

    def _epsilon_of(self, entries: list[list], delta: float) -> float:
        accountant = self._fresh(entries[0][0] if entries else None)
        for event, count, _ in entries:
            accountant.compose(event, count)
        return float(accountant.get_epsilon(delta))

    def _inner_delta(self, delta: float) -> float:
        """delta / q, the delta inside the unit sample (``phases``); PrivacyError unless < 1."""
        inner = delta / self.unit_sampling_rate
        if not inner < 1:
            raise PrivacyError(f"delta / q = {delta:g} / {self.unit_sampling_rate:g} = {inner:g} >= 1: the q unit "
                               "sample spends delta / q inside it, which must stay below 1; lower delta or raise q")
        return inner

    def _phase_delta(self, delta: float) -> float:
        """The delta each phase is composed at: delta (one accountant for the run), or delta / (q n)."""
        if self.accountant != "phases":
            return delta
        return self._inner_delta(delta) / max(1, len(self._phases))

    def _total(self, delta: float) -> tuple[float, float]:
        """(epsilon, delta) of the whole run at ``delta``."""
        if self.accountant != "phases":
            return self._epsilon_of([e for es in self._phases.values() for e in es], delta), delta
        inner = self._inner_delta(delta)
        share = self._phase_delta(delta)
        epsilon = sum(self._epsilon_of(entries, share) for entries in self._phases.values())
        return unit_sampled(epsilon, inner, self.unit_sampling_rate, self.accounting)

    def epsilon(self, delta: float | None = None, *, phase: str | None = None) -> float:
        """Epsilon spent so far at ``delta`` (default: the run's): the run's total, or one phase's
        alone (``phases``: at its share delta / (q n), before the amplification).

        Raises:
            PrivacyError: a bad delta (``phases``: also delta / q >= 1).
        """
        delta = self.delta if delta is None else (0.0 if self.accountant == "basic" and delta == 0 else check_delta(delta))
        if phase is not None:
            return self._epsilon_of(self._phases.get(phase, []), self._phase_delta(delta))
        return self._total(delta)[0]

    def report(self, *, target_epsilon: float | None = None, notes: list[str] | None = None) -> PrivacyReport:
        """The run's :class:`PrivacyReport`: the accountant's epsilon per phase (each at the delta
        it is composed at) and in total, at the run's delta; the unit and its neighbouring relation;
        ``notes`` as given (the report is complete when built: nothing edits it afterwards)."""
        share = self._phase_delta(self.delta)
        phases = [
            PhaseReport(
                name=name,
                epsilon=self._epsilon_of(entries, share),
                events=[f"{describe_event(e) if label is None else label} x {c}" for e, c, label in entries],
                noise_multiplier=self._noise.get(name),
                steps=int(sum(c for _, c, _ in entries)),
            )
            for name, entries in self._phases.items()
        ]
        epsilon, delta = self._total(self.delta)
        return PrivacyReport(
            unit=self.unit.value,
            relation=self.relation,
            neighboring_relation=self.neighboring_relation.name,
            accounting=self.accounting.value,
            accountant=ACCOUNTANTS[self.accountant],
            epsilon=epsilon,
            delta=delta,
            target_epsilon=target_epsilon,
            phases=phases,
            notes=list(notes or []),
        )
