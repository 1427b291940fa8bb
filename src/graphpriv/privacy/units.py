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
    """Which analysis produced a reported epsilon: graphpriv's one accounting type (configs,
    reports and the accountant's functions all take it, or its value as a string).

    ``RIGOROUS`` is the correct bound (the default). ``PAPER`` reproduces a paper's own, looser
    analysis where graphpriv implements one (the method's docs page names it); results produced
    with it say so.

    A member is interchangeable with its value: it equals, hashes and formats as ``"rigorous"`` /
    ``"paper"`` (so a dict keyed by the strings finds it, and an f-string prints the word).
    """

    RIGOROUS = "rigorous"
    PAPER = "paper"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __hash__(self) -> int:
        return hash(self.value)
