"""Privacy units (what one individual is) and accounting modes."""

from __future__ import annotations

import enum


class PrivacyUnit(str, enum.Enum):
    """What a neighbouring dataset differs by.

    ``EDGE``: add or remove one edge (edge-level DP). ``NODE``: add or remove one node with all its
    edges. ``PROTECTED_PAIR``: change the status of one protected node pair (DPLP-rank).
    """

    EDGE = "edge"
    NODE = "node"
    PROTECTED_PAIR = "protected_pair"

    @property
    def description(self) -> str:
        """One line a report can print."""
        return _DESCRIPTIONS[self]


_DESCRIPTIONS = {
    PrivacyUnit.EDGE: "edge-level: neighbouring graphs differ by adding or removing one edge",
    PrivacyUnit.NODE: "node-level: neighbouring graphs differ by one node and all its edges",
    PrivacyUnit.PROTECTED_PAIR: "protected-pair, per query u: u-neighbouring graphs differ only in the protected "
                                "pairs of one node w != u, other than (w, u) (De & Chakrabarti, Def. 1)",
}


class Accounting(str, enum.Enum):
    """Which analysis produced a reported epsilon.

    ``RIGOROUS`` is the correct bound (the default). ``PAPER`` reproduces a paper's own, looser
    analysis where the specs name one; results produced with it say so.
    """

    RIGOROUS = "rigorous"
    PAPER = "paper"
