"""How a long step reports how far it is: the :class:`Progress` callback and its helpers.

Every layer takes one (training loops, subgraph extraction, attacks, evaluation, generation,
audits); the command line draws it as Rich progress bars, one per phase. It lives on the lowest
floor so that any module may take one without importing a layer above it.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Progress", "no_progress", "phase_progress", "prefixed_progress"]


class Progress(Protocol):
    """Callback a method reports progress to: ``progress(done, total, **info)``.

    ``done`` of ``total`` steps (epochs, batches, attacks, rows); ``info`` holds numbers to show
    (e.g. ``loss=0.31``) and, for a phase other than training, ``phase="attacks"`` (a ``str``):
    the command line gives each phase its own bar (:func:`phase_progress` adds the name).
    """

    def __call__(self, done: int, total: int, **info: float) -> None: ...


def no_progress(done: int, total: int, **info: float) -> None:
    """A :class:`Progress` that does nothing."""


def phase_progress(progress: Progress | None, phase: str) -> Progress:
    """``progress`` with every report named ``phase`` (``progress(done, total, phase=phase, **info)``):
    what a protocol hands to a long step that is not training (extraction, attacks, evaluation,
    generation, audits). ``None`` gives :func:`no_progress`."""
    if progress is None or progress is no_progress:
        return no_progress

    def report(done: int, total: int, **info: float) -> None:
        progress(done, total, **{**info, "phase": phase})

    return report


def prefixed_progress(progress: Progress | None, prefix: str) -> Progress:
    """``progress`` with each report's phase named ``"<prefix> <phase>"`` (``"<prefix> training"``
    for a report without one): the same steps run a second time for another purpose, e.g. the
    attacks on the input graph as a publishing run's baseline. ``None`` gives :func:`no_progress`."""
    if progress is None or progress is no_progress:
        return no_progress

    def report(done: int, total: int, **info: float) -> None:
        progress(done, total, **{**info, "phase": f"{prefix} {info.get('phase', 'training')}"})

    return report
