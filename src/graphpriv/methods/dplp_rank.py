"""DPLP-rank and its baselines: protected-pair DP top-K link recommendation (specs/dplp-rank.md).

Method ids: ``dplp-rank`` (UMNN on nu_beta), ``dplp-rank-lin`` (nu_beta), ``rank-exponential``
(the exponential mechanism on the raw score), ``rank-laplace``, ``rank-staircase``, and the
non-private ``rank-nonprivate``. Source: De & Chakrabarti (AAAI 2021), Algorithm 1, Sec. 4, App. 14.

Flow of a run: the protocol of :mod:`graphpriv.ranking.protocol`; base scores of the test
candidates on the training graph, each divided by its query's bound s_max,u so that it lies in
[0, 1] on every u-neighbouring graph (:func:`graphpriv.ranking.scores.score_range`); for DPLP, f
trained (Eq. 4-5) on public pairs; then per query the top-K of f(s) + noise.

Privacy (unit: protected pair; relation: u-neighbouring graphs, paper Def. 1): the released top-K
list of each query is K eps_p-DP (pure; paper Prop. 4). Rigorous accounting trains f on scores of
the public graph (the training graph without protected edges: identical on every u-neighbouring
graph), with negatives chosen without looking at protected edges, so f leaks nothing; and it uses
Delta = f(1) - f(0). Paper accounting trains on the training
graph's scores (protected edges included, as the reference code) and uses the reference code's
noise scale 2 f(1) / eps_p. The Laplace and staircase baselines add one-shot noise of the paper's
calibration (App. 14.4) and sort; that K eps_p holds for one-shot top-K with them is the paper's
claim, which graphpriv does not prove: their results say so.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from pydantic import Field, model_validator
from torch_geometric.data import Data

from graphpriv.data.validation import check_data, check_seed
from graphpriv.errors import ConfigError
from graphpriv.methods.base import MethodConfig, Progress, Result, Timer, no_progress
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.events import PureDpEvent
from graphpriv.privacy.report import PrivacyReport
from graphpriv.privacy.units import Accounting, PrivacyUnit
from graphpriv.ranking.embeddings import EMBEDDING_SCORES, LinkClassifier, embed
from graphpriv.ranking.mechanism import (
    gumbel_noise,
    laplace_noise,
    rank_within_queries,
    staircase_noise,
)
from graphpriv.ranking.metrics import auc_at_k, precision_at_k, ranking_auc
from graphpriv.ranking.protocol import RankingSplit, ranking_split
from graphpriv.ranking.scores import score_range, triad_scores
from graphpriv.ranking.training import QueryPairs, noise_scale, train_transform
from graphpriv.ranking.transforms import PowerTransform, UMNNTransform, apply_transform

__all__ = ["DPLPRankConfig", "RankConfig", "run"]


class RankConfig(MethodConfig):
    """The protocol and mechanism every ranking method shares (specs/dplp-rank.md defaults)."""

    base: Literal["cn", "aa", "jc", "pa", "node2vec", "gcn"] = Field("aa", description="base LP score")
    sigma_prot: float = Field(0.3, ge=0, le=1, description="share of edges protected")
    query_fraction: float = Field(0.8, gt=0, le=1, description="queries: top share of nodes by triangles")
    holdout: float = Field(0.2, gt=0, lt=1, description="per-query held-out share of (non-)neighbours")
    epsilon_p: float = Field(0.1, gt=0, description="privacy per draw; a top-K list costs K * epsilon_p")
    top_k: int = Field(30, ge=1, description="K, the recommended list's length")
    accounting: Literal["rigorous", "paper"] = "rigorous"
    degree_cap: float | None = Field(None, gt=0, description="PA only: cap on a candidate's degree")
    embedding_dim: int = Field(80, ge=2, description="node2vec / GCN embedding width")

    @model_validator(mode="after")
    def _pa_needs_cap(self) -> RankConfig:
        if self.base == "pa" and self.degree_cap is None:
            raise ConfigError("base 'pa' has no sensitivity bound without a degree cap: set degree_cap "
                              "(candidates' degrees are clipped to it)")
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


def _rows(split: RankingSplit) -> np.ndarray:
    return np.repeat(split.queries, np.diff(split.test_ptr))


class _Scorer:
    """Scaled base scores s / s_max,u on one graph (the training graph or the public graph)."""

    def __init__(self, config: RankConfig, adj, split: RankingSplit, seed: int) -> None:
        self.config, self.adj = config, adj
        self.degree = np.asarray(adj.sum(axis=1)).ravel()
        self.classifier = None
        if config.base in EMBEDDING_SCORES:
            z = embed(adj, config.base, dim=config.embedding_dim, seed=seed)
            qrep = _rows(split)
            forbidden = np.concatenate([np.stack(split.full.nonzero()), np.stack([qrep, split.test_nodes])], axis=1)
            self.classifier = LinkClassifier(z, adj, forbidden, seed=seed)

    def __call__(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        c = self.config
        if self.classifier is not None:
            return self.classifier.probability(rows, cols)
        s = triad_scores(self.adj, rows, cols, c.base, degree_cap=c.degree_cap)
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


def _transform(config: DPLPRankConfig, method: str, split: RankingSplit, scorer: _Scorer, seed: int,
               progress: Progress):
    known = "public" if config.accounting == "rigorous" else "full"
    pairs = _training_pairs(split, scorer, config.max_negatives, seed, known)
    common = {"epsilon_p": config.epsilon_p, "accounting": config.accounting, "lr": config.lr,
              "weight_decay": config.weight_decay, "margin": config.margin, "max_negatives": None,
              "max_positives": config.max_positives, "seed": seed}
    torch.manual_seed(seed)
    power = PowerTransform(config.num_powers, config.tau)
    history = {"lin": train_transform(power, pairs, epochs=config.lin_epochs, progress=progress, **common)}
    if method == "dplp-rank-lin":
        return power, history
    f = UMNNTransform(power, hidden=config.hidden, quadrature=config.quadrature)
    history["umnn"] = train_transform(f, pairs, epochs=config.umnn_epochs, progress=progress, **common)
    return f, history


def _report(config: RankConfig, method: str, notes: list[str]) -> PrivacyReport | None:
    """Each query's list: K draws of a pure eps_p-DP mechanism, composed by the accountant (K eps_p)."""
    if method == "rank-nonprivate":
        return None
    k, eps = config.top_k, config.epsilon_p
    proven = method in ("dplp-rank", "dplp-rank-lin", "rank-exponential")
    ledger = Ledger(PrivacyUnit.PROTECTED_PAIR, delta=0.0, accountant="basic",
                    accounting=Accounting(config.accounting if proven else "paper"))
    ledger.spend(PureDpEvent(eps), phase="ranking", count=k)
    report = ledger.report(target_epsilon=k * eps, notes=notes)
    report.phases[0].events = [f"exponential mechanism (Gumbel top-K): PureDpEvent(epsilon={eps:g}) x {k}" if proven
                               else f"one-shot {method[5:]} noise, claimed PureDpEvent(epsilon={eps:g}) x {k}"]
    return report


