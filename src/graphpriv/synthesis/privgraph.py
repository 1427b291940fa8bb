"""PrivGraph: an edge-level pure-DP synthetic graph built from noisy community information.

Source: Yuan, Zhang, Du, Chen, Cheng, Sun, "PrivGraph: Differentially Private Graph Data
Publication by Exploiting Community Information" (USENIX Security 2023), and the authors' code
(``Privacy-Graph/PrivGraph``: ``main.py``, ``utils.py``, ``comm/community_main.py``), which this
module follows step by step except where said below. The estimator is
:class:`graphpriv.methods.privgraph.PrivGraph`.

Setting. N nodes (public, isolated ones included); m undirected edges counted once on the
canonical pairs u < v, no self-loop. Neighbouring graphs differ by adding or removing one
undirected edge {u, v} (dp-accounting's ``ADD_OR_REMOVE_ONE``). epsilon = eps1 + eps2 + eps3
(``split``, the paper's 1/3 each by default). Every step below reads the graph only through the
mechanism named in it; everything else is a function of earlier DP outputs and of public N,
so the phases compose adaptively: pure epsilon-DP, delta = 0.

Phase 1, community initialisation (eps1), :func:`initial_communities`:

1. The N nodes are split uniformly at random into S = ceil(N / N1) super-nodes of N1 nodes (the
   last one smaller); data-independent.
2. f1 = (W_ab for a < b: the edges between super-nodes a and b; c_a: the edges inside super-node a),
   a vector of S(S-1)/2 + S counts (:func:`supergraph_counts`), released as f1 + Lap(1/eps1) on
   every entry, zeros included. **Sensitivity 1 in L1**: the edge {u, v} is counted in exactly
   one entry, W_{g(u)g(v)} if its endpoints lie in different super-nodes, else c_{g(u)}, and in that
   entry once; so adding or removing it changes f1 by exactly 1 in one coordinate. Event
   ``LaplaceDpEvent(1/eps1)``. (The paper and code noise the diagonal as W_aa = 2 c_a (the sum of
   the symmetric block) with Lap(2/eps1): the same mechanism scaled by 2, equally eps1-DP.)
3. Post-processing: both parts rounded to integers and made consistent by the paper's Norm-Sub
   (:func:`norm_sub`), which zeroes most noise-only cells (this is the sparsification: only the
   positive cells become edges of the super-graph), then Louvain with resolution t on the weighted
   super-graph (networkx's seeded ``louvain_communities``, the self-loop of super-node a weighted
   c_a), and every node gets its super-node's community.

Phase 2, community adjustment (eps2), :func:`adjust_communities`: one pass over the nodes in a
uniformly random order; node w, in community own(w), moves to a community C chosen among the
current non-empty communities (its own included) with probability proportional to
exp(lam * (k_w(C) - k_w(own(w)))), k_w(C) = the number of w's neighbours now in C; the move is
immediate (later nodes see it). lam = eps2 / 4 as in the authors' code (``c1 = epsilon / (2 *
passes * deltau * 2)``), or eps2 / 2 with ``em_scale="monotone"``.

- The subtracted k_w(own(w)) is the same for every candidate, and the exponential mechanism is
  invariant under a common shift of the scores: w's selection is the exponential mechanism with
  scores k_w(.) (:func:`em_probabilities`).
- **Score sensitivity** (:func:`neighbour_counts`): given the current partition, the edge {u, v}
  enters k_u(C) only for C = the community of v and k_v(C) only for C = the community of u, by 1
  each; for every other node w the score vector is unchanged, and the candidate set and the order
  are functions of the history only. So, conditioned on the history, the selections of w not in
  {u, v} have the same law in both graphs (privacy loss 0), and the selections of u and v see one
  score change by exactly 1 in one coordinate, all others fixed.
- One selection is then (2 lam)-DP by the exponential mechanism's general bound (score
  sensitivity 1: McSherry & Talwar, FOCS 2007; Dwork & Roth 2014, Thm. 3.10) and lam-DP because the
  change is one-sided (every score moves in the same direction: the numerator's ratio and the
  normaliser's ratio both lie in [1, e^lam], so their quotient in [e^-lam, e^lam]; Dwork & Roth
  2014, the remark after Thm. 3.10).
- The paper accounts each affected selection at eps2 / 2 with lam = eps2 / 4 (the general bound;
  the monotone bound makes this eps2 / 4 each, the paper's accounting is loose by 2); with
  ``em_scale="monotone"``, lam = eps2 / 2 and each selection is eps2 / 2-DP by the monotone bound.
  Both are accounted as two selections of eps2 / 2 each: adaptive composition, eps2 in total.
  Never n selections: the other n - 2 lose nothing.
- Event: twice :func:`pure_dp_event` (eps2 / 2). The PLD accountant has no pure-DP event of its
  own (graphpriv's ``PureDpEvent`` is refused by it), so a pure eps'-DP step is entered as
  ``DiscreteLaplaceDpEvent(noise_parameter=eps', sensitivity=1)``, whose privacy loss is exactly
  +-eps' with probabilities e^eps' / (1 + e^eps') and 1 / (1 + e^eps'), i.e. the privacy-loss
  distribution of binary randomised response at eps', which dominates every pure eps'-DP mechanism
  (Kairouz, Oh, Viswanath, "The composition theorem for differential privacy", ICML 2015, Thm. 2.2;
  dominating pairs compose adaptively: Zhu, Dong, Wang, AISTATS 2022). The phase's epsilon at a
  delta > 0 is therefore the tight one for two eps2 / 2-DP selections, slightly below eps2 (up to
  the accountant's pessimistic discretisation: its grid of 1e-4 rounds the loss eps2 / 2 up, so
  the stated total can exceed epsilon by up to 1e-4 per event, e.g. 8.00008 at epsilon 8 and
  delta 1e-5; an upper bound still, the mechanism being pure epsilon-DP).

Phase 3, information extraction (eps3), :func:`community_statistics`: given the partition into K
communities (a DP output), f3 = (E_ij for i < j: the edges between communities i and j;
d_v / 2 for every node v: half its number of neighbours inside its own community), released as
E_ij + Lap(1/eps3) and d_v + Lap(2/eps3). **Sensitivity 1 in L1**: an edge between two
communities changes exactly one E_ij by 1 and no d; an edge inside a community changes d_u and d_v
by 1 each (d_u / 2 and d_v / 2 by 1/2 each) and no E. The two kinds of edge are disjoint, so one
eps3 covers both vectors (parallel, not sequential, as in the authors' code, ``ed = ev = e3``).
The intra-community edge counts are not released. Event ``LaplaceDpEvent(1/eps3)``.
Post-processing: rounding, Norm-Sub (the E vector, and each community's degrees), E_ij clipped to
[0, |C_i| |C_j|], degrees clipped to [0, |C| - 1].

Reconstruction (:func:`reconstruct`, post-processing of the release: any number of graphs, no
privacy cost): inside each community a Chung–Lu graph with the noisy degrees, each pair {u, v} of C
an edge independently with probability min(1, d_u d_v / S_C), S_C = sum of d over C (the code's
``generate_intra_edge``), drawn exactly and vectorised (:func:`chung_lu_within`); between
communities i < j, E_ij distinct pairs drawn uniformly from C_i x C_j (:func:`inter_community_pairs`).

Departures from the authors' code (each a correction, none changes the privacy accounting):

1. Inter-community edges: the code's loop reuses ``pi``, left over from the edge-count loop (the
   last community's members), so every inter-community edge gets one endpoint in the last
   community; here the endpoints lie in C_i and C_j, as the paper describes.
2. Noisy counts are rounded to the nearest integer; the code truncates toward zero
   (``astype(int)``, ``np.int32``), which biases small counts toward 0.
3. The super-graph's self-loop of super-node a weighs c_a (its internal edge count), the weight
   under which the super-graph's modularity equals the lifted partition's modularity in the
   original graph (networkx's and python-louvain's convention); the code gives it 2 c_a (the sum
   of the symmetric block), doubling intra-super-node weight in the Louvain objective.
4. N is the public ``num_nodes``, isolated nodes included (they join communities in phase 2, get
   degrees and appear in the output); the code builds its node set from the edge list, so its N
   depends on the data.
5. The E_ij inter-community pairs are drawn without replacement (exactly E_ij edges, E_ij clipped
   to |C_i| |C_j|); the code draws with replacement and merges duplicates, giving fewer.
6. Scale: O(m + S^2 + N K + sum of class pairs) time, never an N x N matrix (the code's dense
   ``uint8`` adjacency and per-node dictionaries over all communities are O(N^2)).
7. Louvain is networkx's ``louvain_communities`` (seeded from the fit's generator), the code's is
   python-louvain's ``best_partition``: the same method (both return the last, best level), with
   their own node orders and tie-breaks.
8. The intra-super-node counts are noised as c_a + Lap(1/eps1) rather than 2 c_a + Lap(2/eps1)
   (the same law up to the factor 2; see phase 1).

Everything here is a pure function of its inputs and a ``numpy.random.Generator``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import networkx as nx
import numpy as np
from dp_accounting import dp_event

from graphpriv.data.graph import decode_pairs, not_in_sorted, pair_codes
from graphpriv.privacy.accountant import check_epsilon

__all__ = [
    "EM_SCALES",
    "MAX_SUPERGRAPH_CELLS",
    "PrivGraphRelease",
    "adjust_communities",
    "chung_lu_within",
    "community_statistics",
    "em_probabilities",
    "em_rate",
    "expected_chung_lu_edges",
    "grouped_distinct",
    "initial_communities",
    "inter_community_pairs",
    "louvain_partition",
    "neighbour_counts",
    "norm_sub",
    "privgraph_release",
    "pure_dp_event",
    "random_supernodes",
    "reconstruct",
    "supergraph_counts",
]

#: Phase 2's exponential-mechanism rates: ``"paper"`` lam = eps2 / 4 (the authors' code),
#: ``"monotone"`` lam = eps2 / 2 (valid because one edge moves a node's scores one-sidedly).
EM_SCALES = ("paper", "monotone")

#: The most noisy super-graph cells S(S-1)/2 phase 1 draws (S = ceil(N / supernode_size)); 10^7
#: cells are 80 MB of noise and a Louvain input of up to m + 10^7 weighted edges.
MAX_SUPERGRAPH_CELLS = 10_000_000


def pure_dp_event(epsilon: float) -> dp_event.DpEvent:
    """A pure ``epsilon``-DP step as an event the PLD accountant composes exactly at its worst case.

    ``DiscreteLaplaceDpEvent(noise_parameter=epsilon, sensitivity=1)``: the discrete Laplace
    mechanism P(k) ~ exp(-epsilon |k|) at sensitivity 1 has privacy loss
    epsilon (|k - 1| - |k|) in {+epsilon, -epsilon}, +epsilon with probability
    e^epsilon / (1 + e^epsilon): binary randomised response's privacy-loss distribution, which
    dominates that of every pure epsilon-DP mechanism (Kairouz, Oh, Viswanath, ICML 2015, Thm. 2.2)
    and is accepted under ``ADD_OR_REMOVE_ONE`` (dp-accounting's ``RandomizedResponseDpEvent`` is
    not, and graphpriv's ``PureDpEvent`` is known to the RDP and basic accountants only).

    Args:
        epsilon: > 0.

    Returns:
        The event.
    """
    return dp_event.DiscreteLaplaceDpEvent(noise_parameter=check_epsilon(epsilon), sensitivity=1)


# -- post-processing shared by the phases ----------------------------------------------------------


def norm_sub(values: np.ndarray) -> np.ndarray:
    """The paper's consistency step (``FO_pp`` / ``norm_sub_deal``), on integers: post-processing.

    Norm-Sub (Wang, Lopuhaä-Zwakenberg, Li, Škorić, Li, "Locally Differentially Private Frequency
    Estimation with Consistency", NDSS 2020) as the authors' code does it: when the minimum is
    negative, the integer shift i in [0, -min) that makes sum(max(x - i, 0)) closest to sum(x) is
    subtracted (the smallest such i), and negatives become 0: the total is kept as nearly as such a
    shift can, while the many small noise-only cells drop to 0. Non-negative input is returned
    unchanged. O(len log len): the clipped sums of all shifts come from one sort.

    Args:
        values: 1-D integer array (the rounded noisy counts).

    Returns:
        ``[len]`` int64, >= 0.
    """
    x = np.asarray(values, dtype=np.int64).ravel()
    if x.size == 0 or int(x.min()) >= 0:
        return x.copy()
    total = int(x.sum())
    ordered = np.sort(x)
    prefix = np.concatenate([[0], np.cumsum(ordered)])
    shifts = np.arange(-int(ordered[0]), dtype=np.int64)
    above = np.searchsorted(ordered, shifts, side="right")  # entries > shift start here
    clipped = (prefix[-1] - prefix[above]) - shifts * (x.size - above)
    best = int(shifts[np.argmin(np.abs(clipped - total))])
    return np.maximum(x - best, 0)


def _noisy_counts(counts: np.ndarray, scale: float, rng: np.random.Generator) -> np.ndarray:
    """counts + Lap(scale), rounded to the nearest integer and Norm-Sub'ed."""
    noisy = counts + rng.laplace(0.0, scale, size=counts.size)
    return norm_sub(np.rint(noisy).astype(np.int64))


def _adjacency(pairs: np.ndarray, num_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR ``(indptr, indices)`` of the undirected graph ``pairs`` (each edge once)."""
    src = np.concatenate([pairs[0], pairs[1]])
    dst = np.concatenate([pairs[1], pairs[0]])
    order = np.argsort(src, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=num_nodes))]).astype(np.int64)
    return indptr, dst[order]


# -- phase 1 ---------------------------------------------------------------------------------------


def random_supernodes(num_nodes: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random split of the N nodes into S = ceil(N / size) super-nodes of ``size``
    nodes (the last holds the rest), data-independent; ``[N]`` int64 labels in [0, S)."""
    labels = np.empty(num_nodes, dtype=np.int64)
    labels[rng.permutation(num_nodes)] = np.arange(num_nodes, dtype=np.int64) // size
    return labels


def supergraph_counts(pairs: np.ndarray, groups: np.ndarray, num_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Phase 1's counted vector: ``(W, c)``.

    ``W`` ``[S(S-1)/2]``: W_ab = #edges between super-nodes a < b, at the pair code of (a, b)
    (:func:`graphpriv.data.graph.pair_codes` over S); ``c`` ``[S]``: c_a = #edges inside super-node
    a. Each edge is counted once, in one entry, so the concatenation has L1 sensitivity 1.
    """
    a, b = groups[pairs[0]], groups[pairs[1]]
    inside = a == b
    between = np.stack([a[~inside], b[~inside]])
    cells = num_groups * (num_groups - 1) // 2
    inter = np.bincount(pair_codes(between, num_groups), minlength=cells).astype(np.int64)
    intra = np.bincount(a[inside], minlength=num_groups).astype(np.int64)
    return inter, intra


def louvain_partition(inter: np.ndarray, intra: np.ndarray, *, resolution: float, seed: int) -> np.ndarray:
    """Louvain on the weighted super-graph: ``[S]`` int64 community labels in [0, K1).

    The super-graph has the S super-nodes, an edge (a, b) of weight W_ab for every positive
    ``inter`` cell and a self-loop of weight c_a for every positive ``intra`` entry (then, for a
    partition of the super-nodes, networkx's modularity of the super-graph equals the modularity of
    the lifted partition of the original graph). networkx's ``louvain_communities(weight="weight",
    resolution=resolution, seed=seed)``; the communities are numbered in the order returned.
    """
    num_groups = int(intra.size)
    graph = nx.Graph()
    graph.add_nodes_from(range(num_groups))
    cells = np.flatnonzero(inter)
    ends = decode_pairs(cells, num_groups)
    graph.add_weighted_edges_from(zip(ends[0].tolist(), ends[1].tolist(), inter[cells].tolist()))
    loops = np.flatnonzero(intra)
    graph.add_weighted_edges_from(zip(loops.tolist(), loops.tolist(), intra[loops].tolist()))
    labels = np.empty(num_groups, dtype=np.int64)
    for index, members in enumerate(nx.community.louvain_communities(graph, weight="weight",
                                                                    resolution=resolution, seed=seed)):
        labels[list(members)] = index
    return labels


def initial_communities(pairs: np.ndarray, num_nodes: int, *, epsilon: float, supernode_size: int,
                        resolution: float, rng: np.random.Generator) -> tuple[np.ndarray, dp_event.DpEvent, dict]:
    """Phase 1 (module docstring): random super-nodes, their noisy super-graph, Louvain.

    Args:
        pairs: ``[2, m]`` int64 edges u < v, each once. num_nodes: N.
        epsilon: eps1 > 0. supernode_size: N1 in [1, N]. resolution: Louvain's t > 0.
        rng: numpy Generator.

    Returns:
        ``(communities, LaplaceDpEvent(1/eps1), info)``: ``[N]`` int64 labels in [0, K1) (every
        label used), and ``info`` ``{"num_supernodes": S, "initial_communities": K1}``.

    Raises:
        ValueError: supernode_size outside [1, N], or S(S-1)/2 above :data:`MAX_SUPERGRAPH_CELLS`.
    """
    check_epsilon(epsilon)
    if not 1 <= supernode_size <= num_nodes:
        raise ValueError(f"supernode_size must be in [1, {num_nodes}] (got {supernode_size})")
    num_groups = -(-num_nodes // supernode_size)
    if num_groups * (num_groups - 1) // 2 > MAX_SUPERGRAPH_CELLS:
        raise ValueError(f"{num_groups} super-nodes give {num_groups * (num_groups - 1) // 2} super-graph cells, "
                         f"above {MAX_SUPERGRAPH_CELLS}")
    groups = random_supernodes(num_nodes, supernode_size, rng)
    inter, intra = supergraph_counts(pairs, groups, num_groups)
    noisy_inter = _noisy_counts(inter, 1.0 / epsilon, rng)
    noisy_intra = _noisy_counts(intra, 1.0 / epsilon, rng)
    labels = louvain_partition(noisy_inter, noisy_intra, resolution=resolution, seed=int(rng.integers(2**32)))
    _, communities = np.unique(labels[groups], return_inverse=True)
    info = {"num_supernodes": num_groups, "initial_communities": int(communities.max()) + 1}
    return communities.astype(np.int64), dp_event.LaplaceDpEvent(1.0 / epsilon), info


# -- phase 2 ---------------------------------------------------------------------------------------


def em_rate(epsilon: float, em_scale: Literal["paper", "monotone"] = "paper") -> float:
    """Phase 2's lam: eps2 / 4 (``"paper"``, the authors' code) or eps2 / 2 (``"monotone"``)."""
    check_epsilon(epsilon)
    if em_scale not in EM_SCALES:
        raise ValueError(f"'em_scale' must be one of {', '.join(EM_SCALES)} (got {em_scale!r})")
    return epsilon / 4.0 if em_scale == "paper" else epsilon / 2.0


def neighbour_counts(indptr: np.ndarray, indices: np.ndarray, communities: np.ndarray, node: int,
                     num_communities: int) -> np.ndarray:
    """k_node(C) for every community label C: ``[num_communities]`` int64 counts of ``node``'s
    neighbours in C (phase 2's scores, up to the shift k_node(own))."""
    return np.bincount(communities[indices[indptr[node]:indptr[node + 1]]], minlength=num_communities)


def em_probabilities(scores: np.ndarray, rate: float) -> np.ndarray:
    """The exponential mechanism's law over candidates with ``scores``: p ~ exp(rate * score)
    (computed after subtracting the maximum, so any common shift of the scores is irrelevant)."""
    weights = np.exp(rate * (np.asarray(scores, dtype=np.float64) - np.max(scores)))
    return weights / weights.sum()


def adjust_communities(pairs: np.ndarray, num_nodes: int, communities: np.ndarray, *, epsilon: float,
                       em_scale: Literal["paper", "monotone"] = "paper", rng: np.random.Generator,
                       order: np.ndarray | None = None) -> tuple[np.ndarray, list[dp_event.DpEvent]]:
    """Phase 2 (module docstring): every node, in a random order, moves by the exponential mechanism.

    Node w chooses among the non-empty communities (its own included) with probability
    ~ exp(lam k_w(C)), lam = :func:`em_rate`; it moves at once. O(N K + m).

    Args:
        pairs: ``[2, m]`` edges u < v, each once. num_nodes: N.
        communities: ``[N]`` int64 labels in [0, K1) (phase 1's output; not modified).
        epsilon: eps2 > 0. em_scale: ``"paper"`` or ``"monotone"``. rng: numpy Generator.
        order: the node order (default: a uniformly random permutation from ``rng``).

    Returns:
        ``(labels, events)``: ``[N]`` int64 labels renumbered to [0, K) in order of first label
        value (K <= K1, every label used), and ``[pure_dp_event(eps2 / 2)] * 2``.
    """
    rate = em_rate(epsilon, em_scale)
    indptr, indices = _adjacency(np.asarray(pairs, dtype=np.int64).reshape(2, -1), num_nodes)
    labels = np.array(communities, dtype=np.int64, copy=True)
    num_labels = int(labels.max()) + 1 if labels.size else 0
    sizes = np.bincount(labels, minlength=num_labels)
    order = rng.permutation(num_nodes) if order is None else np.asarray(order, dtype=np.int64)
    draws = rng.random(order.size)
    for node, draw in zip(order.tolist(), draws.tolist()):
        candidates = np.flatnonzero(sizes)
        lo, hi = indptr[node], indptr[node + 1]
        if hi > lo:
            counts = np.bincount(labels[indices[lo:hi]], minlength=num_labels)[candidates]
            cumulative = np.cumsum(np.exp(rate * (counts - counts.max())))
            pick = int(np.searchsorted(cumulative, draw * cumulative[-1], side="right"))
        else:  # all scores 0: uniform
            pick = int(draw * candidates.size)
        chosen = int(candidates[min(pick, candidates.size - 1)])
        sizes[labels[node]] -= 1
        sizes[chosen] += 1
        labels[node] = chosen
    _, renumbered = np.unique(labels, return_inverse=True)
    return renumbered.astype(np.int64), [pure_dp_event(epsilon / 2.0)] * 2


# -- phase 3 ---------------------------------------------------------------------------------------


def community_statistics(pairs: np.ndarray, communities: np.ndarray,
                         num_communities: int) -> tuple[np.ndarray, np.ndarray]:
    """Phase 3's counted vectors: ``(E, d)``.

    ``E`` ``[K(K-1)/2]``: E_ij = #edges between communities i < j at the pair code of (i, j) over
    K; ``d`` ``[N]``: each node's number of neighbours inside its own community. One edge changes
    one E_ij by 1 (between communities) or two d's by 1 each (inside one): (E, d / 2) has L1
    sensitivity 1.
    """
    a, b = communities[pairs[0]], communities[pairs[1]]
    inside = a == b
    cells = num_communities * (num_communities - 1) // 2
    inter = np.bincount(pair_codes(np.stack([a[~inside], b[~inside]]), num_communities),
                        minlength=cells).astype(np.int64)
    intra = np.bincount(pairs[:, inside].ravel(), minlength=communities.size).astype(np.int64)
    return inter, intra


@dataclass(frozen=True, eq=False)
class PrivGraphRelease:
    """PrivGraph's release: the community partition and the noisy community statistics.

    Attributes:
        communities: ``[N]`` int64 labels in [0, K), every label used (phase 2's output).
        intra_degrees: ``[N]`` int64, node v's noisy degree inside its community, in [0, |C| - 1].
        inter_counts: ``[K(K-1)/2]`` int64, the noisy edge count E_ij between communities i < j at
            the pair code of (i, j) over K, in [0, |C_i| |C_j|].
    """

    communities: np.ndarray
    intra_degrees: np.ndarray
    inter_counts: np.ndarray

    @property
    def num_communities(self) -> int:
        """K."""
        return int(self.communities.max()) + 1 if self.communities.size else 0

    def equals(self, other: PrivGraphRelease) -> bool:
        """The same partition and the same noisy statistics."""
        return all(np.array_equal(getattr(self, f), getattr(other, f))
                   for f in ("communities", "intra_degrees", "inter_counts"))

    def pack(self) -> np.ndarray:
        """One ``[1 + 2N + K(K-1)/2]`` int64 vector: K, the labels, the degrees, the counts."""
        return np.concatenate([[self.num_communities], self.communities, self.intra_degrees,
                               self.inter_counts]).astype(np.int64)

    @classmethod
    def unpack(cls, vector: np.ndarray, num_nodes: int) -> PrivGraphRelease:
        """The inverse of :meth:`pack`, checked.

        Raises:
            ValueError: a malformed vector (wrong length, labels not covering [0, K), degrees or
                counts outside their ranges).
        """
        v = np.asarray(vector)
        if v.ndim != 1 or not np.issubdtype(v.dtype, np.integer) or v.size < 1 + 2 * num_nodes:
            raise ValueError("the PrivGraph release must be a 1-D integer vector [1 + 2N + K(K-1)/2]")
        k = int(v[0])
        if k < 1 or v.size != 1 + 2 * num_nodes + k * (k - 1) // 2:
            raise ValueError(f"the PrivGraph release has {v.size} entries, not 1 + 2N + K(K-1)/2 for K = {k}")
        labels = v[1:1 + num_nodes].astype(np.int64)
        degrees = v[1 + num_nodes:1 + 2 * num_nodes].astype(np.int64)
        counts = v[1 + 2 * num_nodes:].astype(np.int64)
        if labels.min() < 0 or labels.max() != k - 1:
            raise ValueError("the community labels must lie in [0, K) and use K - 1")
        sizes = np.bincount(labels, minlength=k)
        if (sizes == 0).any():
            raise ValueError("every community of the release must hold a node")
        if degrees.min() < 0 or (degrees > sizes[labels] - 1).any():
            raise ValueError("the intra-community degrees must lie in [0, |C| - 1]")
        ends = decode_pairs(np.arange(counts.size), k)
        if counts.size and (counts.min() < 0 or (counts > sizes[ends[0]] * sizes[ends[1]]).any()):
            raise ValueError("the inter-community counts must lie in [0, |C_i| |C_j|]")
        return cls(labels, degrees, counts)


def _extract(pairs: np.ndarray, communities: np.ndarray, *, epsilon: float,
             rng: np.random.Generator) -> tuple[PrivGraphRelease, dp_event.DpEvent]:
    """Phase 3 (module docstring): the noisy statistics of the partition ``communities``."""
    check_epsilon(epsilon)
    k = int(communities.max()) + 1
    inter, intra = community_statistics(pairs, communities, k)
    sizes = np.bincount(communities, minlength=k)
    noisy_inter = _noisy_counts(inter, 1.0 / epsilon, rng)
    ends = decode_pairs(np.arange(noisy_inter.size), k)
    noisy_inter = np.minimum(noisy_inter, sizes[ends[0]] * sizes[ends[1]])
    noisy_intra = np.rint(intra + rng.laplace(0.0, 2.0 / epsilon, size=intra.size)).astype(np.int64)
    order = np.argsort(communities, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    for c in range(k):  # Norm-Sub per community, as the code does
        members = order[bounds[c]:bounds[c + 1]]
        noisy_intra[members] = norm_sub(noisy_intra[members])
    noisy_intra = np.clip(noisy_intra, 0, sizes[communities] - 1)
    return PrivGraphRelease(communities, noisy_intra, noisy_inter), dp_event.LaplaceDpEvent(1.0 / epsilon)


def privgraph_release(pairs: np.ndarray, num_nodes: int, *, epsilon: float,
                      split: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3), supernode_size: int = 20,
                      resolution: float = 1.0, em_scale: Literal["paper", "monotone"] = "paper",
                      rng: np.random.Generator) -> tuple[PrivGraphRelease, list[tuple[str, dp_event.DpEvent]], dict]:
    """PrivGraph's three phases (module docstring): pure epsilon-DP, edge-level.

    Args:
        pairs: ``[2, m]`` int64 undirected edges, each once with u < v, no self-loop (e.g.
            :func:`graphpriv.data.graph.undirected_pairs` of a checked graph).
        num_nodes: N >= 2 (public). epsilon: the total budget, > 0.
        split: the shares (eps1, eps2, eps3) / epsilon, each > 0, summing to 1 (normalised).
        supernode_size: N1, nodes per super-node, in [1, N]. resolution: phase 1's Louvain t > 0.
        em_scale: ``"paper"`` (lam = eps2 / 4) or ``"monotone"`` (lam = eps2 / 2).
        rng: numpy Generator (all of the mechanism's randomness).

    Returns:
        ``(release, events, info)``: the :class:`PrivGraphRelease`; ``events``
        ``[("community initialisation", LaplaceDpEvent(1/eps1)), ("community adjustment",
        pure_dp_event(eps2/2)) x 2, ("information extraction", LaplaceDpEvent(1/eps3))]``;
        ``info``: numbers from the release and the settings only (``eps_init``, ``eps_adjust``,
        ``eps_extract``, ``em_rate``, ``num_supernodes``, ``initial_communities``,
        ``num_communities``, ``noisy_inter_edges``, ``noisy_intra_degree_sum``,
        ``expected_edges``).

    Raises:
        ValueError: epsilon not a finite number > 0, a bad split, supernode_size outside [1, N],
            too many super-nodes, an unknown em_scale, or pairs that are not distinct u < v pairs
            in [0, N).
    """
    check_epsilon(epsilon)
    shares = np.asarray(split, dtype=np.float64)
    if shares.shape != (3,) or not np.isfinite(shares).all() or (shares <= 0).any() or abs(shares.sum() - 1) > 1e-6:
        raise ValueError(f"'split' must be three shares > 0 summing to 1 (got {tuple(split)})")
    eps1, eps2, eps3 = (epsilon * shares / shares.sum()).tolist()
    rate = em_rate(eps2, em_scale)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(2, -1)
    if pairs.size and (pairs.min() < 0 or pairs.max() >= num_nodes or not bool((pairs[0] < pairs[1]).all())):
        raise ValueError(f"'pairs' must be u < v node pairs in [0, {num_nodes})")
    if np.unique(pair_codes(pairs, num_nodes)).size != pairs.shape[1]:
        raise ValueError("'pairs' must be distinct (each undirected edge once)")
    initial, init_event, info = initial_communities(pairs, num_nodes, epsilon=eps1, supernode_size=supernode_size,
                                                    resolution=resolution, rng=rng)
    adjusted, adjust_events = adjust_communities(pairs, num_nodes, initial, epsilon=eps2, em_scale=em_scale, rng=rng)
    release, extract_event = _extract(pairs, adjusted, epsilon=eps3, rng=rng)
    events = [("community initialisation", init_event),
              *[("community adjustment", event) for event in adjust_events],
              ("information extraction", extract_event)]
    info = {"eps_init": eps1, "eps_adjust": eps2, "eps_extract": eps3, "em_rate": rate, **info,
            "num_communities": release.num_communities,
            "noisy_inter_edges": int(release.inter_counts.sum()),
            "noisy_intra_degree_sum": int(release.intra_degrees.sum()),
            "expected_edges": float(release.inter_counts.sum()
                                    + expected_chung_lu_edges(release.intra_degrees, release.communities))}
    return release, events, info


# -- reconstruction (post-processing) --------------------------------------------------------------


def _sparse_distinct(populations: np.ndarray, counts: np.ndarray,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Per group g, ``counts[g]`` distinct uniform values in [0, populations[g]) (all groups with
    populations >= 1, counts <= populations / 2 for speed): rounds of exactly the missing number of
    uniform draws, new distinct values kept, until every group is complete."""
    base = np.concatenate([[0], np.cumsum(populations)[:-1]]).astype(np.int64)
    keys = np.empty(0, dtype=np.int64)
    have = np.zeros(populations.size, dtype=np.int64)
    while True:
        need = counts - have
        active = np.flatnonzero(need)
        if active.size == 0:
            break
        group = np.repeat(active, need[active])
        fresh = np.unique(base[group] + rng.integers(0, populations[group]))
        fresh = fresh[not_in_sorted(fresh, keys)]
        keys = np.sort(np.concatenate([keys, fresh]))
        have += np.bincount(np.searchsorted(base, fresh, side="right") - 1, minlength=populations.size)
    group = np.searchsorted(base, keys, side="right") - 1
    return group, keys - base[group]


def grouped_distinct(populations: np.ndarray, counts: np.ndarray,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """For every group g, a uniformly random ``counts[g]``-subset of [0, ``populations[g]``),
    all groups at once.

    Within a group the process (rounds of exactly the missing number of i.i.d. uniform draws, the
    new distinct values kept) is invariant under relabelling the population and stops on sizes
    only, so the set is a uniform subset of its size; groups draw independently. A group asking
    for more than half its population draws the values it leaves out instead, and keeps the rest.

    Args:
        populations: ``[G]`` int64 >= 0. counts: ``[G]`` int64 in [0, populations]. rng: Generator.

    Returns:
        ``(group, value)``: ``[sum(counts)]`` int64 arrays, sorted by group then value.

    Raises:
        ValueError: counts outside [0, populations].
    """
    pop = np.asarray(populations, dtype=np.int64).ravel()
    cnt = np.asarray(counts, dtype=np.int64).ravel()
    if pop.shape != cnt.shape or (cnt < 0).any() or (cnt > pop).any():
        raise ValueError("need 0 <= counts <= populations, group by group")
    dense = 2 * cnt > pop
    sparse = np.flatnonzero(~dense & (cnt > 0))
    groups, values = [], []
    if sparse.size:
        g, v = _sparse_distinct(pop[sparse], cnt[sparse], rng)
        groups.append(sparse[g])
        values.append(v)
    full = np.flatnonzero(dense)
    if full.size:
        sizes = pop[full]
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        every = np.arange(int(sizes.sum()), dtype=np.int64)
        left_out = np.zeros(every.size, dtype=bool)
        holes = np.flatnonzero(cnt[full] < sizes)
        if holes.size:
            g, v = _sparse_distinct(sizes[holes], sizes[holes] - cnt[full][holes], rng)
            left_out[starts[holes][g] + v] = True
        kept = every[~left_out]
        local = np.searchsorted(starts, kept, side="right") - 1
        groups.append(full[local])
        values.append(kept - starts[local])
    if not groups:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    group, value = np.concatenate(groups), np.concatenate(values)
    order = np.lexsort((value, group))
    return group[order], value[order]


def _triangle(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Code c -> (i, j), j < i, with c = i(i-1)/2 + j: the pairs of a class, whatever its size."""
    i = np.floor((1.0 + np.sqrt(1.0 + 8.0 * codes)) / 2.0).astype(np.int64)
    for _ in range(2):  # float rounding at the row boundaries
        i = np.where(i * (i - 1) // 2 > codes, i - 1, i)
        i = np.where((i + 1) * i // 2 <= codes, i + 1, i)
    return i, codes - i * (i - 1) // 2


def _class_pairs(weights: np.ndarray, blocks: np.ndarray):
    """The nodes with weight > 0 sorted by (block, weight), their classes (runs of equal (block,
    weight)) and every pair of classes a <= b of one block with its population and probability."""
    live = np.flatnonzero(weights > 0)
    order = live[np.lexsort((weights[live], blocks[live]))]
    b, w = blocks[order], weights[order]
    first = np.flatnonzero(np.concatenate([[True], (b[1:] != b[:-1]) | (w[1:] != w[:-1])]))
    size = np.diff(np.concatenate([first, [order.size]]))
    cblock, cweight = b[first], w[first]
    totals = np.bincount(blocks, weights=weights.astype(np.float64))
    block_end = np.searchsorted(cblock, cblock, side="right")  # first class of the next block
    partners = block_end - np.arange(first.size)
    a = np.repeat(np.arange(first.size), partners)
    bb = a + (np.arange(a.size) - np.repeat(np.cumsum(partners) - partners, partners))
    same = a == bb
    population = np.where(same, size[a] * (size[a] - 1) // 2, size[a] * size[bb])
    prob = np.minimum(1.0, cweight[a].astype(np.float64) * cweight[bb] / totals[cblock[a]])
    return order, first, size, a, bb, population, prob


def expected_chung_lu_edges(weights: np.ndarray, blocks: np.ndarray) -> float:
    """E[#edges] of :func:`chung_lu_within`: sum over pairs u != v in one block of
    min(1, w_u w_v / S_block)."""
    w = np.asarray(weights, dtype=np.int64)
    if not (w > 0).any():
        return 0.0
    *_, population, prob = _class_pairs(w, np.asarray(blocks, dtype=np.int64))
    return float(np.dot(population, prob))


def chung_lu_within(weights: np.ndarray, blocks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A Chung–Lu graph inside every block, exactly: each pair u != v of one block B is an edge
    independently with probability min(1, w_u w_v / S_B), S_B = sum of w over B (the authors'
    ``generate_intra_edge``).

    Nodes of one block with equal weight form a class; all pairs between two classes (or inside
    one) share one probability p, so their edge count is Binomial(#pairs, p) and the edges a
    uniform subset of that size (:func:`grouped_distinct`), which is the same law as independent
    Bernoulli(p) pairs. Cost O(N log N + #class pairs + #edges), never a |B| x |B| matrix.

    Args:
        weights: ``[N]`` non-negative integers (expected degrees). blocks: ``[N]`` int64 labels.
        rng: numpy Generator.

    Returns:
        ``[2, E']`` int64 pairs (u, v), u != v, distinct (any direction).
    """
    w = np.asarray(weights, dtype=np.int64)
    if not (w > 0).any():
        return np.empty((2, 0), dtype=np.int64)
    order, first, size, a, b, population, prob = _class_pairs(w, np.asarray(blocks, dtype=np.int64))
    counts = rng.binomial(population, prob)
    group, value = grouped_distinct(population, counts, rng)
    ca, cb = a[group], b[group]
    same = ca == cb
    i, j = _triangle(value[same])
    u = np.empty(value.size, dtype=np.int64)
    v = np.empty(value.size, dtype=np.int64)
    u[same], v[same] = order[first[ca[same]] + i], order[first[ca[same]] + j]
    diff = ~same
    u[diff] = order[first[ca[diff]] + value[diff] // size[cb[diff]]]
    v[diff] = order[first[cb[diff]] + value[diff] % size[cb[diff]]]
    return np.stack([u, v])


def inter_community_pairs(communities: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For every pair of communities i < j, ``counts`` at its pair code over K of distinct pairs
    drawn uniformly from C_i x C_j (:func:`grouped_distinct`); ``[2, sum(counts)]`` int64."""
    labels = np.asarray(communities, dtype=np.int64)
    k = int(labels.max()) + 1
    sizes = np.bincount(labels, minlength=k)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    members = np.argsort(labels, kind="stable")
    cells = np.flatnonzero(counts)
    ends = decode_pairs(cells, k)
    group, value = grouped_distinct(sizes[ends[0]] * sizes[ends[1]], np.asarray(counts)[cells], rng)
    ci, cj = ends[0][group], ends[1][group]
    return np.stack([members[starts[ci] + value // sizes[cj]], members[starts[cj] + value % sizes[cj]]])


def reconstruct(release: PrivGraphRelease, rng: np.random.Generator) -> np.ndarray:
    """A graph from the release (post-processing): Chung–Lu inside every community with the noisy
    degrees, E_ij uniform distinct pairs between communities i < j; ``[2, E']`` int64 pairs
    (u, v), u != v, distinct (any direction)."""
    intra = chung_lu_within(release.intra_degrees, release.communities, rng)
    inter = inter_community_pairs(release.communities, release.inter_counts, rng)
    return np.concatenate([intra, inter], axis=1)

