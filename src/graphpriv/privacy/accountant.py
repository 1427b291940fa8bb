"""graphpriv's one accountant: dp-accounting's RDP accountant taught the graph events.

Every noisy step is described as a ``DpEvent`` and handed to :class:`Ledger`, which composes it in
:class:`GraphRdpAccountant` and reports per-phase and total epsilon.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

import numpy as np
from dp_accounting import dp_event
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from dp_accounting.privacy_accountant import NeighboringRelation, PrivacyAccountant
from dp_accounting.rdp import rdp_privacy_accountant as rdp

from graphpriv.errors import PrivacyError, UnsupportedMechanismError
from graphpriv.privacy.analysis.binomial_group import binomial_group_gaussian_rdp
from graphpriv.privacy.analysis.hypergeometric import hypergeometric_group_gaussian_rdp
from graphpriv.privacy.events import (
    ApproxDpEvent,
    BinomialGroupGaussianDpEvent,
    EffectiveRateWorGaussianDpEvent,
    HypergeometricGroupGaussianDpEvent,
    PureDpEvent,
)
from graphpriv.privacy.report import PhaseReport, PrivacyReport
from graphpriv.privacy.units import Accounting, PrivacyUnit


class GraphRdpAccountant(rdp.RdpAccountant):
    """``dp_accounting`` RDP accountant that also composes graphpriv's graph events.

    Standard events go to the parent class unchanged (its neighbouring-relation checks included).
    :class:`HypergeometricGroupGaussianDpEvent` and :class:`BinomialGroupGaussianDpEvent` use the
    multi-term bound;
    :class:`EffectiveRateWorGaussianDpEvent` uses the WBK bound at rate rho (paper mode).

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
                self._rdp += count * hypergeometric_group_gaussian_rdp(
                    self._orders,
                    noise_multiplier=event.noise_multiplier,
                    dataset_size=event.dataset_size,
                    batch_size=event.batch_size,
                    group_size=event.group_size,
                )
            return None
        if isinstance(event, BinomialGroupGaussianDpEvent):
            if do_compose:
                self._rdp += count * binomial_group_gaussian_rdp(
                    self._orders, noise_multiplier=event.noise_multiplier, sample_rate=event.sample_rate,
                    group_size=event.group_size)
            return None
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


