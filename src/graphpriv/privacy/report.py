"""The privacy statement every result carries."""

from __future__ import annotations

from pydantic import BaseModel, Field


class PhaseReport(BaseModel):
    """What one phase of a run spent.

    Attributes:
        name: Phase name, e.g. ``"selection"`` or ``"training"``.
        epsilon: Epsilon of this phase alone at the run's delta (accountant's value).
        events: Human-readable description of the composed events.
        noise_multiplier: The phase's noise multiplier, where it has one.
        steps: How many times the phase's event was composed.
    """

    name: str
    epsilon: float
    events: list[str] = Field(default_factory=list)
    noise_multiplier: float | None = None
    steps: int = 0


class PrivacyReport(BaseModel):
    """A run's privacy guarantee: (epsilon, delta) under a unit, a neighbouring relation, an
    accountant and a mode; built by :meth:`graphpriv.privacy.accountant.Ledger.report`.

    ``epsilon`` is the accountant's value for the composition of every phase (not the requested
    target), so it never overstates the protection.

    Attributes:
        unit: the privacy unit's value (``edge``, ``node``, ``protected_pair``).
        relation: one sentence: the unit under its neighbouring relation
            (:func:`graphpriv.privacy.units.describe_relation`).
        neighboring_relation: dp-accounting's ``NeighboringRelation`` name the accountant used
            (``ADD_OR_REMOVE_ONE`` or ``REPLACE_ONE``); None in reports written before it was recorded.
        accounting: ``rigorous`` or ``paper``. accountant: the accountant's name.
        epsilon, delta: the guarantee. target_epsilon: the budget asked for (None: none).
        phases: per-phase spending. notes: what the numbers rest on.
    """

    unit: str
    relation: str
    neighboring_relation: str | None = None
    accounting: str
    accountant: str = "rdp"
    epsilon: float
    delta: float
    target_epsilon: float | None = None
    phases: list[PhaseReport] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
