"""The link-prediction protocol: seeded edge split -> fit on the training graph -> AUCs -> Result.

The DPLP paper's protocol (Ran et al., "Differentially private graph neural networks for link
prediction", Sec. VII-A): the undirected edges are split 85/5/10 (``val_ratio``, ``test_ratio``)
by :func:`~graphpriv.data.splits.link_split` seeded with the run's seed, with as many non-edges of
the whole graph as negatives per held-out part; the estimator is fitted on the training graph (the
remaining edges, every node kept) with the validation pairs for its epoch selection; the test AUC
and the validation AUC are measured on the held-out pairs. Held-out pairs are evaluation data
outside the training graph: a private estimator's guarantee (edge level, add-or-remove one edge of
the training graph) is about the training graph it was fitted on.

One ``run_*`` function per method family, each ``(config, data, *, seed, method, progress) ->
Result`` as the experiments registry calls it; the estimator's ``random_state`` is the run's seed,
which also seeds the split (shared by every method for a seed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch
from torch_geometric.data import Data

from graphpriv.data.splits import LinkSplit, link_split
from graphpriv.data.validation import check_data, check_seed
from graphpriv.errors import ConfigError
from graphpriv.evaluation.baselines import chance_link_prediction, common_neighbours
from graphpriv.methods.base import Progress, Result, Timer, no_progress
from graphpriv.methods.estimator import Estimator
from graphpriv.methods.heuristic import CommonNeighbours, CommonNeighboursConfig, NeighbourhoodHeuristic
from graphpriv.methods.variants import GAE_PUBLISHER, HEURISTIC

if TYPE_CHECKING:  # imported by the run functions that fit them: common neighbours needs neither
    from graphpriv.methods.dplp_subgraph import DPLPConfig, DPLPLinkPredictor
    from graphpriv.methods.gae_link import GAELinkConfig
    from graphpriv.methods.heuristic_mix import HeuristicMixConfig
    from graphpriv.methods.lapgraph_sgnn import LapGraphConfig

__all__ = ["evaluate_link_predictor", "run_cn", "run_dplp", "run_gae_link", "run_heuristic_mix", "run_lapgraph_sgnn",
           "run_seal", "training_graph"]


def training_graph(data: Data, split: LinkSplit) -> Data:
    """The training part of ``split`` as a PyG ``Data`` to ``fit`` an estimator on.

    Args:
        data: the whole graph (its ``x`` and ``name`` are carried over; ``x`` is shared).
        split: a :class:`~graphpriv.data.splits.LinkSplit` of ``data``.

    Returns:
        ``Data`` with ``edge_index [2, 2E]`` (the training pairs in the split's order, then the
        same pairs reversed), ``num_nodes`` N (held-out endpoints stay as nodes), ``x`` when
        ``data`` has features, and ``name``.
    """
    train = split.train_edge_index
    out = Data(edge_index=torch.from_numpy(np.concatenate([train, train[::-1]], axis=1)), num_nodes=split.num_nodes)
    if getattr(data, "x", None) is not None:
        out.x = data.x
    out.name = str(getattr(data, "name", None) or "graph")
    return out


def evaluate_link_predictor(estimator: Estimator, data: Data, *, method: str, val_ratio: float = 0.05,
                            test_ratio: float = 0.10, progress: Progress = no_progress) -> Result:
    """Split ``data``, fit ``estimator`` on the training graph, and measure its AUCs.

    Args:
        estimator: an unfitted link predictor with ``fit(data, val_pos, val_neg, progress=...)``
            and ``score(pos, neg)`` (:class:`~graphpriv.methods.dplp_subgraph.DPLPLinkPredictor`,
            :class:`~graphpriv.methods.heuristic.CommonNeighbours`, ...); its ``random_state``
            seeds the split. data: the whole graph (checked by the caller).
        method: the method id recorded in the result. val_ratio, test_ratio: the held-out shares
            of the undirected edges (``val_ratio = 0``: no validation pairs, no ``val_auc``).
        progress: passed to ``fit``.

    Returns:
        :class:`Result` with ``metrics`` ``test_auc`` and ``val_auc`` (when there are validation
        pairs), the baseline (common neighbours on the same split; chance for common neighbours
        itself; AA and RA are compared with common neighbours), the estimator's ``privacy_report_``, its ``info_`` (a copy), the timings of the
        split, of ``fit``'s phases and of the evaluation, and ``config``: the estimator's
        hyperparameters (JSON values).

    Raises:
        ConfigError, DatasetError: a bad split (ratios, too few edges or non-edges); whatever
            ``fit`` raises.
    """
    seed = estimator.random_state
    timer = Timer()
    with timer.phase("split"):
        split = link_split(data, val_ratio=val_ratio, test_ratio=test_ratio, seed=seed)
    val = (split.val_pos, split.val_neg) if split.val_pos.shape[1] else (None, None)
    train = training_graph(data, split)
    with timer.phase("fit"):
        estimator.fit(train, *val, progress=progress)
    fitted = vars(estimator)
    if fitted.get("timings_"):  # the estimator's own phases replace the whole "fit"
        del timer.timings["fit"]
        timer.merge(fitted["timings_"])
    with timer.phase("evaluation"):
        metrics = {"test_auc": estimator.score(split.test_pos, split.test_neg)}
        if val[0] is not None:
            # an estimator that selected its epoch on these pairs measured this AUC in fit (the kept
            # parameters, scored as score scores them): the same number, without extracting and
            # scoring the validation subgraphs a second time
            kept = fitted.get("val_auc_")
            metrics["val_auc"] = kept if kept is not None else estimator.score(*val)
    with timer.phase("baseline"):
        common = isinstance(estimator, NeighbourhoodHeuristic) and estimator.heuristic == "cn"
        baseline = (chance_link_prediction() if common
                    else common_neighbours(train, split, private=estimator.privacy_report_ is not None))
    return Result(method=method, dataset=str(data.name), seed=seed, config=estimator.config.model_dump(mode="json"),
                  metrics=metrics, privacy=estimator.privacy_report_, timings=timer.finish(),
                  info=dict(fitted.get("info_") or {}), baselines=[baseline]).with_estimator(estimator)


def _run_subgraph(cls: type[DPLPLinkPredictor], config: DPLPConfig, data: Data, *, seed: int, method: str,
                  progress: Progress) -> Result:
    data = check_data(data, method=method)
    estimator = cls(random_state=check_seed(seed), **config.model_dump())
    # the result keeps the configuration as asked (k / theta "auto" included): it is the run's key in
    # a results store, so an "auto" run never takes the place of the fixed-k run whose k it chose;
    # what "auto" selected is in info (selected_k, selected_theta)
    return evaluate_link_predictor(estimator, data, method=method, val_ratio=config.val_ratio,
                                   test_ratio=config.test_ratio, progress=progress)


def run_dplp(config: DPLPConfig, data: Data, *, seed: int, method: str = "dplp-ps",
             progress: Progress = no_progress) -> Result:
    """Fit and test :class:`~graphpriv.methods.dplp_subgraph.DPLPLinkPredictor` (``dplp-ps``,
    ``dplp-ns``) by the link protocol.

    Args:
        config: its hyperparameters (``k`` / ``theta`` may be ``"auto"``: private selection with
            ``selection_fraction`` of epsilon). data: the whole graph. seed: seeds the split and
            the estimator (``random_state``). method: the id recorded. progress: per-epoch callback.

    Returns:
        :class:`Result`: ``test_auc``, ``val_auc``; the privacy report (edge level; phases
        ``selection`` when used, and ``training``); info (M, group size, empirical max |LSN|, noise
        multiplier, sizes, best epoch; ``selected_k`` / ``selected_theta`` where ``auto`` chose
        them); ``config`` as given (``"auto"`` kept: the run's key in a results store).

    Raises:
        DatasetError: malformed ``data``, too few edges to split. ConfigError: a bad seed, batch
            larger than the training set, auto without privacy, a dependency group larger than the
            training set. BudgetExceededError: epsilon too small for the number of steps.
            SensitivityError: an empirical dependency above the bound.
    """
    from graphpriv.methods.dplp_subgraph import DPLPLinkPredictor

    return _run_subgraph(DPLPLinkPredictor, config, data, seed=seed, method=method, progress=progress)


def run_seal(config: DPLPConfig, data: Data, *, seed: int, method: str = "seal",
             progress: Progress = no_progress) -> Result:
    """Fit and test :class:`~graphpriv.methods.dplp_subgraph.SEALLinkPredictor` (``seal``: SEAL's
    DGCNN) or :class:`~graphpriv.methods.dplp_subgraph.SEALGCNLinkPredictor` (``seal-gcn``: the
    private models' GCN), no DP, by the link protocol; as :func:`run_dplp`, with ``privacy`` ``None``."""
    from graphpriv.methods.dplp_subgraph import SEALGCNLinkPredictor, SEALLinkPredictor

    cls = SEALGCNLinkPredictor if method == "seal-gcn" else SEALLinkPredictor
    return _run_subgraph(cls, config, data, seed=seed, method=method, progress=progress)


def run_lapgraph_sgnn(config: LapGraphConfig, data: Data, *, seed: int, method: str = "lapgraph-sgnn",
                      progress: Progress = no_progress) -> Result:
    """Fit and test :class:`~graphpriv.methods.lapgraph_sgnn.LapGraphLinkPredictor` by the link
    protocol.

    Returns:
        :class:`Result`; its privacy report (edge-level epsilon-DP of the release) has phases
        ``edge count`` and ``perturbation``; ``config`` is the one asked for (the store keys reruns
        on it); info adds ``released_edges`` and ``released_true_edges``.

    Raises:
        DatasetError: malformed ``data``. ConfigError: a bad seed, batch larger than the training set.
    """
    from graphpriv.methods.lapgraph_sgnn import LapGraphLinkPredictor

    data = check_data(data, method=method)
    estimator = LapGraphLinkPredictor(random_state=check_seed(seed), **config.model_dump())
    return evaluate_link_predictor(estimator, data, method=method, val_ratio=config.val_ratio,
                                   test_ratio=config.test_ratio, progress=progress)


def run_cn(config: CommonNeighboursConfig, data: Data, *, seed: int, method: str = "cn",
           progress: Progress = no_progress) -> Result:
    """Score the held-out pairs of the seeded link split by a neighbourhood heuristic on the
    training graph (:class:`~graphpriv.methods.heuristic.NeighbourhoodHeuristic`, no DP): common
    neighbours for ``cn``, Adamic-Adar for ``aa``, resource allocation for ``ra``
    (:data:`~graphpriv.methods.variants.HEURISTIC`); report the AUCs.

    Raises:
        DatasetError: malformed ``data``, too few edges to split. ConfigError: a bad seed, a
            method id that names no heuristic.
    """
    if method not in HEURISTIC:
        raise ConfigError(f"run_cn runs {', '.join(HEURISTIC)} (got {method!r})")
    data = check_data(data, method=method)
    cls = CommonNeighbours if HEURISTIC[method] == "cn" else NeighbourhoodHeuristic
    estimator = cls(heuristic=HEURISTIC[method], random_state=check_seed(seed), **config.model_dump())
    return evaluate_link_predictor(estimator, data, method=method, val_ratio=config.val_ratio,
                                   test_ratio=config.test_ratio, progress=progress)


def run_gae_link(config: GAELinkConfig, data: Data, *, seed: int, method: str = "gae",
                 progress: Progress = no_progress) -> Result:
    """A GAE link predictor on the seeded link split: on the training graph (``gae``, no DP), or on
    its EdgeRand or LapGraph release (``edgerand-gae``, ``lapgraph-gae``: edge-level DP;
    :data:`~graphpriv.methods.variants.GAE_PUBLISHER`); report the AUCs beside common neighbours.

    Raises:
        DatasetError: malformed ``data``, too few edges to split. ConfigError: a bad seed, a
            method id that names no GAE link predictor, an EdgeRand release above ``max_edges``.
    """
    from graphpriv.methods.gae_link import GAELinkPredictor

    if method not in GAE_PUBLISHER:
        raise ConfigError(f"run_gae_link runs {', '.join(GAE_PUBLISHER)} (got {method!r})")
    data = check_data(data, method=method)
    estimator = GAELinkPredictor(publisher=GAE_PUBLISHER[method], random_state=check_seed(seed), **config.model_dump())
    return evaluate_link_predictor(estimator, data, method=method, val_ratio=config.val_ratio,
                                   test_ratio=config.test_ratio, progress=progress)


def run_heuristic_mix(config: HeuristicMixConfig, data: Data, *, seed: int, method: str = "dp-heuristic-mix",
                      progress: Progress = no_progress) -> Result:
    """The private mixture of RA and RA3 (:class:`~graphpriv.methods.heuristic_mix.HeuristicMixLinkPredictor`,
    edge-level DP) on the seeded link split; report the AUCs beside common neighbours.

    Raises:
        DatasetError: malformed ``data``, too few edges to split. ConfigError: a bad seed.
    """
    from graphpriv.methods.heuristic_mix import HeuristicMixLinkPredictor

    data = check_data(data, method=method)
    estimator = HeuristicMixLinkPredictor(random_state=check_seed(seed), **config.model_dump())
    return evaluate_link_predictor(estimator, data, method=method, val_ratio=config.val_ratio,
                                   test_ratio=config.test_ratio, progress=progress)
