"""Canary audit of DPLP-rank and its baselines (:class:`~graphpriv.methods.dplp_rank.DPLPRanker`):
protected-pair DP of the released top-k lists (k = the run's ``top_k``).

Sources: De & Chakrabarti, "Differentially private link prediction with protected connections"
(AAAI 2021), Sec. 3.1 (Def. 1, u-neighbouring graphs; Def. 2, protected-pair DP) and Sec. 4.2
(Prop. 4: a top-K list is K eps_p-DP), for the guarantee audited; Steinke, Nasr, Jagielski,
"Privacy auditing with one (1) training run" (NeurIPS 2023), Thm. 3.1 (the one-run bound, pure DP,
a guesser that may abstain); Jagielski, Ullman, Oprea, "Auditing differentially private machine
learning" (NeurIPS 2020) for the Clopper–Pearson bound.

What is protected. The guarantee is per query u: u's list must be nearly as likely when one node
w != u changes its protected pairs, (w, u) excepted (Def. 1). u's own pairs are not protected from
u's own list (u knows its edges; a neighbour is not even a candidate), so a canary (u, v) scored in
u's list would test nothing the method promises. A canary for query u is therefore a node w of the
relation: a fresh node c joined to every training neighbour of u by protected edges (c's
protected pairs, none of them (c, u)). Inserted, c shares all of u's neighbours: its scaled base
score is the top of the range for CN and JC (1), and :func:`canary_strength` for AA (its bound
assumes common neighbours of degree 2) and PA; left out, c is isolated and scores 0. Inserting c
or not is a pair of u-neighbouring graphs.

Canaries. m canary nodes, each inserted independently with probability 1/2, spread round-robin
over the audited queries (at most k per query): nodes of degree >= 1 in the training graph,
pairwise at distance >= 3 (no two adjacent or sharing a neighbour), chosen greedily by decreasing
canary strength, then increasing degree (:func:`audited_queries`); m is lowered, with a note, when
the graph has too few of them. The graph is split first as ``fit`` would split it
(:func:`~graphpriv.ranking.protocol.ranking_split`: the run's sigma_prot, query_fraction and
holdout, seed ``seed``); the canary nodes and the inserted canaries' protected edges are then
added to that split (protected: in the training graph, not in the public one) and the estimator's
own ``fit(split, audit_hook=...)`` runs once. Each audited query then asks :meth:`recommend` once
for a list of k over explicit candidates, :data:`CANDIDATES_PER_SLOT` k in all: its own canaries
and decoys, drawn at random among the nodes at distance >= 3 from it (for JC and PA, none that a
canary attaches to). A decoy shares no neighbour with the query, so it scores 0 under CN, AA and
JC whatever the coins; a left-out canary is exchangeable with the decoys and is listed with
probability about 1 / CANDIDATES_PER_SLOT, while an inserted one is listed when its utility beats
the decoys' noise: the membership test is as sharp as the mechanism's noise allows. Candidates
are an input of :meth:`recommend`; the guarantee holds for any candidates fixed before the
coins, as these are.

Why the claim is the ledger's epsilon. The one-run theorem needs the whole output (every audited
list) to be eps-DP with respect to each canary, whatever the other canaries do. A canary of query
u moves only u's list: another audited query u' is >= 3 away, so it has none of u's attachment
points as neighbour (its degree, its common neighbours and their AA weights do not move), and its
candidates are its own canaries and decoys (no other canary; for JC and PA, which read a
candidate's own degree and neighbours, no attachment point); the transform f, in rigorous mode,
trains on the public graph, which holds no canary edge; the noise is drawn for candidate sets
fixed before the coins. Lists of different queries answer to different relations (Def. 2) and do
not compose in the ledger, and here they need not: each canary is a u-neighbouring change for its
own query's list, the only list it moves, and that list is k eps_p-DP under it (Prop. 4). So the
output the audit observes is k eps_p-DP with respect to every canary, which is what the fitted
ranker's ledger reports after one list per audited query (eps_p times the draws of the most-asked
query): the claim is ``privacy_report_.epsilon``, pure (delta = 0). Had the canaries been spread
so that one moved several lists, the claim would have to be k eps_p times that number. In paper
accounting f trains on the training graph, canary edges included, so every list depends on every
canary: the claim audited is then the paper's, which does not cover that (the report's
accounting says ``paper``); so are the one-shot Laplace and staircase baselines' claims. Embedding
bases (node2vec, GCN) are refused: their embeddings see the whole training graph, so every list
depends on every canary.

Attack. A canary is guessed "inserted" when it is in its query's released list. Without
``guesses``, two guessers, each at half the error level (a union bound): "inserted iff in the
list" on all m canaries, and "inserted" for the listed ones only, abstaining on the rest (the
guesser may abstain after seeing the output: Thm. 3.1 holds given the guesses made). With
``guesses`` = r: "inserted" for the r canaries listed highest (score k - position, 0 when absent),
abstaining on the rest (:func:`~graphpriv.audit.statistics.audit_from_scores`). The audit's fault
(``noise_scale``) reaches the ranking noise through ``fit(..., audit_hook=...)``.

Power. With a left-out canary listed about 1 time in CANDIDATES_PER_SLOT, even a non-private
ranking shows about 3.3 with 1,000 canaries: a list of the default k = 30 (claim 3 at eps_p = 0.1)
sits at the edge of what one run can certify. ``top_k = 1`` audits one draw of the exponential
mechanism (claim eps_p), which a broken noise scale exceeds by far. AA canaries are weaker than
CN or JC ones on graphs whose nodes have large degrees (AA's range assumes common neighbours of
degree 2; :func:`canary_strength`), and a trained transform f changes how far a canary's score
moves its utility.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from torch_geometric.data import Data

from graphpriv.audit.fitting import (
    audited_copy,
    check_audit_args,
    check_enough_guesses,
    claim,
    dataset_name,
    describe,
)
from graphpriv.audit.statistics import (
    AuditReport,
    audit_from_presence,
    audit_from_scores,
    guesses_made,
    minimum_guesses,
)
from graphpriv.data.graph import to_csr
from graphpriv.data.validation import check_data
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.methods.dplp_rank import DPLPRanker, RankConfig
from graphpriv.privacy.units import PrivacyUnit
from graphpriv.progress import Progress, no_progress, prefixed_progress
from graphpriv.ranking.embeddings import EMBEDDING_SCORES
from graphpriv.ranking.protocol import RankingSplit, ranking_split

__all__ = ["CANDIDATES_PER_SLOT", "UNIT", "CanaryPlan", "audit_ranker", "audited_queries", "canary_strength",
           "plan_canaries"]

#: Candidates per list slot: each audited list is drawn from ``CANDIDATES_PER_SLOT * top_k``
#: candidates, its canaries and random decoys (fewer when the graph has fewer decoys). A left-out
#: canary is listed with probability about 1 / CANDIDATES_PER_SLOT; an inserted one must beat the
#: decoys' noise, whose top grows with the log of their number: 20 keeps both small.
CANDIDATES_PER_SLOT = 20

#: The report's unit: the ledger's (:attr:`graphpriv.privacy.units.PrivacyUnit.PROTECTED_PAIR`).
UNIT = PrivacyUnit.PROTECTED_PAIR.value


def _neighbours(adj: sp.csr_matrix, node: int) -> np.ndarray:
    return adj.indices[adj.indptr[node]:adj.indptr[node + 1]]


def _ball(adj: sp.csr_matrix, node: int) -> np.ndarray:
    """``node``, its neighbours and theirs (distance <= 2; with repeats)."""
    near = _neighbours(adj, node)
    return np.concatenate([[node], near, *(_neighbours(adj, z) for z in near)])


def canary_strength(adj: sp.csr_matrix, base: str, degree_cap: float | None = None) -> np.ndarray:
    """``[N]``: the scaled base score s / s_max,u in [0, 1] a canary node joined to every neighbour
    of u would get for query u (0 for isolated nodes): 1 for CN and JC, the mean of
    ln 2 / ln(deg(z) + 1) over u's neighbours z for AA (its bound assumes common neighbours of
    degree 2), min(deg(u), cap) / cap for PA."""
    degree = np.diff(adj.indptr).astype(np.float64)
    strength = (degree > 0).astype(np.float64)
    if base == "aa":
        weight = np.log(2.0) / np.log(degree + 1.0, out=np.ones_like(degree), where=degree > 0)
        total = np.asarray(adj @ weight).ravel()
        strength = np.divide(total, degree, out=np.zeros_like(degree), where=degree > 0)
    elif base == "pa":
        strength = np.minimum(degree, degree_cap) / degree_cap
    return strength


def audited_queries(adj: sp.csr_matrix, limit: int, strength: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """At most ``limit`` nodes of degree >= 1, pairwise at distance >= 3 in ``adj`` (no two adjacent
    or sharing a neighbour), chosen greedily by decreasing ``strength``, then increasing degree
    (small balls leave room for more), ties in random order; ``[Q]`` int64, in the order chosen."""
    n = adj.shape[0]
    degree = np.diff(adj.indptr)
    blocked = degree == 0
    chosen: list[int] = []
    for q in np.lexsort((rng.random(n), degree, -np.round(strength, 6))):
        if len(chosen) >= limit:
            break
        if not blocked[q]:
            chosen.append(int(q))
            blocked[_ball(adj, q)] = True
    return np.asarray(chosen, dtype=np.int64)


def _upper_pairs(adj: sp.csr_matrix) -> np.ndarray:
    coo = sp.triu(adj, k=1).tocoo()
    return np.stack([coo.row, coo.col]).astype(np.int64)


@dataclass(frozen=True)
class CanaryPlan:
    """Where the canaries go and what each audited query ranks, fixed before the coins.

    Attributes:
        base: the split of the graph without canaries (``ranking_split``, as ``fit`` makes it).
        queries: ``[Q]`` audited query nodes, pairwise at distance >= 3 in ``base.train``.
        owner: ``[m]`` canary i (node ``base.num_nodes + i``) belongs to ``queries[owner[i]]``.
        ptr, nodes: the candidates of :meth:`DPLPRanker.recommend`: query j ranks
            ``nodes[ptr[j]:ptr[j + 1]]``, random decoys (distance >= 3 from it, not an attachment
            point for JC and PA) and its own canaries.
    """

    base: RankingSplit
    queries: np.ndarray
    owner: np.ndarray
    ptr: np.ndarray
    nodes: np.ndarray

    @property
    def canary_ids(self) -> np.ndarray:
        """``[m]`` the canary nodes' ids (after the graph's nodes)."""
        return self.base.num_nodes + np.arange(self.owner.size)

    def split(self, inserted: np.ndarray) -> RankingSplit:
        """The split with canary i joined to every training neighbour of its query when
        ``inserted[i]``, by protected edges: in ``full``, ``train`` and ``protected``, not in
        ``public``; m more nodes, queries and test candidates unchanged."""
        base, train = self.base, self.base.train
        n = base.num_nodes + self.owner.size
        edges = [np.zeros((2, 0), np.int64)]
        for i in np.flatnonzero(inserted):
            near = _neighbours(train, self.queries[self.owner[i]])
            edges.append(np.stack([near, np.full(near.size, base.num_nodes + i)]).astype(np.int64))
        canary_edges = np.concatenate(edges, axis=1)
        public = base.public.tocoo()
        return RankingSplit(
            num_nodes=n,
            full=to_csr(np.concatenate([_upper_pairs(base.full), canary_edges], axis=1), n),
            train=to_csr(np.concatenate([_upper_pairs(train), canary_edges], axis=1), n),
            public=sp.csr_matrix((public.data, (public.row, public.col)), shape=(n, n)),
            protected=np.concatenate([base.protected, canary_edges], axis=1),
            queries=base.queries, test_ptr=base.test_ptr, test_nodes=base.test_nodes,
            test_labels=base.test_labels, test_protected=base.test_protected)


def plan_canaries(base: RankingSplit, config: RankConfig, canaries: int, rng: np.random.Generator) -> CanaryPlan:
    """Audited queries, canaries (at most ``top_k`` per query, round-robin) and candidates
    (``CANDIDATES_PER_SLOT * top_k`` per list) for ``canaries`` canaries, or fewer when the graph
    has too few queries >= 3 apart (module docstring).

    Raises:
        DatasetError: an audited query without more than ``top_k`` candidates.
    """
    n, train, k = base.num_nodes, base.train, config.top_k
    queries = audited_queries(train, canaries, canary_strength(train, config.base, config.degree_cap), rng)
    m = min(canaries, queries.size * k)
    queries = queries[:min(m, queries.size)]
    owner = np.arange(m) % max(queries.size, 1)
    attached = np.zeros(n, dtype=bool)  # attachment points: their degree and neighbours depend on coins
    if config.base in ("jc", "pa"):  # the scores that read a candidate's own neighbours or degree
        for q in queries:
            attached[_neighbours(train, q)] = True
    ptr, nodes = [0], []
    for j, q in enumerate(queries):
        decoy = ~attached
        decoy[_ball(train, q)] = False  # CN, AA and JC 0 on every graph of the audit
        decoy = np.flatnonzero(decoy)
        own = n + np.flatnonzero(owner == j)
        size = min(decoy.size, CANDIDATES_PER_SLOT * k - own.size)
        nodes.append(np.concatenate([np.sort(rng.choice(decoy, size, replace=False)), own]))
        if nodes[-1].size <= k:
            raise DatasetError(f"audited query {int(q)} has {nodes[-1].size} candidates (nodes at distance >= 3 and "
                               f"its canaries), not more than top_k = {k}; lower top_k or audit a larger graph")
        ptr.append(ptr[-1] + nodes[-1].size)
    return CanaryPlan(base, queries, owner, np.asarray(ptr, dtype=np.int64),
                      np.concatenate(nodes) if nodes else np.zeros(0, np.int64))


def audit_ranker(estimator: DPLPRanker, data: Data, *, canaries: int = 1000, seed: int = 0, noise_scale: float = 1.0,
                 guesses: int | None = None, confidence: float = 0.95, name: str | None = None,
                 progress: Progress = no_progress) -> list[AuditReport]:
    """Audit one fit of ``estimator`` and one released list per audited query (module docstring).

    Args:
        estimator: a :class:`DPLPRanker` with a triad base (``cn``, ``aa``, ``jc``, ``pa``) whose
            hyperparameters define the run (a copy with ``random_state=seed`` is fitted); its
            ``top_k`` is the lists' length k, and the claim is k eps_p (``top_k = 1`` audits one
            draw of the exponential mechanism, where a one-run bound can reach the claim).
        data: the graph (``edge_index``, ``num_nodes``); it is split as ``fit`` would split it.
        canaries: m, canary nodes (fewer, with a note, when the graph has too few queries >= 3
            apart to hold m with at most ``top_k`` per list). seed: the split, the queries, the
            decoys, the coins and the fit (its noise). noise_scale: a deliberate fault on the
            ranking noise (1.0: the real ranking; 0: the same rankings without noise, claim inf).
            guesses: None for the two membership guessers, or r: "inserted" for the r canaries
            listed highest. confidence: of the bounds. name: the report's ``method`` (default:
            the class name). progress: reports the audited fit, each of its phases prefixed
            ``audited`` (:mod:`graphpriv.progress`).

    Returns:
        ``[AuditReport]`` (unit ``protected_pair``).

    Raises:
        ConfigError: another estimator class, an embedding base, fewer than 2 canaries (or too
            few to show anything at ``confidence``), a bad guesses, noise_scale or seed.
        DatasetError: ``data`` is not a graph, no usable query, too few queries >= 3 apart, or an
            audited query with at most ``top_k`` candidates.
    """
    if type(estimator) is not DPLPRanker:
        raise ConfigError(f"the ranking audit covers DPLPRanker (got {type(estimator).__name__})")
    config = estimator.config
    if config.base in EMBEDDING_SCORES:
        raise ConfigError(f"the ranking audit needs a triad base (cn, aa, jc, pa), got {config.base!r}: an embedding "
                          "base sees the whole training graph, so every list depends on every canary")
    hook = check_audit_args(canaries, noise_scale, confidence)
    if guesses is not None and (isinstance(guesses, bool) or not isinstance(guesses, int) or guesses < 1):
        raise ConfigError(f"guesses must be an integer >= 1 or None (got {guesses!r})")
    split_confidence = 1 - (1 - confidence) / 2
    level = split_confidence if guesses is None else confidence
    if guesses is None:
        check_enough_guesses(lambda count: count, canaries, level)
    else:
        check_enough_guesses(lambda count: guesses_made(count, guesses, one_sided=True), canaries, level)
    data = check_data(data, method="audit_ranker")
    base = ranking_split(data, sigma_prot=config.sigma_prot, query_fraction=config.query_fraction,
                         holdout=config.holdout, seed=seed)
    rng = np.random.default_rng([seed, 1019])
    plan = plan_canaries(base, config, canaries, rng)
    m, k = plan.owner.size, config.top_k
    if m < max(2, minimum_guesses(level)):
        raise DatasetError(f"the graph has {plan.queries.size} node(s) of degree >= 1 at distance >= 3 from each other "
                           f"(in its training split), room for {m} canaries at most top_k = {k} per list: too few "
                           "for the one-run bound to show anything; raise top_k or audit a larger graph")
    inserted = rng.random(m) < 0.5
    fitted = audited_copy(estimator, seed).fit(plan.split(inserted), audit_hook=hook,
                                                  progress=prefixed_progress(progress, "audited"))
    lists = fitted.recommend(plan.queries, candidates=(plan.ptr, plan.nodes)).numpy()
    hits = lists[plan.owner] == plan.canary_ids[:, None]  # [m, k]
    present = hits.any(axis=1)
    position = np.where(present, hits.argmax(axis=1), k)
    claimed, accounting = claim(fitted, None, noise_scale)
    method, dataset = describe(estimator, name), dataset_name(data)
    notes = [(f"{m} canary nodes over {plan.queries.size} audited queries (pairwise >= 3 apart), each joined to all "
             f"its query's training neighbours by protected edges with probability 1/2; one list of k = {k} per query "
             f"from about {CANDIDATES_PER_SLOT * k} candidates (its canaries and decoys) by "
             f"{type(estimator).__name__}.recommend after one fit")]
    if m < canaries:
        notes.append(f"{canaries} canaries asked; the graph holds {m} ({plan.queries.size} queries >= 3 apart, at "
                     f"most top_k = {k} canaries per list)")
    attack = "canary in its query's released top-k list"
    if guesses is not None:
        return [audit_from_scores((k - position).astype(np.float64), inserted, method=method, dataset=dataset,
                                  unit=UNIT, claimed_epsilon=claimed, accounting=accounting, attack=attack,
                                  guesses=guesses, confidence=confidence, notes=notes, one_sided=True)]
    notes.append("two guessers at half the error level each: 'inserted iff listed' on every canary, and 'inserted' "
                 "for the listed ones only")
    return [audit_from_presence(present, inserted, method=method, dataset=dataset, unit=UNIT, claimed_epsilon=claimed,
                                accounting=accounting, attack=attack, confidence=confidence, notes=notes)]
