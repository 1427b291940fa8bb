"""Privacy units (what one individual is), the neighbouring relation each names, and accounting modes.

A unit says *what* neighbouring graphs differ by (one edge, one node, one node's protected pairs);
the relation says *how* the mechanism's input changes, in dp-accounting's terms
(``NeighboringRelation``): add-or-remove one record (the dataset grows or shrinks by one) or
replace one record (the dataset keeps its size, e.g. one adjacency bit flips, or one node is
swapped for another while N stays public). Each unit names its usual relation
(:attr:`PrivacyUnit.relation`); a mechanism analysed under the other one passes it explicitly to the
:class:`~graphpriv.privacy.accountant.Ledger`, which records it and states it in the report
(:func:`describe_relation`). Source: Kifer & Machanavajjhala, "No free lunch in data privacy"
(SIGMOD 2011), Sec. 2 (bounded vs unbounded DP); dp-accounting's ``NeighboringRelation``.
"""

from __future__ import annotations

import enum

from dp_accounting.privacy_accountant import NeighboringRelation

from graphpriv.errors import PrivacyError

__all__ = ["Accounting", "NeighboringRelation", "PrivacyUnit", "describe_relation"]


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
        """One line a report can print: the unit under its usual relation (:attr:`relation`)."""
        return _DESCRIPTIONS[self, self.relation]

    @property
    def relation(self) -> NeighboringRelation:
        """The unit's usual neighbouring relation, the :class:`~graphpriv.privacy.accountant.Ledger`'s
        default for it.

        ``EDGE`` and ``NODE``: ``ADD_OR_REMOVE_ONE`` (one edge, or one node with its edges, is added
        or removed: what Poisson-sampled DP-SGD and the Laplace releases are analysed under).
        ``PROTECTED_PAIR``: ``REPLACE_ONE`` (u-neighbouring graphs keep their nodes; one node's
        protected pairs change status: De & Chakrabarti, "Differentially private link prediction
        with protected connections", AAAI 2021, Def. 1).

        A method analysed under the other relation says so to its ledger: EdgeRand
        (``EDGE``, ``REPLACE_ONE`` over the adjacency bits: adding or removing an edge replaces one
        bit) and PrivDPR (``NODE``, ``REPLACE_ONE``: bounded node-level DP, N public).
        """
        return _RELATIONS[self]


_RELATIONS = {
    PrivacyUnit.EDGE: NeighboringRelation.ADD_OR_REMOVE_ONE,
    PrivacyUnit.NODE: NeighboringRelation.ADD_OR_REMOVE_ONE,
    PrivacyUnit.PROTECTED_PAIR: NeighboringRelation.REPLACE_ONE,
}

_DESCRIPTIONS = {
    (PrivacyUnit.EDGE, NeighboringRelation.ADD_OR_REMOVE_ONE):
        "edge-level: neighbouring graphs differ by adding or removing one edge",
    (PrivacyUnit.EDGE, NeighboringRelation.REPLACE_ONE):
        "edge-level, replace-one over the adjacency bits: neighbouring graphs differ in one adjacency bit "
        "(adding or removing one edge replaces that bit)",
    (PrivacyUnit.NODE, NeighboringRelation.ADD_OR_REMOVE_ONE):
        "node-level: neighbouring graphs differ by one node and all its edges",
    (PrivacyUnit.NODE, NeighboringRelation.REPLACE_ONE):
        "node-level, replace-one (bounded): neighbouring graphs differ by replacing one node and all its edges; "
        "the number of nodes is public",
    (PrivacyUnit.PROTECTED_PAIR, NeighboringRelation.REPLACE_ONE):
        "protected-pair, per query u: u-neighbouring graphs differ only in the protected "
        "pairs of one node w != u, other than (w, u) (De & Chakrabarti, Def. 1)",
}


def describe_relation(unit: PrivacyUnit | str, relation: NeighboringRelation) -> str:
    """The line a :class:`~graphpriv.privacy.report.PrivacyReport` states for ``unit`` under ``relation``.

    Args:
        unit: a :class:`PrivacyUnit` (or its value). relation: dp-accounting's ``NeighboringRelation``.

    Returns:
        One sentence naming the unit and the relation.

    Raises:
        ValueError: an unknown unit. PrivacyError (a ValueError): a (unit, relation) pair graphpriv
            does not analyse (``PROTECTED_PAIR`` under ``ADD_OR_REMOVE_ONE``, or ``REPLACE_SPECIAL``).

    Source: Kifer & Machanavajjhala, "No free lunch in data privacy" (SIGMOD 2011), Sec. 2.
    """
    key = (PrivacyUnit(unit), relation)
    if key not in _DESCRIPTIONS:
        raise PrivacyError(f"graphpriv analyses no {key[0].value}-level mechanism under {relation.name}; "
                         f"use {key[0].relation.name} (the unit's relation) or say which relation applies")
    return _DESCRIPTIONS[key]


class Accounting(str, enum.Enum):
    """Which analysis produced a reported epsilon: graphpriv's one accounting type (configs,
    reports and the accountant's functions all take it, or its value as a string).

    ``RIGOROUS`` is the correct bound (the default). ``PAPER`` reproduces a paper's own, looser
    analysis where graphpriv implements one (the method's docs page names it); results produced
    with it say so. ``REFERENCE`` reproduces a paper's released code, protocol and noise included,
    where that code departs from its paper (DPLP-rank only, docs/dplp_rank.md): it states no
    guarantee, and its report gives the epsilon the code's noise provides. A config that has no
    reference mode refuses it (:class:`graphpriv.methods.base.MethodConfig`).

    A member is interchangeable with its value: it equals, hashes and formats as ``"rigorous"`` /
    ``"paper"`` / ``"reference"`` (so a dict keyed by the strings finds it, and an f-string prints
    the word).
    """

    RIGOROUS = "rigorous"
    PAPER = "paper"
    REFERENCE = "reference"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __hash__(self) -> int:
        return hash(self.value)