def run(config: RankConfig, data: Data, *, seed: int, method: str = "dplp-rank",
        progress: Progress = no_progress) -> Result:
    """One ranking run: protocol, base scores, (DPLP: trained f), noisy top-K per query, metrics.

    Returns:
        :class:`Result` with metrics ``auc_at_k`` (the paper's AUC@K), ``precision_at_k``,
        ``auc`` (plain AUC of the whole noisy ranking, a diagnostic: only the top K is released),
        and the privacy report (K eps_p per query list; None for ``rank-nonprivate``).

    Raises:
        ConfigError: PA without a degree cap. DatasetError: no usable query.
    """
    data = check_data(data, method=method)
    seed = check_seed(seed)
    timer = Timer()
    rng = np.random.default_rng([seed, 97])
    with timer.phase("split"):
        split = ranking_split(data, sigma_prot=config.sigma_prot, query_fraction=config.query_fraction,
                              holdout=config.holdout, seed=seed)
    with timer.phase("scores"):
        scorer = _Scorer(config, split.train, split, seed)
        s = scorer(_rows(split), split.test_nodes)
    info: dict = {"queries": int(split.queries.size), "candidates": int(split.test_nodes.size),
                  "protected_edges": int(split.protected.shape[1])}
    notes: list[str] = []
    size = s.size
    with timer.phase("training"):
        if method in ("dplp-rank", "dplp-rank-lin"):
            train_scorer = scorer if config.accounting == "paper" else _Scorer(config, split.public, split, seed)
            f, history = _transform(config, method, split, train_scorer, seed, progress)
            info["train_loss"] = history
            with torch.no_grad():
                ends = f(torch.tensor([0.0, 1.0], dtype=torch.float64)).tolist()
                # f is monotone, but its quadrature is only up to ~1e-6 of its range: clamping to
                # [f(0), f(1)] keeps every utility inside the range the sensitivity assumes
                utility = apply_transform(f, s).clip(ends[0], ends[1])
                scale = float(noise_scale(f, config.epsilon_p, config.accounting))
            info.update(f0=ends[0], f1=ends[1], noise_scale=scale,
                        rigorous_noise_scale=2 * (ends[1] - ends[0]) / config.epsilon_p)
            if config.accounting == "paper":
                notes.append("paper accounting: noise scale 2 f(1)/eps_p (reference code), not the sensitivity "
                             f"bound 2 (f(1) - f(0))/eps_p = {info['rigorous_noise_scale']:.4g}; the guarantee "
                             "does not hold when these differ")
    with timer.phase("ranking"):
        if method in ("dplp-rank", "dplp-rank-lin"):
            noisy = utility + gumbel_noise(size, scale, rng)
        elif method == "rank-exponential":
            noisy = s + gumbel_noise(size, 2.0 / config.epsilon_p, rng)
        elif method == "rank-laplace":
            noisy = s + laplace_noise(size, 1.0 / config.epsilon_p, rng)
            notes.append("one-shot Laplace(Delta/eps_p) top-K: the paper's baseline and its claim, not proven here")
        elif method == "rank-staircase":
            noisy = s + staircase_noise(size, epsilon=config.epsilon_p, sensitivity=1.0, rng=rng)
            notes.append("one-shot staircase(Delta, eps_p) top-K: the paper's baseline and its claim, not proven here")
        elif method == "rank-nonprivate":
            noisy = s
        else:
            raise ConfigError(f"unknown ranking method {method!r}")
        order = rank_within_queries(split.test_ptr, noisy, rng)
        ranked_labels = split.test_labels[order]
        ranked_scores = noisy[order]
        at_k, prec, auc = [], [], []
        for i in range(split.queries.size):
            sl = slice(split.test_ptr[i], split.test_ptr[i + 1])
            labels = ranked_labels[sl]
            k = min(config.top_k, labels.size)
            at_k.append(auc_at_k(labels, k))
            prec.append(precision_at_k(labels, k))
            auc.append(ranking_auc(labels, ranked_scores[sl]))
    metrics = {"auc_at_k": float(np.mean(at_k)), "precision_at_k": float(np.mean(prec)),
               "auc": float(np.nanmean(auc))}
    return Result(method=method, dataset=str(getattr(data, "name", "graph")), seed=seed,
                  config=config.model_dump(mode="json"), metrics=metrics, privacy=_report(config, method, notes),
                  timings=timer.finish(), info=info)
