"""Which variant of its estimator each registry method id fits (light: imports nothing).

DPAR's method ids pick :class:`~graphpriv.methods.dpar.DPARClassifier`'s ``appr``, PrivDPR's
:class:`~graphpriv.methods.privdpr.PrivDPR`'s ``gradient_bound``; the ranking ids pick
:class:`~graphpriv.methods.dplp_rank.DPLPRanker`'s ``(transform, noise)``. The registry, the audits and
the protocols of :mod:`graphpriv.evaluation` read them here, so that naming a method imports no model.
"""

from __future__ import annotations

__all__ = ["DPAR_APPR", "GAE_PUBLISHER", "HEURISTIC", "PRIVDPR_BOUND", "RANK_VARIANTS"]

#: DPAR's method ids -> the ``appr`` of :class:`~graphpriv.methods.dpar.DPARClassifier` (Zhang, Lee, Ma,
#: Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with Node-Level Differential Privacy",
#: Sec. 3.2: the EM-0, EM-1 and GM mechanisms of DP-APPR; ``exact``: no mechanism, no DP).
DPAR_APPR: dict[str, str] = {"dpar-em0": "em0", "dpar-em1": "em1", "dpar-gm": "gm", "dpar-nodp": "exact"}

#: The heuristics' method ids -> the ``heuristic`` of :class:`~graphpriv.methods.heuristic.NeighbourhoodHeuristic`
#: (common neighbours, Adamic-Adar, resource allocation, resource allocation over length-3 paths).
HEURISTIC: dict[str, str] = {"cn": "cn", "aa": "aa", "ra": "ra", "ra3": "ra3"}

#: The GAE link predictors' method ids -> the ``publisher`` of
#: :class:`~graphpriv.methods.gae_link.GAELinkPredictor` (the training graph itself, or its EdgeRand or
#: LapGraph release).
GAE_PUBLISHER: dict[str, str] = {"gae": "none", "edgerand-gae": "edgerand", "lapgraph-gae": "lapgraph"}

#: PrivDPR's method ids -> the ``gradient_bound`` of :class:`~graphpriv.methods.privdpr.PrivDPR`
#: (Theorem 4.2's ``paper`` bound of Zhang, Hu, Ye, Xu, "PrivDPR: Synthetic Graph Publishing with Deep
#: PageRank under Differential Privacy", or graphpriv's ``sigmoid`` one: docs/privdpr.md).
PRIVDPR_BOUND: dict[str, str] = {"privdpr": "paper", "dpr": "paper", "privdpr-tight": "sigmoid"}

#: The ranking method ids -> ``(transform, noise)`` of :class:`~graphpriv.methods.dplp_rank.DPLPRanker`
#: (De & Chakrabarti, "Differentially Private Link Prediction With Protected Connections", Sec. 4 and
#: App. 14: DPLP, DPLP-Lin, the exponential mechanism, the Laplace and staircase baselines, no noise).
RANK_VARIANTS: dict[str, tuple[str, str]] = {
    "dplp-rank": ("umnn", "gumbel"), "dplp-rank-lin": ("power", "gumbel"), "rank-exponential": ("none", "gumbel"),
    "rank-laplace": ("none", "laplace"), "rank-staircase": ("none", "staircase"), "rank-nonprivate": ("none", "none"),
}
