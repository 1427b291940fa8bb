"""DPLP-rank and its baselines: protected-pair DP top-K link recommendation, as one estimator.

:class:`DPLPRanker`; ``transform`` and ``noise`` pick the variant: ``umnn`` + ``gumbel`` (DPLP: a
trained monotone UMNN transform f of the base score, then Gumbel top-K), ``power`` + ``gumbel``
(DPLP-Lin: the trained power transform nu_beta), ``none`` + ``gumbel`` (the exponential mechanism
on the raw score), ``none`` + ``laplace`` / ``none`` + ``staircase`` (one-shot noise of the paper's
calibration, then sort) and ``none`` + ``none`` (sort by the base score, no DP). Source: De &
Chakrabarti, "Differentially Private Link Prediction With Protected Connections" (AAAI 2021),
Algorithm 1, Sec. 4 and App. 14.

``fit`` on one protocol split (:class:`~graphpriv.ranking.protocol.RankingSplit`, or a graph that
``fit`` splits with :func:`~graphpriv.ranking.protocol.ranking_split`): base scores on the training
graph, each divided by its query's bound s_max,u so that it lies in [0, 1] on every u-neighbouring
graph (:func:`graphpriv.ranking.scores.score_range`); for DPLP, f trained (Eq. 4-5) on public
pairs. ``recommend`` then releases, per query, the top-K of f(s) + noise (its ids only). The
protocol that fits, ranks every query's held-out candidates and scores them (the method ids ``dplp-rank``,
``dplp-rank-lin``, ``rank-exponential``, ``rank-laplace``, ``rank-staircase``,
``rank-nonprivate``) is :mod:`graphpriv.evaluation.ranking`.

Privacy (unit: protected pair; relation: u-neighbouring graphs, paper Def. 1: for a query u, two
graphs differing only in the protected pairs of one node w != u, other than (w, u)): each released
top-K list of a query is K eps_p-DP (pure; paper Prop. 4); lists of one query compose, lists of
different queries are guarantees for different relations and do not. Rigorous accounting trains f
on scores of the public graph (the training graph without protected edges: identical on every
u-neighbouring graph), with negatives chosen without looking at protected edges, so f leaks
nothing; and it uses Delta = f(1) - f(0). Paper accounting trains on the training graph's scores
(protected edges included, as the reference code) and uses the reference code's noise scale
2 f(1) / eps_p. The Laplace and staircase baselines add one-shot noise of the paper's calibration
(App. 14.4) and sort; that K eps_p holds for one-shot top-K with them is the paper's claim, which
graphpriv does not prove: their reports say so.
"""

from __future__ import annotations

import json
import math
from typing import Any, ClassVar, Literal

import numpy as np
import scipy.sparse as sp
import torch
from pydantic import Field, model_validator
from sklearn.linear_model import LogisticRegression
from torch_geometric.data import Data

from graphpriv.data.validation import check_data, check_node_ids
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.methods.base import MethodConfig, Progress, Timer, no_progress
from graphpriv.methods.estimator import Estimator
from graphpriv.nn.monotone import (
    PowerTransform,
    ReferencePowerTransform,
    ReferenceUMNNTransform,
    UMNNTransform,
    apply_transform,
)
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.events import PureDpEvent
from graphpriv.privacy.hooks import AuditHook, noise_scale_of
from graphpriv.privacy.mechanisms import (
    gumbel_noise,
    laplace_noise,
    rank_within_queries,
    staircase_noise,
)
from graphpriv.privacy.report import PrivacyReport
from graphpriv.privacy.units import Accounting, PrivacyUnit
from graphpriv.ranking.embeddings import EMBEDDING_SCORES, LinkClassifier, embed
from graphpriv.ranking.protocol import RankingSplit, ranking_split
from graphpriv.ranking.reference import (
    REFERENCE_BASES,
    ReferenceSplit,
    reference_scaled,
    reference_split,
    reference_top_score,
)
from graphpriv.ranking.reference_training import DevQuery, train_reference_power, train_reference_umnn
from graphpriv.ranking.scores import score_range, triad_scores
from graphpriv.ranking.training import QueryPairs, noise_scale, train_transform

__all__ = ["NOISES", "TRANSFORMS", "VARIANTS", "DPLPRankConfig", "DPLPRanker", "RankConfig", "check_variant"]

#: The transforms of the base score: a trained UMNN f (DPLP), the trained power transform nu_beta
#: (DPLP-Lin), or none (the raw score).
TRANSFORMS: tuple[str, ...] = ("umnn", "power", "none")
#: The noises added before the top-K: Gumbel (the exponential mechanism), one-shot Laplace or
#: staircase (the paper's baselines), or none (no DP).
NOISES: tuple[str, ...] = ("gumbel", "laplace", "staircase", "none")
#: The (transform, noise) pairs with a meaning and a privacy report (the others are refused).
VARIANTS: tuple[tuple[str, str], ...] = (("umnn", "gumbel"), ("power", "gumbel"), ("none", "gumbel"),
                                         ("none", "laplace"), ("none", "staircase"), ("none", "none"))


