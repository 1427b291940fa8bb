"""The protected-pair ranking protocol: split -> fit a ranker -> one noisy ranking per query -> metrics.

One seed's split (:func:`graphpriv.ranking.protocol.ranking_split`; under ``accounting="reference"``
the released code's, :func:`graphpriv.ranking.reference.reference_split`): a share ``sigma_prot`` of the
edges protected, the queries (the top ``query_fraction`` of nodes by triangle count), and per query
a held-out share of its neighbours (positives, removed from the training graph) and of its
non-neighbours (negatives): its test candidates. :class:`~graphpriv.methods.dplp_rank.DPLPRanker`
is fitted on the split and ranks every query's candidates once with ``k = top_k``, through the
ranker's internal ``_rank``: it returns the whole noisy ranking and the noisy utilities, which this
protocol needs for the plain AUC and which are not a release (the public release is
:meth:`~graphpriv.methods.dplp_rank.DPLPRanker.recommend`: top-K ids only). The privacy report is
that of the top-K lists, K eps_p per query under the u-neighbouring relation of De & Chakrabarti,
"Differentially Private Link Prediction With Protected Connections", AAAI 2021, Def. 1 and Prop. 4.
Metrics over the queries: the paper's AUC@K (Sec. 6, App. 14), precision@K, and the plain AUC of
the whole noisy ranking (a diagnostic: only the top K is covered by the guarantee).

The registry's method ids run through :func:`run_rank`, with the ranker's ``transform`` and
``noise`` from :data:`RANK_VARIANTS`.
"""

from __future__ import annotations

import numpy as np
from torch_geometric.data import Data

from graphpriv.data.validation import check_data, check_seed
from graphpriv.errors import ConfigError
from graphpriv.evaluation.baselines import ranking_chance
from graphpriv.methods.base import Progress, Result, Timer, no_progress
from graphpriv.methods.dplp_rank import DPLPRanker, RankConfig
from graphpriv.methods.variants import RANK_VARIANTS
from graphpriv.ranking.metrics import auc_at_k, precision_at_k, ranking_auc
from graphpriv.ranking.protocol import RankingSplit, ranking_split
from graphpriv.ranking.reference import reference_split

__all__ = ["RANK_VARIANTS", "ranking_metrics", "run_rank"]

def ranking_metrics(split: RankingSplit, order: np.ndarray, noisy: np.ndarray, top_k: int) -> dict[str, float]:
    """Mean AUC@K, precision@K and AUC over the split's queries.

    Args:
        split: the protocol's split (``test_ptr [Q + 1]``, ``test_labels [T]``). order: ``[T]``
            positions sorted by decreasing noisy utility within each query (as
            the ranker's internal ``_rank`` returns). noisy: ``[T]`` the noisy
            utilities, aligned with ``split.test_nodes``. top_k: K (``min(K, candidates)`` per query).

    Returns:
        ``auc_at_k``, ``precision_at_k`` (means over queries) and ``auc`` (NaN-mean: a query whose
        candidates are of one label has none).
    """
    ranked_labels = split.test_labels[order]
    ranked_scores = noisy[order]
    at_k, prec, auc = [], [], []
    for i in range(split.queries.size):
        sl = slice(split.test_ptr[i], split.test_ptr[i + 1])
        labels = ranked_labels[sl]
        k = min(top_k, labels.size)
        at_k.append(auc_at_k(labels, k))
        prec.append(precision_at_k(labels, k))
        auc.append(ranking_auc(labels, ranked_scores[sl]))
    return {"auc_at_k": float(np.mean(at_k)), "precision_at_k": float(np.mean(prec)), "auc": float(np.nanmean(auc))}


def run_rank(config: RankConfig, data: Data, *, seed: int, method: str = "dplp-rank",
             progress: Progress = no_progress) -> Result:
    """One ranking cell: the split, :class:`~graphpriv.methods.dplp_rank.DPLPRanker` (variant from
    the method id, ``random_state`` = ``seed``) fitted on it, one noisy ranking of every query's
    held-out candidates with ``k = top_k``, the metrics.

    Args:
        config: :class:`~graphpriv.methods.dplp_rank.RankConfig` (or ``DPLPRankConfig`` for
            ``dplp-rank`` / ``dplp-rank-lin``). data: an undirected graph. seed: the split's, the
            fit's and the noise's, in [0, 2^32 - 1]. method: one of :data:`RANK_VARIANTS`.
        progress: passed to the transform's training.

    Returns:
        :class:`~graphpriv.methods.base.Result` with metrics ``auc_at_k`` (the paper's AUC@K),
        ``precision_at_k``, ``auc`` (plain AUC of the whole noisy ranking, a diagnostic), the
        chance levels of AUC@K and precision@K on the same queries as baselines, the
        privacy report (K eps_p per query list; None for ``rank-nonprivate``) and info (queries,
        candidates, protected edges; DPLP: losses, f(0), f(1), noise scales); the fitted ranker is
        attached (``result.estimator``; its ledger holds this run's lists).

    Raises:
        ConfigError: another method id, a bad seed, PA without a degree cap. DatasetError: a
            malformed graph, no usable query.
    """
    variant = RANK_VARIANTS.get(method)
    if variant is None:
        raise ConfigError(f"run_rank runs {', '.join(RANK_VARIANTS)} (got {method!r})")
    data = check_data(data, method=method)
    seed = check_seed(seed)
    timer = Timer()
    make_split = reference_split if config.accounting == "reference" else ranking_split
    with timer.phase("split"):
        split = make_split(data, sigma_prot=config.sigma_prot, query_fraction=config.query_fraction,
                           holdout=config.holdout, seed=seed)
    ranker = DPLPRanker(transform=variant[0], noise=variant[1], random_state=seed, **config.model_dump())
    ranker.fit(split, progress=progress)
    timer.merge(ranker.timings_)
    with timer.phase("ranking"):
        # the whole ranking and its noisy utilities, for evaluation only (not a release)
        order, noisy = ranker._rank(split.queries, (split.test_ptr, split.test_nodes), k=config.top_k)
        metrics = ranking_metrics(split, order, noisy, config.top_k)
    return Result(method=method, dataset=str(getattr(data, "name", "graph")), seed=seed,
                  config=config.model_dump(mode="json"), metrics=metrics, privacy=ranker.privacy_report_,
                  timings=timer.finish(), info=dict(ranker.info_),
                  baselines=ranking_chance(split.test_ptr, split.test_labels, config.top_k)).with_estimator(ranker)
