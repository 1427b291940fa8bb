"""(epsilon, delta) composition of released rows: the accountant of DPAR's DP-APPR phase.

:class:`RowCompositionAccountant` composes M copies of one row event
(:class:`~graphpriv.privacy.events.TopKRowDpEvent`, or in ``paper`` accounting
:class:`~graphpriv.privacy.events.GaussianRowDpEvent`) at a target delta, each row at
delta_row = delta / (2M). The :class:`~graphpriv.privacy.accountant.Ledger` with ``accountant="phases"``
uses it for a phase of such rows and :class:`~graphpriv.privacy.accountant.GraphRdpAccountant`
for every other phase.

Sources: Durfee & Rogers, "Practical differentially private top-k selection with pay-what-you-get
composition" (NeurIPS 2019), Theorem 1; Dwork, Rothblum & Vadhan, "Boosting and differential
privacy" (FOCS 2010), Thm. III.3; Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural
Networks with Node-Level Differential Privacy" (WWW 2024), Sec. 3.1 and Theorem 1.
"""

from __future__ import annotations

import math

from dp_accounting import dp_event
from dp_accounting.privacy_accountant import NeighboringRelation, PrivacyAccountant

from graphpriv.errors import PrivacyError
from graphpriv.privacy.analysis.row_composition import paper_rows_epsilon
from graphpriv.privacy.analysis.top_k import compose_approx_dp, one_shot_top_k_epsilon
from graphpriv.privacy.events import GaussianRowDpEvent, TopKRowDpEvent
from graphpriv.privacy.units import Accounting

__all__ = ["RowCompositionAccountant", "row_epsilon"]


def row_epsilon(event: TopKRowDpEvent | GaussianRowDpEvent, row_delta: float) -> float:
    """The epsilon of one row at ``row_delta``.

    ``TopKRowDpEvent``: the one-shot top-K bound eps'(row_delta), doubled when ``values`` (the K
    Laplace values spend as much again). ``GaussianRowDpEvent``: the classical Gaussian mechanism at
    the DPAR paper's sensitivity C1, sqrt(2 ln(1.25 / row_delta)) C1 / noise_std (``paper`` only).

    Args:
        event: one row's event. row_delta: in (0, 1).

    Returns:
        eps_row (float, > 0).

    Raises:
        TypeError: another event.

    Source: Durfee & Rogers (NeurIPS 2019), Theorem 1 (top-K); Dwork & Roth (2014), Thm. A.1
    (the classical Gaussian mechanism); relation: the row mechanism's (DPAR: node add/remove).
    """
    if isinstance(event, TopKRowDpEvent):
        per_row = one_shot_top_k_epsilon(event.round_epsilon, event.k, row_delta)
        if event.values:
            per_row *= 2  # the K values get the selection's eps' (the authors' default)
        return per_row
    if isinstance(event, GaussianRowDpEvent):
        return math.sqrt(2 * math.log(1.25 / row_delta)) * event.l2_clip / event.noise_std
    raise TypeError(f"row_epsilon takes a TopKRowDpEvent or a GaussianRowDpEvent (got {type(event).__name__})")


class RowCompositionAccountant(PrivacyAccountant):
    """(epsilon, delta) composition of M copies of one released row (DPAR's DP-APPR phase).

    Composes :class:`TopKRowDpEvent` (both modes) and, in ``paper`` accounting,
    :class:`GaussianRowDpEvent` (rigorous Gaussian rows compose in RDP:
    :class:`~graphpriv.privacy.accountant.GraphRdpAccountant`), also inside
    ``SelfComposedDpEvent``; every composed row must be the same event. At ``target_delta`` each of
    the M rows spends delta_row = target_delta / (2M) (:func:`row_epsilon`), and:

    - ``rigorous``: the rows compose by the best of basic, advanced and PLD composition
      (:func:`graphpriv.privacy.analysis.top_k.compose_approx_dp`), the slack target_delta / 2;
    - ``paper``: by the DPAR paper's Theorem 1
      (:func:`graphpriv.privacy.analysis.row_composition.paper_rows_epsilon`), not a proven bound.

    Privacy: the relation is the row mechanism's (DPAR: node-level add/remove); it is recorded only.

    Args:
        accounting: ``rigorous`` or ``paper``. neighboring_relation: recorded (default add/remove).

    Raises:
        ValueError: an unknown accounting mode.

    Source: the module docstring's (Durfee & Rogers; Dwork, Rothblum & Vadhan; DPAR, Theorem 1).
    """

    def __init__(self, accounting: Accounting = Accounting.RIGOROUS,
                 neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE) -> None:
        super().__init__(neighboring_relation)
        self.accounting = Accounting(accounting)
        self._row: dp_event.DpEvent | None = None
        self._count = 0

    def _maybe_compose(self, event: dp_event.DpEvent, count: int,
                       do_compose: bool) -> PrivacyAccountant.CompositionErrorDetails | None:
        if isinstance(event, dp_event.NoOpDpEvent):
            return None
        if isinstance(event, dp_event.SelfComposedDpEvent):
            return self._maybe_compose(event.event, count * event.count, do_compose)
        rows = (TopKRowDpEvent, GaussianRowDpEvent) if self.accounting is Accounting.PAPER else (TopKRowDpEvent,)
        if not isinstance(event, rows):
            return PrivacyAccountant.CompositionErrorDetails(
                invalid_event=event, error_message="row composition composes TopKRowDpEvent (and, in paper "
                                                   "accounting, GaussianRowDpEvent) only")
        if self._row is not None and event != self._row:
            return PrivacyAccountant.CompositionErrorDetails(
                invalid_event=event, error_message=f"one kind of row per accountant (already {self._row}): each "
                                                   "row's delta is delta / (2M) for M equal rows")
        if do_compose:
            self._row = event
            self._count += count
        return None

    def get_epsilon(self, target_delta: float) -> float:
        """Epsilon of the composed rows at ``target_delta`` (0.0 before any row).

        Raises:
            PrivacyError: ``target_delta`` outside (0, 1).
        """
        if not 0 < target_delta < 1:
            raise PrivacyError(f"'target_delta' must be in (0, 1) (got {target_delta})")
        if self._row is None or self._count == 0:
            return 0.0
        rows = self._count
        row_delta = target_delta / (2 * rows)
        per_row = row_epsilon(self._row, row_delta)
        if self.accounting is Accounting.PAPER:
            return paper_rows_epsilon(per_row, rows, target_delta)
        return compose_approx_dp(per_row, row_delta, rows, target_delta=target_delta)[0]