class RankConfig(MethodConfig):
    """The protocol and mechanism every ranking method shares (defaults: De & Chakrabarti, "Differentially
    Private Link Prediction with Protected Connections", AAAI 2021, Sec. 6, and docs/dplp_rank.md)."""

    base: Literal["cn", "aa", "jc", "pa", "node2vec", "gcn"] = Field("aa", description="base LP score")
    sigma_prot: float = Field(0.3, ge=0, le=1, description="share of edges protected")
    query_fraction: float = Field(0.8, gt=0, le=1, description="queries: top share of nodes by triangles")
    holdout: float = Field(0.2, gt=0, lt=1, description="per-query held-out share of (non-)neighbours")
    epsilon: float | None = Field(None, gt=0, description="the budget of one top-K list (--epsilon); sets "
                                  "epsilon_p = epsilon / top_k (None: epsilon_p as given)")
    epsilon_p: float = Field(0.1, gt=0, description="privacy per draw; a top-K list costs K * epsilon_p")
    top_k: int = Field(30, ge=1, description="K, the recommended list's length")
    accounting: Accounting = Field(Accounting.RIGOROUS, description="rigorous, paper (the paper's noise scale) or "
                                   "reference (the released code's protocol and noise; no stated guarantee)")
    degree_cap: float | None = Field(None, gt=0, description="PA only: cap on a candidate's degree")
    embedding_dim: int = Field(80, ge=2, description="node2vec / GCN embedding width")

    reference_accounting: ClassVar[bool] = True

    @model_validator(mode="before")
    @classmethod
    def _epsilon_is_a_lists_budget(cls, values: Any) -> Any:
        """``epsilon`` (a whole list's budget, what ``--epsilon`` gives every private method) sets
        ``epsilon_p = epsilon / top_k``: a top-K list is K draws of eps_p (Prop. 4 of the paper)."""
        if not isinstance(values, dict) or values.get("epsilon") is None:
            return values
        if values.get("accounting") == "reference":
            raise ConfigError("accounting='reference' reproduces the released code's noise, which states no guarantee: "
                              "it has no target epsilon to calibrate to; give epsilon_p (the code's 2 e_diff), not "
                              "epsilon")
        epsilon = values["epsilon"]
        top_k = values.get("top_k", cls.model_fields["top_k"].default)
        if not isinstance(epsilon, (int, float)) or not isinstance(top_k, int) or epsilon <= 0 or top_k < 1:
            return values  # the fields' own validation names the bad value
        given = values.get("epsilon_p")
        if given is not None and not math.isclose(given * top_k, epsilon, rel_tol=1e-9):
            raise ConfigError(f"epsilon={epsilon:g} (a list's budget) and epsilon_p={given:g} (a draw's) disagree for "
                              f"top_k={top_k}: epsilon must be top_k * epsilon_p; give only one of them")
        return {**values, "epsilon_p": epsilon / top_k}

    @model_validator(mode="after")
    def _pa_needs_cap(self) -> RankConfig:
        if self.base == "pa" and self.degree_cap is None:
            raise ConfigError("base 'pa' has no sensitivity bound without a degree cap: set degree_cap "
                              "(candidates' degrees are clipped to it)")
        if self.accounting == "reference" and self.base not in REFERENCE_BASES:
            raise ConfigError(f"accounting='reference' reproduces the released code's scaling of "
                              f"{' and '.join(REFERENCE_BASES)} only (got base={self.base!r})")
        return self


class DPLPRankConfig(RankConfig):
    """DPLP training (paper Sec. 4.2-4.3; reference code: Adam lr 0.1, weight decay 1e-5, margin 0.1)."""

    lin_epochs: int = Field(10, ge=0, description="epochs of nu_beta (dplp-rank-lin, and pre-training)")
    umnn_epochs: int = Field(5, ge=0, description="epochs of the UMNN with nu_beta frozen (dplp-rank)")
    lr: float = Field(0.1, gt=0)
    weight_decay: float = Field(1e-5, ge=0)
    margin: float = Field(0.1, ge=0)
    max_negatives: int = Field(200, ge=1, description="non-neighbours per query kept for training")
    max_positives: int = Field(100, ge=1, description="public neighbours per training step (sampled)")
    num_powers: int = Field(170, ge=1)
    tau: float = Field(0.01, gt=0)
    hidden: int = Field(20, ge=1, description="UMNN integrand width")
    quadrature: int = Field(50, ge=2, description="Clenshaw-Curtis intervals")

    @model_validator(mode="before")
    @classmethod
    def _released_epochs(cls, values: Any) -> Any:
        """``accounting='reference'`` trains as the released code does: 50 epochs of nu and 10 of the
        UMNN unless given."""
        if isinstance(values, dict) and values.get("accounting") == "reference":
            return {"lin_epochs": 50, "umnn_epochs": 10, **values}
        return values


def check_variant(transform: object, noise: object) -> tuple[str, str]:
    """``(transform, noise)`` if the pair is one of :data:`VARIANTS`.

    Raises:
        ConfigError: an unknown transform or noise, or a pair without a meaning or a privacy
            report here (a trained transform needs the Gumbel noise its sensitivity bound is for;
            one-shot noise and no noise go with the raw score); one line.
    """
    if transform not in TRANSFORMS or noise not in NOISES:
        raise ConfigError(f"transform must be one of {', '.join(TRANSFORMS)} and noise one of {', '.join(NOISES)} "
                          f"(got transform={transform!r}, noise={noise!r})")
    if (transform, noise) not in VARIANTS:
        raise ConfigError(f"transform={transform!r} with noise={noise!r} is not a ranking mechanism graphpriv can "
                          "account: use " + ", ".join(f"{t}+{n}" for t, n in VARIANTS))
    return str(transform), str(noise)


def _rows(split: RankingSplit) -> np.ndarray:
    return np.repeat(split.queries, np.diff(split.test_ptr))


