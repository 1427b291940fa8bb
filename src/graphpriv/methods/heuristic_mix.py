"""A private mixture of bounded-influence heuristics: ``dp-heuristic-mix`` (edge-level DP link prediction).

A pair's score is w . phi(u, v) with phi = (log1p RA, log1p RA3): resource allocation over common
neighbours and over simple length-3 paths (:func:`~graphpriv.linkpred.heuristics.resource_allocation_paths3`),
both computed on the training graph. The only thing learned from the data is the direction
w = (cos theta, sin theta), chosen among ``angles`` directions of [0, pi/2] by the exponential
mechanism. Its utility is a ramp AUC (:func:`~graphpriv.linkpred.ramp_auc.ramp_auc_sum`) of
training edges against node pairs drawn before looking at the data.

Why it can be private at a small cost: both heuristics weigh a path by the inverse degrees of its
interior nodes, so one edge moves the features of all pairs together by a bounded amount (< 3 for
RA, < 5 for RA3: :mod:`graphpriv.privacy.influence`), and the ramp turns that into a bounded
change of the utility (:func:`~graphpriv.privacy.influence.ramp_utility_sensitivity`), while the
utility itself grows with the number of training edges. The selection is one draw, pure epsilon-DP.

Threat model: the link-prediction protocol's, as for DPLP (Ran et al., "Differentially private
graph neural networks for link prediction", the model is the release): what is private is the
fitted direction. Scoring a pair reads the training graph, as DPLP's subgraphs and every
heuristic do; scores published for many pairs reveal that graph, not the direction.

Source: graphpriv (docs/linkpred.md, "A private link predictor above common neighbours"); the
exponential mechanism (McSherry & Talwar, FOCS 2007) by Gumbel-max (Durfee & Rogers, NeurIPS 2019).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
from pydantic import Field
from torch_geometric.data import Data

from graphpriv.data.graph import decode_pairs, to_csr, undirected_pairs
from graphpriv.data.validation import check_data, check_node_pairs
from graphpriv.errors import ConfigError
from graphpriv.linkpred.heuristics import resource_allocation, resource_allocation_paths3
from graphpriv.linkpred.ramp_auc import ramp_auc_sum
from graphpriv.methods.base import MethodConfig, Progress, Timer, no_progress
from graphpriv.methods.estimator import Estimator
from graphpriv.methods.pair_auc import PairAUC
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.hooks import AuditHook, noise_scale_of
from graphpriv.privacy.influence import RA3_INFLUENCE, RA_INFLUENCE, ramp_utility_sensitivity
from graphpriv.privacy.mechanisms import gumbel_top_k
from graphpriv.privacy.units import PrivacyUnit

__all__ = ["FEATURES", "HeuristicMixConfig", "HeuristicMixLinkPredictor", "directions", "mix_features",
           "positive_sample", "reference_pairs"]

#: The mixed features, in the order of a direction's coordinates, with their total influences.
FEATURES: dict[str, float] = {"ra": RA_INFLUENCE, "ra3": RA3_INFLUENCE}

#: How far the keyed positive sample's membership change moves the utility under one edge added or
#: removed: the edge enters (or leaves), and may push out (or let in) the sample's last key; the
#: two terms are each in [0, 1] and enter with opposite signs, so together they move it by at most 1
#: (:func:`positive_sample` changes at most two members).
MEMBERSHIP = 1.0


class HeuristicMixConfig(MethodConfig):
    """The selection's budget and utility, and the link protocol's split."""

    epsilon: float = Field(4.0, gt=0, description="edge-level epsilon of the selection (pure DP)")
    angles: int = Field(16, ge=2, le=1024, description="directions of [0, pi/2] the exponential mechanism chooses "
                        "among (the first is RA alone, the last RA3 alone)")
    margin: float = Field(1.0, gt=0, description="half-width of the utility's ramp, in log1p units of the features")
    max_positives: int = Field(20_000, ge=1, description="training edges the utility reads at most (a keyed "
                               "sample when the graph has more)")
    reference_ratio: float = Field(2.0, gt=0, description="node pairs drawn before the data per positive the "
                                   "utility can read (|R| = ratio x max_positives, at most all pairs)")
    val_ratio: float = Field(0.05, ge=0, lt=1, description="protocol: share of edges held out for validation")
    test_ratio: float = Field(0.10, gt=0, lt=1, description="protocol: share of edges held out for testing")


def directions(angles: int) -> np.ndarray:
    """``[angles, 2]`` unit directions (cos theta, sin theta), theta evenly spaced on [0, pi/2]."""
    theta = np.linspace(0.0, math.pi / 2, angles)
    return np.stack([np.cos(theta), np.sin(theta)], axis=1)


def mix_features(adj: sp.csr_matrix, pairs: np.ndarray) -> np.ndarray:
    """``[P, 2]`` float64 features (log1p RA, log1p RA3) of ``[2, P]`` pairs on the graph ``adj``.

    log1p is 1-Lipschitz on [0, inf), so each feature's total influence is its heuristic's
    (:data:`FEATURES`)."""
    return np.stack([np.log1p(resource_allocation(adj, pairs)), np.log1p(resource_allocation_paths3(adj, pairs))],
                    axis=1)


def _pair_keys(pairs: np.ndarray, seed: int) -> np.ndarray:
    """A keyed 64-bit hash of each pair (u < v) (splitmix64's finaliser): a data-independent order."""
    with np.errstate(over="ignore"):
        z = (pairs[0].astype(np.uint64) << np.uint64(32)) ^ pairs[1].astype(np.uint64)
        z = z + np.uint64(0x9E3779B97F4A7C15) * np.uint64(seed % (1 << 63) + 1)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def positive_sample(pairs: np.ndarray, limit: int, seed: int) -> np.ndarray:
    """The ``limit`` pairs of ``[2, E]`` (u < v) with the smallest keys (:func:`_pair_keys`), all when
    E <= limit; ``[2, min(E, limit)]``. One pair added to or removed from ``pairs`` changes at most
    two members, one in and one out: the keys do not depend on the other pairs."""
    if pairs.shape[1] <= limit:
        return pairs
    keep = np.argpartition(_pair_keys(pairs, seed), limit - 1)[:limit]
    return pairs[:, np.sort(keep)]


def reference_pairs(num_nodes: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``[2, min(count, C(N, 2))]`` distinct node pairs u < v drawn uniformly without replacement
    (every pair when ``count >= C(N, 2)``): drawn from N and the generator only, before the data."""
    total = num_nodes * (num_nodes - 1) // 2
    if count >= total:
        index = np.arange(total, dtype=np.int64)
    else:
        chosen: np.ndarray = np.zeros(0, dtype=np.int64)
        while chosen.size < count:
            draw = rng.integers(0, total, size=2 * (count - chosen.size) + 16, dtype=np.int64)
            chosen = np.unique(np.concatenate([chosen, draw]))
        index = np.sort(rng.permutation(chosen)[:count])
    return decode_pairs(index, num_nodes)  # row-major index of the upper triangle -> (u, v), u < v


class HeuristicMixLinkPredictor(PairAUC, Estimator):
    """Link scores w . (log1p RA, log1p RA3) on the training graph, the direction w chosen privately.

    Privacy: edge-level, pure epsilon-DP (neighbouring training graphs differ by one edge added or
    removed). The release is the chosen direction: the exponential mechanism over the
    ``angles`` directions with utility U(w) (:func:`~graphpriv.privacy.influence.ramp_utility_sensitivity`:
    P the keyed sample of at most ``max_positives`` training edges, R = ``reference_ratio`` x
    ``max_positives`` distinct node pairs, at most all of them, drawn from N and the seed before the
    data), Gumbel scale 2 Delta U / epsilon. The sensitivity bound is checked against brute force
    on small graphs (tests/privacy/test_influence.py) and the selection is audited
    (:mod:`graphpriv.audit.heuristic_mix`). The saved file also holds the training graph, needed to
    score pairs: that graph is not protected (the scores read it, as every heuristic's do).

    Args:
        random_state: seed of the positive sample's keys, the reference pairs and the mechanism.
        **params: the fields of :class:`HeuristicMixConfig`.

    Attributes:
        theta_: the chosen angle (radians, in [0, pi/2]). weights_: ``[2]`` float64, (cos, sin).
        choice_: its index among the directions. graph_: ``[2, E]`` LongTensor, the training graph's
        undirected edges. num_nodes_: N. info_: ``max_positives`` (the sample's size limit: the
        exact count would publish the edge count), ``references``, ``sensitivity``
        (Delta U), ``gumbel_scale``. privacy_report_: epsilon, delta 0, edge unit. ledger_.

    Raises:
        ConfigError: an unknown hyperparameter or an invalid value.
    """

    config_cls = HeuristicMixConfig
    _fitted_private = ("_adj",)

    def fit(self, data: Data, val_pos: Any = None, val_neg: Any = None, progress: Progress | None = no_progress,
            *, audit_hook: AuditHook | None = None) -> HeuristicMixLinkPredictor:
        """Choose the direction on the training graph ``data`` by the exponential mechanism.

        Args:
            data: the training graph (PyG ``Data``, ``edge_index [2, 2E]``, ``num_nodes`` N).
            val_pos, val_neg: accepted for the link protocol's common call and checked (``[2, P]``
                node ids); held-out edges are not the training graph's, so they are not read.
            progress: ``progress(1, 2)`` after the features, ``progress(2, 2)`` after the draw.
            audit_hook: for a privacy audit only (:mod:`graphpriv.audit.heuristic_mix`): its
                ``noise_scale`` multiplies the Gumbel scale (a deliberate fault); its canaries, if
                any, are :class:`~graphpriv.privacy.hooks.UtilityCanaries`, handed the utilities
                and the mechanism after the fit's own draw.

        Returns:
            ``self``, fitted.

        Raises:
            DatasetError: malformed ``data`` (no edges, ids out of range) or validation pairs.
                ConfigError: an ``audit_hook`` that is not an AuditHook, or whose canaries are not
                UtilityCanaries.
        """
        config = self._config
        who = type(self).__name__
        if audit_hook is not None and (not isinstance(audit_hook, AuditHook) or not (
                audit_hook.canaries is None or callable(getattr(audit_hook.canaries, "draw", None)))):
            raise ConfigError(f"audit_hook must be a graphpriv.privacy.hooks.AuditHook whose canaries, if any, are "
                              f"UtilityCanaries for {who}")
        data = check_data(data, method=who)
        num_nodes = int(data.num_nodes)
        for name, pairs in (("val_pos", val_pos), ("val_neg", val_neg)):
            if pairs is not None:
                check_node_pairs(pairs, num_nodes, name=name)
        progress = progress or no_progress
        timer = Timer()
        edges = np.ascontiguousarray(undirected_pairs(data.edge_index))
        all_pairs = num_nodes * (num_nodes - 1) // 2
        limit = min(config.max_positives, all_pairs)
        rng = np.random.default_rng([self.random_state, 1])
        with timer.phase("features"):
            references = reference_pairs(num_nodes, max(1, math.ceil(config.reference_ratio * limit)), rng)
            adj = to_csr(torch.from_numpy(edges), num_nodes)
            positives = positive_sample(edges, limit, self.random_state)
            pos, ref = mix_features(adj, positives), mix_features(adj, references)
        progress(1, 2)
        sensitivity = ramp_utility_sensitivity(margin=config.margin, influences=tuple(FEATURES.values()),
                                               positives=limit, references=references.shape[1],
                                               membership=MEMBERSHIP)
        grid = directions(config.angles)
        with timer.phase("selection"):
            utility = torch.tensor([ramp_auc_sum(pos @ w, ref @ w, margin=config.margin) for w in grid],
                                   dtype=torch.float64)
            generator = torch.Generator().manual_seed(int(self.random_state) * 7919 + 2)

            def mechanism(scores: torch.Tensor) -> tuple[torch.Tensor, Any]:
                return gumbel_top_k(scores, k=1, epsilon=config.epsilon, sensitivity=sensitivity, generator=generator,
                                    noise_scale=noise_scale_of(audit_hook))

            index, event = mechanism(utility)
            if audit_hook is not None and audit_hook.canaries is not None:
                audit_hook.canaries.draw(utility.clone(), sensitivity, lambda scores: int(mechanism(scores)[0][0]))
        progress(2, 2)
        ledger = Ledger(PrivacyUnit.EDGE, delta=0.0, accountant="basic")
        ledger.spend(event, phase="selection", label=f"exponential mechanism over {config.angles} directions")
        choice = int(index[0])
        self.choice_ = choice
        self.theta_ = float(math.pi / 2 * choice / (config.angles - 1))
        self.weights_ = grid[choice].copy()
        self.graph_ = torch.from_numpy(edges)
        self.num_nodes_ = num_nodes
        self._adj = adj
        self.info_ = {"max_positives": int(limit), "references": int(references.shape[1]),
                      "sensitivity": float(sensitivity),
                      "gumbel_scale": float(2 * sensitivity / config.epsilon)}
        self.timings_ = dict(timer.timings)
        self.ledger_ = ledger
        notes = [(f"utility: ramp AUC (margin {config.margin:g}) of at most {limit} training edges (a keyed sample) "
                  f"against {references.shape[1]} node pairs drawn before the data; sensitivity {sensitivity:.4g} "
                  "(total influence of one edge: RA < 3, RA3 < 5)"),
                 "scores read the training graph (the link protocol's threat model): the release is the direction"]
        return self._fitted(ledger.report(notes=notes))

    def _adjacency(self) -> sp.csr_matrix:
        if getattr(self, "_adj", None) is None:
            self._adj = to_csr(self.graph_, self.num_nodes_)
        return self._adj

    def predict_proba(self, pairs: Any) -> torch.Tensor:
        """w . (log1p RA, log1p RA3) of node pairs on the training graph (higher: more likely linked).

        The scores are not probabilities (they are >= 0, not bounded by 1); only their order matters
        (:meth:`score` is a ROC-AUC).

        Args:
            pairs: ``[2, P]`` integer node ids in ``[0, num_nodes_)``.

        Returns:
            ``[P]`` float64 tensor.

        Raises:
            NotFittedError: before ``fit``. DatasetError: a shape other than ``[2, P]`` or an id out
                of range.
        """
        self._check_fitted()
        pairs = np.asarray(check_node_pairs(pairs, self.num_nodes_, name="pairs"), dtype=np.int64)
        return torch.from_numpy(mix_features(self._adjacency(), pairs) @ self.weights_)

    def _get_state(self) -> dict[str, Any]:
        return {"choice": self.choice_, "theta": self.theta_, "weights": torch.from_numpy(self.weights_.copy()),
                "graph": self.graph_.clone(), "num_nodes": self.num_nodes_, "info": dict(self.info_)}

    def _set_state(self, state: dict[str, Any]) -> None:
        weights, graph, n = state["weights"], state["graph"], int(state["num_nodes"])
        if not isinstance(weights, torch.Tensor) or tuple(weights.shape) != (2,):
            raise ValueError("weights must be a [2] tensor")
        if not isinstance(graph, torch.Tensor) or graph.ndim != 2 or graph.shape[0] != 2:
            raise ValueError("graph must be a [2, E] tensor")
        self.choice_, self.theta_ = int(state["choice"]), float(state["theta"])
        self.weights_ = weights.double().numpy().copy()
        self.graph_, self.num_nodes_, self._adj = graph.long(), n, None
        self.info_ = dict(state["info"])
        self.ledger_ = None