class Ledger:
    """Budget ledger of one run: records every event by phase and answers epsilon questions.

    Args:
        unit: The privacy unit (decides the neighbouring relation reported).
        delta: The run's delta, in (0, 1).
        accounting: Which analysis the run's events follow (``rigorous`` or ``paper``).
        neighboring_relation: Relation for standard dp-accounting events (default: add/remove).
        accountant: ``"rdp"`` (:class:`GraphRdpAccountant`, default), ``"pld"``
            (dp-accounting's PLD accountant: tight for pure-DP events such as Laplace; it does not
            know graphpriv's graph events and refuses them) or ``"basic"``
            (:class:`BasicCompositionAccountant`: sums of epsilons and deltas of
            :class:`PureDpEvent` and :class:`ApproxDpEvent`; the one accountant that takes delta = 0).

    Raises:
        PrivacyError: delta outside (0, 1) ([0, 1) for ``basic``) or an unknown accountant.
    """

    def __init__(
        self,
        unit: PrivacyUnit,
        *,
        delta: float,
        accounting: Accounting = Accounting.RIGOROUS,
        neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE,
        accountant: str = "rdp",
    ) -> None:
        if accountant not in ("rdp", "pld", "basic"):
            raise PrivacyError(f"'accountant' must be 'rdp', 'pld' or 'basic' (got {accountant!r})")
        if not (accountant == "basic" and delta == 0):
            check_delta(delta)
        self.accountant = accountant
        self.unit = PrivacyUnit(unit)
        self.delta = delta
        self.accounting = Accounting(accounting)
        self.neighboring_relation = neighboring_relation
        self._phases: OrderedDict[str, list[list]] = OrderedDict()
        self._noise: dict[str, float] = {}

    def spend(self, event: dp_event.DpEvent, *, phase: str, count: int = 1,
              noise_multiplier: float | None = None) -> None:
        """Record ``count`` compositions of ``event`` under ``phase``.

        Raises:
            UnsupportedMechanismError: the accountant cannot analyse the event (fails closed).
        """
        error = self._fresh()._maybe_compose(event, count, False)
        if error is not None:
            raise UnsupportedMechanismError(
                f"the accountant cannot compose {describe_event(error.invalid_event)}: "
                f"{error.error_message}"
            )
        entries = self._phases.setdefault(phase, [])
        if entries and entries[-1][0] == event:
            entries[-1][1] += count
        else:
            entries.append([event, count])
        if noise_multiplier is not None:
            self._noise[phase] = noise_multiplier

    @property
    def phases(self) -> list[str]:
        """Names of the phases that spent budget so far, in order."""
        return list(self._phases)

    def _fresh(self) -> PrivacyAccountant:
        if self.accountant == "pld":
            return PLDAccountant(neighboring_relation=self.neighboring_relation)
        if self.accountant == "basic":
            return BasicCompositionAccountant(self.neighboring_relation)
        return GraphRdpAccountant(neighboring_relation=self.neighboring_relation)

    def _epsilon_of(self, entries: Iterable[list], delta: float) -> float:
        accountant = self._fresh()
        for event, count in entries:
            accountant.compose(event, count)
        return float(accountant.get_epsilon(delta))

    def epsilon(self, delta: float | None = None, *, phase: str | None = None) -> float:
        """Epsilon spent so far (total, or one phase's), at ``delta`` (default: the run's)."""
        delta = self.delta if delta is None else (0.0 if self.accountant == "basic" and delta == 0 else check_delta(delta))
        if phase is not None:
            return self._epsilon_of(self._phases.get(phase, []), delta)
        return self._epsilon_of([e for es in self._phases.values() for e in es], delta)

    def report(self, *, target_epsilon: float | None = None, notes: list[str] | None = None) -> PrivacyReport:
        """The run's :class:`PrivacyReport` (accountant's epsilon, per phase and total)."""
        phases = [
            PhaseReport(
                name=name,
                epsilon=self._epsilon_of(entries, self.delta),
                events=[f"{describe_event(e)} x {c}" for e, c in entries],
                noise_multiplier=self._noise.get(name),
                steps=int(sum(c for _, c in entries)),
            )
            for name, entries in self._phases.items()
        ]
        return PrivacyReport(
            unit=self.unit.value,
            relation=self.unit.description,
            accounting=self.accounting.value,
            accountant=self.accountant,
            epsilon=self.epsilon(),
            delta=self.delta,
            target_epsilon=target_epsilon,
            phases=phases,
            notes=list(notes or []),
        )


#: The largest epsilon a user may ask for (checked where a user's epsilon enters: method configs and
#: audits; budgets derived from it, e.g. eps / q' of DPAR's paper accounting, may exceed it): e^100
#: bounds nothing a user could want, and the PLD accountant's grid for a Laplace event grows with
#: epsilon (at 1e9 it asked for 1.46 TiB).
MAX_EPSILON = 100.0


def check_epsilon(epsilon: float) -> float:
    """Return ``epsilon`` if it is a finite number > 0, else raise :class:`PrivacyError`."""
    if not (isinstance(epsilon, (int, float)) and np.isfinite(epsilon) and epsilon > 0):
        raise PrivacyError(f"'epsilon' must be a finite number > 0 (got {epsilon!r})")
    return float(epsilon)


def check_delta(delta: float) -> float:
    """Return ``delta`` if it lies in (0, 1), else raise :class:`PrivacyError`."""
    if not (isinstance(delta, (int, float)) and 0 < delta < 1):
        raise PrivacyError(f"'delta' must be in the open interval (0, 1) (got {delta!r})")
    return float(delta)