class _Scorer:
    """Scaled base scores s / s_max,u on one graph (the training graph or the public graph).

    Args:
        config: the base score's settings. adj: ``[N, N]`` symmetric CSR of the graph scored on.
        classifier: the embedding link classifier (``node2vec`` / ``gcn`` bases), else None.
        own: ``accounting="reference"``: ``[N]`` each node's own protected edges in ``adj``; the
            scores are then scaled as the released code scales them
            (:func:`~graphpriv.ranking.reference.reference_scaled`).
    """

    def __init__(self, config: RankConfig, adj: sp.csr_matrix, classifier: LinkClassifier | None = None,
                 own: np.ndarray | None = None) -> None:
        self.config, self.adj, self.classifier, self.own = config, adj, classifier, own
        self.degree = np.asarray(adj.sum(axis=1)).ravel()

    @classmethod
    def build(cls, config: RankConfig, adj: sp.csr_matrix, split: RankingSplit, seed: int) -> _Scorer:
        """The scorer of ``adj``; embedding bases train their classifier (never on the split's
        edges of G or test candidates as negatives)."""
        classifier = None
        if config.base in EMBEDDING_SCORES:
            z = embed(adj, config.base, dim=config.embedding_dim, seed=seed)
            qrep = _rows(split)
            forbidden = np.concatenate([np.stack(split.full.nonzero()), np.stack([qrep, split.test_nodes])], axis=1)
            classifier = LinkClassifier(z, adj, forbidden, seed=seed)
        return cls(config, adj, classifier)

    def __call__(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        c = self.config
        if self.classifier is not None:
            return self.classifier.probability(rows, cols)
        s = triad_scores(self.adj, rows, cols, c.base, degree_cap=c.degree_cap)
        if self.own is not None:  # the released code's scaling by the query's own protected edges, unclipped
            return reference_scaled(s, c.base, self.own[rows])
        _, s_max = score_range(c.base, self.degree[rows], degree_cap=c.degree_cap)
        return np.divide(s, s_max, out=np.zeros_like(s), where=s_max > 0).clip(0.0, 1.0)


def _training_pairs(split: RankingSplit, scorer: _Scorer, max_negatives: int, seed: int,
                    known: str) -> list[QueryPairs]:
    rng = np.random.default_rng([seed, 89])
    rows, cols, sizes = [], [], []
    for i, q in enumerate(split.queries):
        pos, neg = split.training_pairs(i, known=known)
        if neg.size > max_negatives:
            neg = np.sort(rng.choice(neg, max_negatives, replace=False))
        rows += [np.full(pos.size + neg.size, q)]
        cols += [pos, neg]
        sizes.append((pos.size, neg.size))
    s = scorer(np.concatenate(rows), np.concatenate(cols))
    out, at = [], 0
    for p, n in sizes:
        out.append(QueryPairs(s[at:at + p], s[at + p:at + p + n]))
        at += p + n
    return out


def _build_transform(config: DPLPRankConfig, transform: str) -> torch.nn.Module:
    if config.accounting == "reference":
        return ReferenceUMNNTransform(ReferencePowerTransform(config.tau), hidden=config.hidden,
                                      quadrature=config.quadrature)
    power = PowerTransform(config.num_powers, config.tau)
    return power if transform == "power" else UMNNTransform(power, hidden=config.hidden, quadrature=config.quadrature)


def _transform(config: DPLPRankConfig, transform: str, split: RankingSplit, scorer: _Scorer, seed: int,
               progress: Progress):
    """Train f (``transform``: ``power`` or ``umnn``) on the training pairs; returns (f, losses)."""
    known = "public" if config.accounting == "rigorous" else "full"
    pairs = _training_pairs(split, scorer, config.max_negatives, seed, known)
    common = {"epsilon_p": config.epsilon_p, "accounting": config.accounting, "lr": config.lr,
              "weight_decay": config.weight_decay, "margin": config.margin, "max_negatives": None,
              "max_positives": config.max_positives, "seed": seed}
    torch.manual_seed(seed)
    power = PowerTransform(config.num_powers, config.tau)
    history = {"lin": train_transform(power, pairs, epochs=config.lin_epochs, progress=progress, **common)}
    if transform == "power":
        return power, history
    f = UMNNTransform(power, hidden=config.hidden, quadrature=config.quadrature)
    history["umnn"] = train_transform(f, pairs, epochs=config.umnn_epochs, progress=progress, **common)
    return f, history


def _saved(state: dict[str, Any], key: str, ndim: int) -> np.ndarray:
    """A copy of the saved tensor ``state[key]`` as numpy, or ValueError (a damaged file)."""
    value = state[key]
    if not isinstance(value, torch.Tensor) or value.dim() != ndim:
        raise ValueError(f"the saved {key} must be a {ndim}-D tensor (got {type(value).__name__})")
    return value.numpy().copy()


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers (for JSON)."""
    return value.item() if isinstance(value, np.generic) else str(value)


class DPLPRanker(Estimator):
    """DPLP-rank and its baselines (De & Chakrabarti, "Differentially Private Link Prediction With
    Protected Connections", AAAI 2021, Algorithm 1, Sec. 4, App. 14) as an estimator.

    Privacy: each top-k list of query u released by :meth:`recommend` (its node ids, nothing
    else) is k draws of a pure eps_p-DP mechanism for the u-neighbouring relation (protected
    pairs; paper Def. 1), composed by basic composition (paper Prop. 4); lists of the same query
    compose, lists of different queries do not (each is a guarantee for its own query's
    relation). :attr:`privacy_report_` is built from the ledger after every call: its epsilon is
    eps_p times the draws of the most-asked query (0 after ``fit``, which releases nothing about
    protected pairs in rigorous mode). ``noise="laplace"`` / ``"staircase"``: the paper's claim,
    reported under paper accounting with a note. ``noise="none"``: no DP (``privacy_report_`` is
    None).

    Which pairs are protected: ``fit`` on a :class:`~graphpriv.ranking.protocol.RankingSplit`
    protects that split's protected edges. ``fit`` on a graph (PyG ``Data``) runs
    :func:`~graphpriv.ranking.protocol.ranking_split` itself: a random ``sigma_prot`` share of the
    edges, chosen by ``random_state``, becomes the protected set (not one you chose), and every
    query loses a random ``holdout`` share of its neighbours from the training graph; the privacy
    report says so in its notes. To protect your own pairs, build the split yourself and fit it.

    Randomness: refitting with the same ``random_state`` replays the same split, training and
    noise (the lists of a refit repeat those of the first fit, which is what a twin is for); for
    a release, use ``random_state=None`` (a fresh secret seed) and do not publish the seed.

    Files: :meth:`save` writes the training graph (protected edges included), the base score's
    embeddings and classifier, the transform and the noise generator's state. A saved ranker
    holds the training graph: keep the file as private as the graph; the released outputs are
    the :meth:`recommend` lists.

    Args:
        transform: ``"umnn"`` (DPLP; default), ``"power"`` (DPLP-Lin) or ``"none"`` (raw score).
        noise: ``"gumbel"`` (default), ``"laplace"``, ``"staircase"`` or ``"none"``; the pairs
            allowed are :data:`VARIANTS`. Neither is a field of the config, so the config hash of
            the six method ids' stored runs is unchanged; ``get_params`` includes both.
        random_state: seed (an int; ``None``: a fresh secret seed) of the split (when ``fit`` is
            given a graph), the transform's training
            (``torch.manual_seed``, numpy ``default_rng([s, 89])`` for negatives), the embeddings,
            and the noise and tie-breaks of every ranking (one numpy ``default_rng([s, 97])``
            created at ``fit`` and drawn from call after call).
        **params: :class:`DPLPRankConfig` fields (the training fields are ignored when
            ``transform="none"``; :class:`RankConfig`'s dump is a valid subset).

    Attributes:
        transform_: the trained f (``torch.nn.Module``, float64 ``[P] -> [P]``) or None.
        f_range_: ``(f(0), f(1))``, utilities are clamped to it (``(0.0, 1.0)`` without transform).
        noise_scale_: Gumbel scale (2 Delta / eps_p; DPLP rigorous Delta = f(1) - f(0), paper
            2 f(1) / eps_p), Laplace scale 1 / eps_p, the staircase's sensitivity 1, or 0.0.
        num_nodes_: N. graph_: ``[N, N]`` CSR of the training graph the base scores use.
        queries_: ``[Q]`` the split's query nodes. draws_: ``[N]`` int64 draws spent per query
            node so far. ledger_: the :class:`~graphpriv.privacy.accountant.Ledger` (the most-asked
            query's draws). info_: the split's sizes and, for DPLP, losses, f(0), f(1), scales.
        timings_: seconds per phase of ``fit``.

    Raises:
        ConfigError: an unknown hyperparameter, an invalid value, or a (transform, noise) pair
            outside :data:`VARIANTS`.
    """

    config_cls = DPLPRankConfig
    _fitted_private = ("_scorer", "_rng", "_notes", "_noise_fault")

    def __init__(self, transform: str = "umnn", noise: str = "gumbel", random_state: int | None = None,
                 **params: Any) -> None:
        super().__init__(random_state=random_state, **params)
        self.transform, self.noise = check_variant(transform, noise)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Every hyperparameter, ``transform``, ``noise`` and ``random_state`` (an unfitted twin is
        ``type(self)(**get_params())``)."""
        params = super().get_params(deep)
        return {"random_state": params.pop("random_state"), "transform": self.transform, "noise": self.noise,
                **params}

    def set_params(self, **params: Any) -> DPLPRanker:
        """Change hyperparameters, ``transform`` or ``noise`` (validated as in the constructor);
        returns ``self``, unfitted: the fitted state (every trailing-underscore attribute, the
        scorer, the noise generator, the notes) is dropped, so a list can never come from a
        variant other than the one :meth:`get_params` shows. Call ``fit`` again.

        Raises:
            ConfigError: as the constructor; nothing is changed then.
        """
        variant = check_variant(params.pop("transform", self.transform), params.pop("noise", self.noise))
        super().set_params(**params)
        self.transform, self.noise = variant
        return self

    # -- fit ----------------------------------------------------------------------------------------

    def fit(self, data: RankingSplit | Data, progress: Progress = no_progress, *,
            audit_hook: AuditHook | None = None) -> DPLPRanker:
        """Build the scorer and (DPLP) train f on one split.

        A graph is split here first: a random ``sigma_prot`` share of the edges, chosen by
        ``random_state``, becomes the protected set, and each query loses a random ``holdout``
        share of its neighbours from the training graph (the report's notes say so). The
        protected set is then not one you chose: to protect your own pairs, fit a
        :class:`~graphpriv.ranking.protocol.RankingSplit` you built.

        Args:
            data: a :class:`~graphpriv.ranking.protocol.RankingSplit` (its training graph ``train``
                is scored on; f trains on pairs of its public graph, or of ``train`` in paper
                accounting; its held-out candidates are never training negatives), or a graph
                (PyG ``Data``, undirected ``edge_index``) that is split first with
                :func:`~graphpriv.ranking.protocol.ranking_split` (``sigma_prot``,
                ``query_fraction``, ``holdout`` of the config, seed ``random_state``).
            progress: called by the transform's training, once per step.
            audit_hook: for a privacy audit only (:mod:`graphpriv.audit.ranking`): its
                ``noise_scale`` multiplies the ranking noise of every later :meth:`recommend` of
                this fit (the Gumbel scale, the Laplace scale, the staircase's sensitivity) while
                the ledger still spends eps_p per draw (a deliberate fault; 0: the same rankings
                without noise). The transform's training noise (a term of its loss, on public
                pairs in rigorous mode) is not scaled, and the factor is not saved (a loaded
                ranker draws the calibrated noise). Canaries are refused (the ranking is audited
                with canary protected pairs in the data). None (default) for a real fit.

        Returns:
            ``self``, fitted; everything of an earlier fit is replaced: the noise generator is
            created afresh from ``random_state`` (the same seed replays the same noise: use
            ``random_state=None`` for a release), ``draws_`` are zero, the ledger is empty.

        Raises:
            DatasetError: a malformed graph or no usable query. ConfigError: PA without a degree
                cap (at construction), a hook that is not an AuditHook or carries canaries.
        """
        if audit_hook is not None and (not isinstance(audit_hook, AuditHook) or audit_hook.canaries is not None):
            raise ConfigError("audit_hook must be a graphpriv.privacy.hooks.AuditHook without canaries for "
                              "DPLPRanker (its rankings are audited with canary protected pairs in the data)")
        config, seed, timer = self._config, self.random_state, Timer()
        if config.accounting == "reference":
            return self._fit_reference(data, progress, audit_hook)
        notes: list[str] = []
        if not isinstance(data, RankingSplit):
            data = check_data(data, method=type(self).__name__)
            with timer.phase("split"):
                data = ranking_split(data, sigma_prot=config.sigma_prot, query_fraction=config.query_fraction,
                                     holdout=config.holdout, seed=seed)
            notes.append(f"protected pairs: a random sigma_prot = {config.sigma_prot:g} share of the edges "
                         f"({int(data.protected.shape[1])} edges), chosen by random_state in fit's ranking_split, "
                         "not a set the caller chose; fit a RankingSplit to protect given pairs")
        split = data
        rng = np.random.default_rng([seed, 97])
        with timer.phase("scores"):
            scorer = _Scorer.build(config, split.train, split, seed)
        info: dict = {"queries": int(split.queries.size), "candidates": int(split.test_nodes.size),
                      "protected_edges": int(split.protected.shape[1])}
        f, ends, eps = None, (0.0, 1.0), config.epsilon_p
        scale = {"gumbel": 2.0 / eps, "laplace": 1.0 / eps, "staircase": 1.0, "none": 0.0}[self.noise]
        if self.transform != "none":
            with timer.phase("training"):
                train_scorer = (scorer if config.accounting == "paper"
                                else _Scorer.build(config, split.public, split, seed))
                f, history = _transform(config, self.transform, split, train_scorer, seed, progress)
                info["train_loss"] = history
                with torch.no_grad():
                    ends = tuple(f(torch.tensor([0.0, 1.0], dtype=torch.float64)).tolist())
                    scale = float(noise_scale(f, eps, config.accounting))
                info.update(f0=ends[0], f1=ends[1], noise_scale=scale,
                            rigorous_noise_scale=2 * (ends[1] - ends[0]) / eps)
                if config.accounting == "paper":
                    notes.append("paper accounting: noise scale 2 f(1)/eps_p (reference code), not the sensitivity "
                                  f"bound 2 (f(1) - f(0))/eps_p = {info['rigorous_noise_scale']:.4g}; the guarantee "
                                  "does not hold when these differ")
                    if not scale > 0:
                        notes.append(f"paper accounting: the trained transform has f(1) = {ends[1]:.4g} <= 0, so the "
                                      f"reference code's scale 2 f(1)/eps_p = {scale:.4g} is not a Gumbel scale (the "
                                      "reference code cannot run here); the noise drawn is mirrored: not the paper's "
                                      "mechanism, and no guarantee")
        if config.epsilon is not None and self.noise != "none":
            notes.append(f"epsilon = {config.epsilon:g} per top-K list of K = {config.top_k}: epsilon_p = epsilon / K = "
                         f"{eps:.6g} per draw")
        if self.noise in ("laplace", "staircase"):
            name = {"laplace": "Laplace(Delta/eps_p)", "staircase": "staircase(Delta, eps_p)"}[self.noise]
            notes.append(f"one-shot {name} top-K: the paper's baseline and its claim, not proven here")
        return self._keep(split, f, ends, scale, scorer, rng, info, timer, notes, audit_hook, own=None)

    def _keep(self, split: RankingSplit, f: torch.nn.Module | None, ends: tuple[float, float], scale: float,
              scorer: _Scorer, rng: np.random.Generator, info: dict, timer: Timer, notes: list[str],
              audit_hook: AuditHook | None, *, own: np.ndarray | None) -> DPLPRanker:
        """Set the fitted state of one split, in either accounting (``own``: the reference split's
        own protected edges per node, whose epsilon the notes and ``info_`` then carry), with an
        empty ledger; returns ``self``."""
        self.transform_, self.f_range_, self.noise_scale_ = f, ends, scale
        self.num_nodes_, self.graph_, self.queries_ = split.num_nodes, split.train, split.queries.copy()
        self.own_protected_ = None if own is None else own.copy()
        self.draws_ = np.zeros(split.num_nodes, dtype=np.int64)
        if own is not None:
            info["reference_draw_epsilon"], more = self._reference_epsilon(split)
            notes = notes + more
        self.info_, self.timings_ = info, dict(timer.timings)
        self._scorer, self._rng, self._notes = scorer, rng, notes
        self._noise_fault = noise_scale_of(audit_hook)
        self.ledger_ = self._new_ledger()
        return self._fitted(None)

    def _fit_reference(self, data: RankingSplit | Data, progress: Progress,
                       audit_hook: AuditHook | None) -> DPLPRanker:
        """``fit`` under ``accounting="reference"``: the released code's protocol, scaling, training
        and noise (docs/dplp_rank.md, "What the reference code does"; module docstrings of
        :mod:`graphpriv.ranking.reference` and :mod:`graphpriv.ranking.reference_training`)."""
        config, seed, timer = self._config, self.random_state, Timer()
        if self.transform == "power":
            raise ConfigError("accounting='reference' reproduces the released DPLP (transform 'umnn') and the raw-score "
                              "baselines (transform 'none'); DPLP-Lin's released test noise (one Gumbel per power) is "
                              "not reproduced")
        if isinstance(data, RankingSplit) and not isinstance(data, ReferenceSplit):
            raise ConfigError("accounting='reference' needs the released code's split (a ReferenceSplit from "
                              "graphpriv.ranking.reference.reference_split, or a graph to split), not a RankingSplit")
        notes = [("reference accounting: the released code's protocol and noise, which state no guarantee; the "
                  "epsilon reported is what its noise provides, given the trained transform (itself trained on "
                  "protected edges)")]
        if not isinstance(data, ReferenceSplit):
            data = check_data(data, method=type(self).__name__)
            with timer.phase("split"):
                data = reference_split(data, sigma_prot=config.sigma_prot, query_fraction=config.query_fraction,
                                       holdout=config.holdout, seed=seed)
        split = data
        eps = config.epsilon_p
        scorer = _Scorer(config, split.train, own=split.own_test)
        info: dict = {"queries": int(split.queries.size), "candidates": int(split.test_nodes.size),
                      "protected_edges": int(split.protected.shape[1]),
                      "unnoised_queries": int((split.own_test[split.queries] == 0).sum())}
        f, scale = None, {"gumbel": 2.0 / eps, "laplace": 1.0 / eps, "staircase": 1.0, "none": 0.0}[self.noise]
        if self.transform == "umnn":
            with timer.phase("training"):
                dev_scorer = _Scorer(config, split.dev, own=split.own_dev)
                queries = []
                for i, q in enumerate(split.queries):
                    cand, labels, protected = split.dev_of(i)
                    queries.append(DevQuery(dev_scorer(np.full(cand.size, q), cand), labels, protected,
                                            bool(split.own_dev[q] > 0)))
                rng = np.random.default_rng([seed, 89])
                torch.manual_seed(seed)
                nu = ReferencePowerTransform(config.tau)
                common = {"epsilon_p": eps, "lr": config.lr, "weight_decay": config.weight_decay,
                          "margin": config.margin, "rng": rng}
                history = {"lin": train_reference_power(nu, queries, epochs=config.lin_epochs, **common)}
                multiplier = nu.multiplier()
                f = ReferenceUMNNTransform(nu, hidden=config.hidden, quadrature=config.quadrature)
                history["umnn"] = train_reference_umnn(f, queries, multiplier=multiplier, epochs=config.umnn_epochs,
                                                       **common)
                f.eval()
            scale = 2.0 * multiplier / eps  # m / e_diff, signed: the released code's test-time scale
            info.update(train_loss=history, multiplier=multiplier, noise_scale=scale)
            notes.append(f"noise multiplier m = sum of nu's raw weights = {multiplier:.6g} (scale m / e_diff = "
                         f"{scale:.6g}{'; negative: a reversed Gumbel, not the exponential mechanism' if scale < 0 else ''})")
        ends = (0.0, 1.0)
        if f is not None:
            with torch.no_grad():
                ends = tuple(f(torch.tensor([0.0, 1.0], dtype=torch.float64)).tolist())
        return self._keep(split, f, ends, scale, scorer, np.random.default_rng([seed, 97]), info, timer, notes,
                          audit_hook, own=split.own_test)

    def _reference_epsilon(self, split: ReferenceSplit) -> tuple[float, list[str]]:
        """The per-draw epsilon the reference noise provides to the worst noised query, and notes.

        For query u, with utility range Delta_u = f(s_top) - f(0) (s_top: the largest scaled score
        u can have, :func:`~graphpriv.ranking.reference.reference_top_score`) and Gumbel scale b:
        b > 0 is the exponential mechanism, 2 Delta_u / b per draw; b < 0 (reversed Gumbel) is
        bounded per list by 2 n_u Delta_u / |b| (n_u candidates), taken here as that over K draws;
        a query with none of its own protected edges gets no noise (no guarantee). The one-shot
        Laplace and staircase baselines report the paper's claim, eps_p per draw.
        """
        config, k = self._config, self._config.top_k
        queries = split.queries
        unnoised = int((split.own_test[queries] == 0).sum())
        notes = [(f"{unnoised} of {queries.size} queries have none of their own protected edges: the released code "
                  "adds no noise to their lists (no guarantee at all)")] if unnoised else []
        if self.noise in ("laplace", "staircase"):
            return config.epsilon_p, notes + ["one-shot noise: the paper's claim, eps_p per draw, not proven"]
        scale = self.noise_scale_
        noised = queries[split.own_test[queries] > 0]
        if scale == 0 or not noised.size:
            return math.inf, notes + ["no query's list is noised: no guarantee"]
        degree = np.asarray(split.train.sum(axis=1)).ravel()
        top = reference_top_score(config.base, degree[noised], split.own_test[noised])
        if self.transform_ is not None:
            low = float(apply_transform(self.transform_, np.zeros(1))[0])
            spread = apply_transform(self.transform_, top) - low
        else:
            spread = top
        counts = np.diff(split.test_ptr)[split.own_test[queries] > 0]
        per_list = (2 * k * spread / scale) if scale > 0 else (2 * counts * spread / abs(scale))
        worst = float(per_list.max())
        notes.append(f"epsilon its noise provides (reference accounting, given f): per list of K = {k}, median "
                     f"{float(np.median(per_list)):.4g} and worst {worst:.4g} over the {noised.size} noised queries "
                     f"(the paper claims K eps_p = {k * config.epsilon_p:g})")
        return worst / k, notes

    def _new_ledger(self) -> Ledger:
        proven = self.noise == "gumbel"
        accounting = self._config.accounting
        return Ledger(PrivacyUnit.PROTECTED_PAIR, delta=0.0, accountant="basic",
                      accounting=Accounting(accounting if proven or accounting == "reference" else "paper"))

    def _spend_draws(self, count: int) -> None:
        """Spend ``count`` draws of eps_p on ``ledger_`` (phase ``ranking``), labelled as the report
        names them: the exponential mechanism (Gumbel), or the one-shot baseline's claim."""
        eps = self._config.epsilon_p
        if self._config.accounting == "reference":
            eps = self.info_["reference_draw_epsilon"]
            label = f"the released code's noise, what it provides: PureDpEvent(epsilon={eps:.6g})"
            self.ledger_.spend(PureDpEvent(eps), phase="ranking", count=count, label=label)
            return
        label = (f"exponential mechanism (Gumbel top-K): PureDpEvent(epsilon={eps:g})" if self.noise == "gumbel"
                 else f"one-shot {self.noise} noise, claimed PureDpEvent(epsilon={eps:g})")
        self.ledger_.spend(PureDpEvent(eps), phase="ranking", count=count, label=label)

    def _fitted(self, privacy_report: PrivacyReport | None) -> DPLPRanker:
        """Mark fitted; the privacy report is not stored but built from the ledger."""
        self._is_fitted = True
        return self

    @property
    def privacy_report_(self) -> PrivacyReport | None:
        """What the released lists have spent so far (built from ``ledger_``: it grows with every
        :meth:`recommend`): epsilon = eps_p times the draws of the most-asked query,
        ``target_epsilon`` = ``top_k`` eps_p (one list of the configured length); None when
        ``noise="none"``.

        Raises:
            NotFittedError: before ``fit``.
        """
        self._check_fitted()
        if self.noise == "none" or not math.isfinite(self.info_.get("reference_draw_epsilon", 0.0)):
            return None
        eps, k = self._config.epsilon_p, self._config.top_k
        return self.ledger_.report(target_epsilon=k * eps, notes=self._notes)

    # -- ranking ------------------------------------------------------------------------------------

    def _candidates(self, queries: np.ndarray, candidates: object) -> tuple[np.ndarray, np.ndarray]:
        """``(ptr [Q + 1], nodes [T])``: the given CSR-like pair checked, or every node that is
        neither the query nor its neighbour in ``graph_``."""
        n = self.num_nodes_
        if candidates is None:
            adj, ptr, nodes = self.graph_, [0], []
            for q in queries:
                allowed = np.ones(n, dtype=bool)
                allowed[adj.indices[adj.indptr[q]:adj.indptr[q + 1]]] = False
                allowed[q] = False
                nodes.append(np.flatnonzero(allowed))
                ptr.append(ptr[-1] + nodes[-1].size)
            return np.asarray(ptr, dtype=np.int64), np.concatenate(nodes) if nodes else np.zeros(0, np.int64)
        if not isinstance(candidates, (tuple, list)) or len(candidates) != 2 or candidates[1] is None:
            raise DatasetError("candidates must be a (ptr, nodes) pair: ptr [Q + 1] offsets into nodes [T] "
                               f"(got {type(candidates).__name__})")
        nodes = check_node_ids(candidates[1], n, name="candidates nodes")
        ptr = candidates[0].detach().cpu().numpy() if isinstance(candidates[0], torch.Tensor) else candidates[0]
        try:
            ptr = np.asarray(ptr)
        except (TypeError, ValueError):  # ragged nested lists
            ptr = np.zeros((0, 0))
        if (ptr.ndim != 1 or ptr.size != queries.size + 1 or ptr.dtype == bool
                or not np.issubdtype(ptr.dtype, np.integer) or ptr[0] != 0 or ptr[-1] != nodes.size
                or (np.diff(ptr) < 0).any()):
            raise DatasetError(f"candidates ptr must be [Q + 1] = [{queries.size + 1}] non-decreasing integer offsets "
                               f"from 0 to len(nodes) = {nodes.size} (got shape {list(ptr.shape)}, dtype {ptr.dtype})")
        ptr = ptr.astype(np.int64)
        rows = np.repeat(queries, np.diff(ptr))
        if (same := np.flatnonzero(rows == nodes)).size:
            raise DatasetError(f"candidates of query {int(rows[same[0]])} include the query itself; a link joins "
                               "two different nodes")
        seg = np.repeat(np.arange(queries.size), np.diff(ptr))
        if np.unique(seg * n + nodes).size != nodes.size:
            raise DatasetError("candidates repeat a node within one query's list; give each candidate once")
        return ptr, nodes

    def _queries(self, query_nodes: object) -> np.ndarray:
        """``[Q]`` int64 query ids in ``[0, num_nodes_)``, or a one-line DatasetError."""
        if query_nodes is None:
            raise DatasetError("query_nodes must be a 1-D array of integer node ids (got None); pass the queries")
        return check_node_ids(query_nodes, self.num_nodes_, name="query_nodes")

    def _rank(self, query_nodes: object, candidates: tuple[object, object], *, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Internal: the whole noisy ranking of every query's candidates, for evaluation only.

        The ranking protocol (:func:`graphpriv.evaluation.ranking.run_rank`) calls it to measure
        AUC over every candidate. Its outputs are not a release: the guarantee covers only each
        list's top ``k`` ids (what :meth:`recommend` returns), not the rest of the order nor the
        noisy utilities. Draws the noise (one value per candidate, then the random tie-breaks)
        from the estimator's generator and spends ``k`` draws of eps_p per list on ``ledger_``
        (an upper bound when a query has fewer than ``k`` candidates), as :meth:`recommend` does.

        Args:
            query_nodes: ``[Q]`` node ids in ``[0, num_nodes_)``.
            candidates: ``(ptr [Q + 1], nodes [T])``: query i's candidates are
                ``nodes[ptr[i]:ptr[i + 1]]`` (not the query, no repeats).
            k: released list length, >= 1.

        Returns:
            ``(order [T], noisy [T])``: ``order[ptr[i]:ptr[i + 1]]`` are positions into ``nodes``
            of query i's candidates by decreasing noisy utility; ``noisy`` the noisy utilities,
            aligned with ``nodes`` (float64).

        Raises:
            NotFittedError: before ``fit``. ConfigError: ``k`` < 1. DatasetError: malformed ids
                or candidates (one line).
        """
        self._check_fitted()
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ConfigError(f"k must be an integer >= 1 (got {k!r})")
        queries = self._queries(query_nodes)
        ptr, nodes = self._candidates(queries, candidates)
        return self._noisy_order(queries, ptr, nodes, int(k))

    def _noisy_order(self, queries: np.ndarray, ptr: np.ndarray, nodes: np.ndarray,
                     k: int) -> tuple[np.ndarray, np.ndarray]:
        config, rng, size, fault = self._config, self._rng, nodes.size, self._noise_fault
        rows = np.repeat(queries, np.diff(ptr))
        s = self._scorer(rows, nodes)
        if self.own_protected_ is not None:  # reference: queries without their own protected edges get no noise
            fault = fault * (self.own_protected_[rows] > 0)
        if self.noise == "gumbel":
            if self.transform_ is not None:
                with torch.no_grad():
                    s = apply_transform(self.transform_, s)
                    if self.own_protected_ is None:
                        # f is monotone, but its quadrature is only up to ~1e-6 of its range: clamping to
                        # [f(0), f(1)] keeps every utility inside the range the sensitivity assumes
                        s = s.clip(self.f_range_[0], self.f_range_[1])
            noisy = s + gumbel_noise(size, self.noise_scale_ * fault, rng)
        elif self.noise == "laplace":
            noisy = s + laplace_noise(size, fault / config.epsilon_p, rng)
        elif self.noise == "staircase":
            noisy = s + staircase_noise(size, epsilon=config.epsilon_p, sensitivity=fault, rng=rng)
        else:
            noisy = s
        order = rank_within_queries(ptr, noisy, rng)
        self._spend(queries, k)
        return order, noisy

    def _spend(self, queries: np.ndarray, k: int) -> None:
        """Add k draws to each query's count; the ledger follows the most-asked query."""
        if self.noise == "none" or not queries.size:
            return
        before = int(self.draws_.max())
        np.add.at(self.draws_, queries, k)
        after = int(self.draws_.max())
        if after > before:
            self._spend_draws(after - before)

    def recommend(self, query_nodes: object, k: int | None = None, candidates: object = None) -> torch.Tensor:
        """The released top-``k`` list of each query: its candidates with the largest noisy utility.

        Args:
            query_nodes: ``[Q]`` node ids in ``[0, num_nodes_)`` (a query may repeat: its lists
                compose).
            k: list length (default: the config's ``top_k``); at most each query's candidate count.
            candidates: ``None`` (every node that is neither the query nor its neighbour in
                ``graph_``) or ``(ptr [Q + 1], nodes [T])``: query i's candidates are
                ``nodes[ptr[i]:ptr[i + 1]]`` (not the query, no repeats).

        Returns:
            ``[Q, k]`` LongTensor of node ids, best first. Spends k draws of eps_p per query (see
            :attr:`privacy_report_`).

        Raises:
            NotFittedError: before ``fit``. ConfigError: ``k`` < 1 or above a query's candidate
                count. DatasetError: malformed ids or candidates.
        """
        self._check_fitted()
        k = self._config.top_k if k is None else k
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ConfigError(f"k must be an integer >= 1 (got {k!r})")
        k = int(k)
        queries = self._queries(query_nodes)
        ptr, nodes = self._candidates(queries, candidates)
        counts = np.diff(ptr)
        if (short := np.flatnonzero(counts < k)).size:
            i = int(short[0])
            raise ConfigError(f"k={k} is above the {int(counts[i])} candidates of query {int(queries[i])}; "
                              "lower k or give that query more candidates")
        if not queries.size:
            return torch.zeros((0, k), dtype=torch.long)
        order, _ = self._noisy_order(queries, ptr, nodes, k)
        top = order[ptr[:-1, None] + np.arange(k)]
        return torch.from_numpy(nodes[top])

    # -- files --------------------------------------------------------------------------------------

    def _get_state(self) -> dict[str, Any]:
        adj, f, c = self.graph_, self.transform_, self._scorer.classifier
        state: dict[str, Any] = {
            "num_nodes": self.num_nodes_, "indptr": torch.from_numpy(adj.indptr.astype(np.int64)),
            "indices": torch.from_numpy(adj.indices.astype(np.int64)), "data": torch.from_numpy(adj.data.copy()),
            "queries": torch.from_numpy(self.queries_), "draws": torch.from_numpy(self.draws_.copy()),
            "transform": {} if f is None else f.state_dict(), "f_range": list(self.f_range_),
            "noise_scale": self.noise_scale_, "rng": json.dumps(self._rng.bit_generator.state),
            "notes": list(self._notes), "info": json.dumps(self.info_, default=_plain), "timings": dict(self.timings_),
            "own_protected": None if self.own_protected_ is None else torch.from_numpy(self.own_protected_.copy())}
        if c is not None:
            state["classifier"] = {"z": torch.from_numpy(np.ascontiguousarray(c.z)),
                                   "coef": torch.from_numpy(c.model.coef_.copy()),
                                   "intercept": torch.from_numpy(c.model.intercept_.copy())}
        return state

    def _set_state(self, state: dict[str, Any]) -> None:
        """Restore a saved ranker; a damaged state raises ValueError (the base's ``load`` turns it
        into :class:`~graphpriv.errors.ModelFileError`)."""
        config, n = self._config, state["num_nodes"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"num_nodes must be a positive integer (got {n!r})")
        indptr, indices, data = _saved(state, "indptr", 1), _saved(state, "indices", 1), _saved(state, "data", 1)
        if (indptr.size != n + 1 or indptr[0] != 0 or indptr[-1] != indices.size or (np.diff(indptr) < 0).any()
                or data.size != indices.size):
            raise ValueError(f"the saved graph is not a CSR matrix of {n} nodes (indptr {indptr.size}, indices "
                             f"{indices.size}, data {data.size} entries)")
        queries, draws = _saved(state, "queries", 1), _saved(state, "draws", 1)
        for name, ids in (("graph indices", indices), ("queries", queries)):
            if ids.size and (ids.min() < 0 or ids.max() >= n):
                raise ValueError(f"the saved {name} hold node ids outside [0, {n})")
        if draws.size != n or not np.issubdtype(draws.dtype, np.integer) or (draws < 0).any():
            raise ValueError(f"the saved draws must be {n} non-negative integer counts, one per node "
                             f"(got {draws.size} of dtype {draws.dtype})")
        adj = sp.csr_matrix((data, indices, indptr), shape=(n, n))
        classifier = None
        if "classifier" in state:
            blob = state["classifier"]
            z, coef, intercept = _saved(blob, "z", 2), _saved(blob, "coef", 2), _saved(blob, "intercept", 1)
            if z.shape[0] != n or coef.shape != (1, z.shape[1]) or intercept.shape != (1,):
                raise ValueError(f"the saved link classifier does not fit {n} nodes (embeddings {list(z.shape)}, "
                                 f"coefficients {list(coef.shape)})")
            model = LogisticRegression(solver="liblinear")
            model.coef_, model.intercept_ = coef, intercept
            model.classes_, model.n_features_in_ = np.array([0.0, 1.0]), int(coef.shape[1])
            classifier = LinkClassifier.__new__(LinkClassifier)
            classifier.z, classifier.model = z, model
        f = None
        if self.transform != "none":
            with torch.random.fork_rng(devices=[]):  # the initial weights are overwritten: leave the global RNG be
                f = _build_transform(config, self.transform)
            try:
                f.load_state_dict(state["transform"])
            except (RuntimeError, TypeError, AttributeError) as exc:  # missing, extra or misshapen weights
                raise ValueError(f"the saved {self.transform} transform does not match its config: "
                                 f"{str(exc).splitlines()[0][:200]}") from None
            f.eval()
        rng = np.random.default_rng()
        rng.bit_generator.state = json.loads(state["rng"])
        f_range = tuple(float(v) for v in state["f_range"])
        if len(f_range) != 2:
            raise ValueError(f"the saved f_range must be (f(0), f(1)) (got {len(f_range)} values)")
        self.transform_, self.f_range_ = f, f_range
        self.noise_scale_ = float(state["noise_scale"])
        self.num_nodes_, self.graph_, self.queries_ = n, adj, queries.astype(np.int64)
        self.draws_ = draws.astype(np.int64)
        self.info_, self.timings_ = json.loads(state["info"]), dict(state["timings"])
        own = state.get("own_protected")
        if config.accounting == "reference":
            if not isinstance(own, torch.Tensor) or own.dim() != 1 or own.numel() != n:
                raise ValueError(f"a reference ranker's file must hold each node's own protected edges ({n} counts)")
            own = own.numpy().astype(np.int64).copy()
        else:
            own = None
        self.own_protected_ = own
        self._scorer, self._rng, self._notes = _Scorer(config, adj, classifier, own=own), rng, list(state["notes"])
        self._noise_fault = 1.0  # an audit's fault is never saved
        self.ledger_ = self._new_ledger()
        if (worst := int(self.draws_.max(initial=0))) and self.noise != "none":
            self._spend_draws(worst)
