"""Total influence of one edge on pair heuristics, and the sensitivity of a ramp-AUC utility built on them.

A heuristic's *total influence* is the most the scores of all node pairs can move, summed, when
one edge is added to or removed from the graph: sum over pairs {u, v} of |s_G'(u, v) - s_G(u, v)|.
Resource allocation's 1 / degree weights bound it by a constant, whatever the graph and its
degrees; common neighbours' and Adamic-Adar's grow with the degrees. The bounds are proven below
and checked against brute force on small graphs in tests/privacy/test_influence.py.

Source: graphpriv (docs/linkpred.md, "A private link predictor above common neighbours"). The
heuristics: resource allocation (Zhou, Lü & Zhang, Eur. Phys. J. B 2009) and RA3, its length-3-path
form (:func:`graphpriv.linkpred.heuristics.resource_allocation_paths3`).
"""

from __future__ import annotations

import math

__all__ = ["RA3_INFLUENCE", "RA_INFLUENCE", "ramp_utility_sensitivity"]

#: Total influence of one edge on RA(u, v) = sum_{z in N(u) ∩ N(v)} 1 / d_z, over all pairs: < 3.
#:
#: Proof. Add the edge (a, b) (removal is the same pair of graphs read backwards); d are the
#: degrees before. Only pairs with a or b as a common neighbour move. (i) Pairs {y, z} of old
#: neighbours of a: a's weight drops from 1 / d_a to 1 / (d_a + 1), a change of
#: 1 / (d_a (d_a + 1)) for each of the C(d_a, 2) pairs: (d_a - 1) / (2 (d_a + 1)) < 1/2 in all.
#: (ii) Pairs {b, y}, y an old neighbour of a: a becomes a common neighbour of weight
#: 1 / (d_a + 1), for d_a pairs: d_a / (d_a + 1) < 1. The same for b: < 3/2 + 3/2 = 3.
RA_INFLUENCE = 3.0

#: Total influence of one edge on RA3(u, v) = sum over simple paths u - x - y - v of
#: 1 / (d_x d_y), over all pairs: < 5.
#:
#: Proof. Add the edge (a, b); d are the degrees before. A path's weight reads the degrees of its
#: two interior nodes only. New paths use (a, b): (i) as the middle edge, u - a - b - v with
#: u in N(a), v in N(b): at most d_a d_b paths of weight 1 / ((d_a + 1)(d_b + 1)), < 1 in all;
#: (ii) as an end edge, a - b - y - v with y in N(b) (y != a) and v in N(y) \\ {a, b}: weight
#: 1 / ((d_b + 1) d_y) for fewer than d_y paths per y, < d_b / (d_b + 1) < 1 in all; (iii) the
#: same with a and b swapped, < 1. Old paths change weight when a or b is interior: with a
#: interior next to y in N(a), the path u - a - y - v has u in N(a) \\ {y} and v in N(y) \\ {a, u}
#: (fewer than d_a d_y paths per y); its weight drops by 1 / (d_a (d_a + 1) d_y) (y != b, as b is
#: not a neighbour of a before): (d_a - 1) / (d_a + 1) < 1 over all y; (iv) the same for b, < 1.
#: No old path has both a and b interior (they are not adjacent before). Total < 5.
RA3_INFLUENCE = 5.0


def ramp_utility_sensitivity(*, margin: float, influences: tuple[float, ...], positives: int, references: int,
                             membership: float = 1.0) -> float:
    """The sensitivity of the ramp-AUC utility of one mixing direction, under one edge added or removed.

    The utility of a unit direction w (all coordinates of w in [-1, 1] and ||w||_2 = 1) is
    U(w) = (1 / |R|) sum_{p in P} sum_{q in R} h(w . phi(p) - w . phi(q)), with h(t) =
    clip((t + margin) / (2 margin), 0, 1) (values in [0, 1], Lipschitz 1 / (2 margin)); P: at most
    ``positives`` training edges, chosen so that the members one edge adds or removes move U by at
    most ``membership``;
    R: ``references`` distinct node pairs fixed before the data; phi(p): per-pair features, feature
    j with total influence at most ``influences[j]`` (1-Lipschitz transforms such as log1p keep it).

    Bound. A positive's term is a mean of values in [0, 1]: one that enters P adds at most 1, one
    that leaves takes at most 1 away, and one entering while another leaves (a keyed sample at its
    size limit) moves U by the difference of two such terms, again at most 1: ``membership`` = 1. A pair p of P moved by delta_p moves its |R| terms by at most
    |w . delta_p| / (2 margin) each, a pair q of R moves at most |P| terms by |w . delta_q| /
    (2 margin), and sum_p |w . delta_p| <= sum_j |w_j| B_j <= ||B||_2 (Cauchy-Schwarz), the same
    over R (distinct pairs). So

        Delta U <= membership + ||B||_2 / (2 margin) * (1 + positives / references).

    Args:
        margin: the ramp's half-width (> 0). influences: the features' total influences B_j (>= 0).
        positives: the most positives P can hold (>= 1). references: |R| (>= 1).
        membership: the most the members one edge adds to or removes from P move U (1 for the keyed
            sample of :class:`~graphpriv.methods.heuristic_mix.HeuristicMixLinkPredictor`).

    Returns:
        Delta U, a float > 0.

    Raises:
        ValueError: a margin <= 0, a negative influence, or counts < 1.
    """
    if not margin > 0:
        raise ValueError(f"'margin' must be > 0 (got {margin!r})")
    if any(b < 0 for b in influences):
        raise ValueError(f"'influences' must be >= 0 (got {influences!r})")
    if positives < 1 or references < 1 or not membership >= 0:
        raise ValueError(f"'positives' and 'references' must be >= 1 and 'membership' >= 0 (got {positives}, "
                         f"{references}, {membership})")
    norm = math.sqrt(sum(b * b for b in influences))
    return membership + norm / (2 * margin) * (1 + positives / references)
