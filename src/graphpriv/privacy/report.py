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
    """A run's privacy guarantee: (epsilon, delta) under a unit, an accountant and a mode.

    ``epsilon`` is the accountant's value for the composition of every phase (not the requested
    target), so it never overstates the protection.
    """

    unit: str
    relation: str
    accounting: str
    accountant: str = "rdp"
    epsilon: float
    delta: float
    target_epsilon: float | None = None
    phases: list[PhaseReport] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
