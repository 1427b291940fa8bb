"""DPLP-subgraph: edge-level DP link prediction with subgraph GNNs, and the SEAL baseline.

Source: Ran, Ye, Hu, Huang, Xu, Fu, "Differentially private graph neural networks for link
prediction", Algorithms 1-2 (training examples, DP-SGD), Lemma 2 and Theorem 1 (dependency
bounds), Theorem 2 (accounting), Sec. VII-A (protocol and defaults); SEAL: Zhang & Chen, "Link
prediction based on graph neural networks" (NeurIPS 2018).

Estimators: :class:`DPLPLinkPredictor` (method ids ``dplp-ps``: path subgraphs, ``dplp-ns``:
neighbourhood subgraphs), :class:`SEALGCNLinkPredictor` (``seal-gcn``: the same model, non-private,
on 1-hop enclosing subgraphs of the unprojected training graph) and :class:`SEALLinkPredictor`
(``seal``: SEAL's own DGCNN and settings, non-private). The split, the test AUC and the
:class:`~graphpriv.methods.base.Result` are the link-prediction protocol's
(:mod:`graphpriv.evaluation.link`).

Privacy: edge level, add-or-remove one edge of the training graph given to ``fit``. The released
artefact is the trained model ``model_``. One edge change alters at most M training subgraphs (+1:
its own example), so each DP-SGD step is analysed with the hypergeometric multi-term bound
(``rigorous``) or the paper's effective-rate bound (``paper``). Validation pairs given to ``fit``
are held-out evaluation data outside the training graph; selecting the epoch by their AUC follows
the paper's protocol. Predictions extract each pair's subgraph from ``graph_`` (the training
graph itself), or from another graph on the same nodes given to ``predict_proba(..., data=...)``;
the guarantee does not cover that graph: the model is private, the graph it is applied to is the
data owner's. A privacy audit (:mod:`graphpriv.audit.dplp`) drives ``fit`` with white-box gradient
canaries and a noise fault through ``fit(..., audit_hook=...)``; without a hook ``fit`` is the
user's training, unchanged. ``info_`` also keeps exact facts of the training graph (edge and example
counts, the empirical max |LSN|), and a saved file holds both ``graph_`` and ``info_``: keep it as
private as the data.
"""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Literal

import numpy as np
import torch
from dp_accounting import dp_event
from pydantic import Field, field_validator
from sklearn.metrics import roc_auc_score
from torch_geometric.data import Data

from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.data.validation import check_data, check_node_pairs
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.linkpred.dependency import check_dependency_bound
from graphpriv.linkpred.drnl import max_drnl_label
from graphpriv.linkpred.evaluation_sets import evaluation_subgraphs
from graphpriv.linkpred.examples import training_links, uniform_training_links
from graphpriv.linkpred.projection import project_degree
from graphpriv.linkpred.subgraph_clipping import subgraph_clipped_sum
from graphpriv.linkpred.subgraphs import (
    Extractor,
    SubgraphSet,
    collate_sparse,
    extract_subgraphs,
)
from graphpriv.methods.base import MethodConfig, Progress, Timer, no_progress, phase_progress
from graphpriv.methods.best_epoch import BestEpoch
from graphpriv.methods.dplp_selection import select_k_theta
from graphpriv.methods.estimator import Estimator
from graphpriv.nn.subgraph_gnn import Backbone, SubgraphGNN, bce_loss, predict
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.calibration import calibrate_noise_multiplier
from graphpriv.privacy.engine import DPSGD
from graphpriv.privacy.hooks import AuditHook
from graphpriv.privacy.sampling import WithoutReplacementSampler
from graphpriv.privacy.sensitivity import (
    group_size,
    neighbourhood_bound,
    path_bound,
    path_bound_paper,
)
from graphpriv.privacy.units import Accounting, PrivacyUnit

__all__ = ["DPLPConfig", "DPLPLinkPredictor", "SEALConfig", "SEALDGCNNConfig", "SEALGCNLinkPredictor", "SEALLinkPredictor",
           "calibrate_training_noise",
           "check_group_fits", "dependency_bound", "label_cap", "make_optimizer", "sort_pool_size", "training_steps"]


class DPLPConfig(MethodConfig):
    """Hyperparameters of DPLP-PS / DPLP-NS / SEAL (defaults: the paper's, Sec. VII-A).

    ``val_ratio`` and ``test_ratio`` are the link-prediction protocol's split
    (:func:`graphpriv.evaluation.link.run_dplp`); the estimator's ``fit`` takes the training graph
    and validation pairs as given and does not read them. ``eval_batch_size`` is the batch size of
    validation and prediction (speed only).
    """

    epsilon: float = Field(4.0, gt=0, description="target epsilon (edge-level)")
    delta: float = Field(1e-5, gt=0, lt=1)
    private: bool = True
    extractor: Extractor = Extractor.PATH
    k: Annotated[int, Field(ge=2, le=6)] | Literal["auto"] = Field(2, description="path length bound, or auto")
    h: int = Field(1, ge=1, description="hops (neighbourhood subgraphs)")
    theta: Annotated[int, Field(ge=1)] | Literal["auto"] = Field(8, description="degree bound, or auto")
    k_candidates: tuple[int, ...] = (2, 3, 4)
    theta_candidates: tuple[int, ...] = (5, 10, 15, 20, 30, 40, 60, 80, 100)
    selection_fraction: float = Field(0.1, gt=0, lt=1, description="share of epsilon for auto selection")
    project: bool = True
    lam: float = Field(1.0, ge=0, description="negative sampling rate lambda")
    max_grad_norm: float = Field(1.0, gt=0)
    batch_size: int = Field(128, ge=1)
    epochs: int = Field(50, ge=1)
    lr: float = Field(0.01, gt=0)
    momentum: float = Field(0.0, ge=0, lt=1)
    optimizer: str = Field("sgd", pattern="^(sgd|adam)$")
    backbone: Backbone = Backbone.GCN
    sort_k: int = Field(10, ge=10, description="DGCNN SortPooling size (fixed: a data-dependent k would leak)")
    hidden: int = Field(32, ge=1)
    dropout: float = Field(0.5, ge=0, lt=1)
    accounting: Accounting = Accounting.RIGOROUS
    val_ratio: float = Field(0.05, ge=0, lt=1, description="protocol: share of edges held out for validation")
    test_ratio: float = Field(0.10, gt=0, lt=1, description="protocol: share of edges held out for testing")
    eval_batch_size: int = Field(256, ge=1)
    buckets: int = Field(1, ge=1, description="size-sorted groups per DP-SGD batch, each its own forward pass (the "
                         "vmap path's padding; the sparse path needs none: the dropout draws follow the grouping)")

    @field_validator("k", mode="before")
    @classmethod
    def _k_in_range(cls, value: object) -> object:
        """k in 2..6 or 'auto', refused with the reason (the bound of
        :func:`graphpriv.privacy.sensitivity.path_bound` is derived for 2..6)."""
        if isinstance(value, int) and not isinstance(value, bool) and not 2 <= value <= 6:
            reason = ("a path subgraph with k = 1 holds the pair's own link only, which is hidden from the model"
                      if value < 2 else
                      "the links one edge can reach grow as theta^k (the dependency bound M: 288 at k = 4, 2,336 at "
                      "k = 6 with theta = 8), and the noise with them; already at k = 4 Yeast cannot learn")
            raise ValueError(f"k must be in 2..6 or 'auto' (got {value}): {reason}")
        return value


class SEALConfig(DPLPConfig):
    """The private models' subgraph GCN without noise (``seal-gcn``): 1-hop enclosing subgraphs of the
    unprojected training graph, no noise, Adam at lr 0.001, dropout 0.5 (the DPLP paper's Sec.
    VII-A settings applied to SEAL's subgraphs)."""

    private: bool = False
    extractor: Extractor = Extractor.NEIGHBOURHOOD
    project: bool = False
    optimizer: str = Field("adam", pattern="^(sgd|adam)$")
    lr: float = Field(0.001, gt=0)


class SEALDGCNNConfig(SEALConfig):
    """SEAL's own model and settings (Zhang & Chen, "Link prediction based on graph neural networks",
    NeurIPS 2018, Sec. 4-5, and its released code, read to understand): DGCNN with four graph
    convolutions (``gcn_layers`` = 3 of ``hidden`` = 32 channels, then 1), SortPooling of the
    ``sort_percentile`` (60%) percentile of the training subgraphs' sizes (at least 10), 1-D
    convolutions, a dense layer of ``dense`` = 128 with dropout 0.5 (the only dropout), Adam at
    1e-4, batch 32, 50 epochs; h = 2 hops (SEAL's choice on USAir, Yeast and C.elegans; h = 1 on
    PolBlogs, as its released code notes, for memory); training negatives uniform non-edges, as
    many as the edges, or as many as the ``max_train_links`` edges drawn when the graph has more
    (the released code's cap on training links, for memory; its subgraphs are still taken from the
    whole training graph). Not private: the data-dependent SortPooling size is fine here."""

    backbone: Backbone = Backbone.DGCNN
    h: int = Field(2, ge=1, description="hops of the enclosing subgraphs")
    gcn_layers: int = Field(3, ge=1, description="DGCNN graph convolutions of hidden width (then a 1-channel one)")
    dense: int = Field(128, ge=1, description="DGCNN dense layer width")
    sort_k: Annotated[int, Field(ge=10)] | Literal["auto"] = Field(
        "auto", description="SortPooling size, or auto: the sort_percentile of the training subgraphs' sizes (>= 10)")
    sort_percentile: float = Field(0.6, gt=0, le=1)
    negatives: Literal["uniform", "capped"] = Field("uniform", description="training negatives: uniform non-edges "
                                                    "(SEAL) or DPLP's degree-capped ones")
    lr: float = Field(1e-4, gt=0)
    batch_size: int = Field(32, ge=1)
    max_train_links: Annotated[int, Field(ge=1)] | None = Field(
        None, description="at most this many training edges as positive examples, drawn uniformly (SEAL's "
                          "max-train-num, for memory on large graphs), with as many negatives; None: all")


def dependency_bound(config: DPLPConfig) -> int:
    """M for the configured extractor: Lemma 2, or the path bound (graphpriv's derivation in
    ``rigorous`` mode, Theorem 1 as printed in ``paper`` mode)."""
    if config.extractor is Extractor.NEIGHBOURHOOD:
        return neighbourhood_bound(config.h, config.theta, config.lam)
    if config.accounting is Accounting.PAPER:
        return path_bound_paper(config.k, config.theta, config.lam)
    return path_bound(config.k, config.theta, config.lam)


def label_cap(config: DPLPConfig) -> int:
    """The largest DRNL label the model embeds: path subgraphs (length <= k) or h-hop neighbourhoods
    (distances <= 2h per endpoint); larger labels share the last slot."""
    return max_drnl_label(config.k if config.extractor is Extractor.PATH else 4 * config.h)


#: A validation set whose subgraphs hold at most this many (undirected) edges in all keeps its
#: collated batches from one epoch to the next (:class:`_ValidationAUC`); a larger one is collated
#: afresh each epoch. What is kept: about 24 bytes per edge (the batches' sparse A + I, its int64
#: columns and float32 values, both directions) beside the set's own arrays, 1.5 GiB at this bound
#: (SEAL's Facebook at k = 4 holds about 40 million validation edges).
KEEP_VALIDATION_EDGES = 2**26


def _eval_batches(subgraphs: SubgraphSet, config: DPLPConfig, cap: int):
    """The sparse batches of every subgraph, ``config.eval_batch_size`` at a time (no padding to the
    largest subgraph of a chunk), as a generator of collated input tuples."""
    chunks = np.array_split(np.arange(len(subgraphs)), max(1, math.ceil(len(subgraphs) / config.eval_batch_size)))
    return (collate_sparse(subgraphs, c, max_label=cap)[0] for c in chunks)


def _scores(model: SubgraphGNN, subgraphs: SubgraphSet, config: DPLPConfig, cap: int) -> torch.Tensor:
    """Sigmoid scores ``[L]`` of every subgraph (:func:`_eval_batches`)."""
    return predict(model, _eval_batches(subgraphs, config, cap))


class _ValidationAUC:
    """The validation AUC of ``model`` on ``subgraphs``, once per epoch.

    A batch's inputs (DRNL labels, the normalised A + I of its subgraphs, their edges) do not depend
    on the parameters, so a set of at most :data:`KEEP_VALIDATION_EDGES` edges is collated on the
    first call and its batches, with what the model builds on them, are kept for the later epochs:
    the same scores as collating afresh (tested), without rebuilding them every epoch (about 2x
    faster a GCN validation pass on PolBlogs at k = 4, where validation was half of a DPLP-PS run;
    ``benchmarks/bench_validation_pass.py``).
    """

    def __init__(self, model: SubgraphGNN, subgraphs: SubgraphSet, config: DPLPConfig, cap: int) -> None:
        self.model, self.subgraphs, self.config, self.cap = model, subgraphs, config, cap
        self.keep = int(subgraphs.edges.shape[1]) <= KEEP_VALIDATION_EDGES
        self.batches: list | None = None

    def __call__(self) -> float:
        if not self.keep:
            batches = _eval_batches(self.subgraphs, self.config, self.cap)
        else:
            if self.batches is None:
                self.batches = list(_eval_batches(self.subgraphs, self.config, self.cap))
            batches = self.batches
        scores = predict(self.model, batches).numpy()
        if not np.isfinite(scores).all():  # a diverged model (noisy steps can blow up): no AUC
            return math.nan
        return float(roc_auc_score(self.subgraphs.labels, scores))


def make_optimizer(model: torch.nn.Module, config: DPLPConfig) -> torch.optim.Optimizer:
    """The configured optimiser (``adam``, or SGD with ``momentum``) at ``config.lr``; it only sees
    noised gradients (post-processing)."""
    if config.optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=config.lr)
    return torch.optim.SGD(model.parameters(), lr=config.lr, momentum=config.momentum)


def training_steps(config: DPLPConfig, num_examples: int) -> tuple[int, int]:
    """``(steps per epoch, total steps)``: ceil(num_examples / batch_size) per epoch, ``config.epochs`` epochs."""
    per_epoch = math.ceil(num_examples / config.batch_size)
    return per_epoch, per_epoch * config.epochs


def calibrate_training_noise(config: DPLPConfig, sampler: WithoutReplacementSampler, k_group: int, steps: int,
               spent: dp_event.DpEvent | None = None) -> float:
    """The DP-SGD noise multiplier z such that ``spent`` (e.g. the selection's event) composed with
    ``steps`` sampled Gaussian steps (group size ``k_group``: one edge changes up to K examples)
    meets ``config.epsilon`` at ``config.delta`` under ``config.accounting``.

    Raises:
        BudgetExceededError: no noise multiplier reaches the target (:func:`calibrate_noise_multiplier`)."""

    def whole_run(z: float) -> dp_event.DpEvent:
        step = sampler.step_event(z, group_size=k_group, accounting=config.accounting)
        training = dp_event.SelfComposedDpEvent(step, steps)
        return training if spent is None else dp_event.ComposedDpEvent([spent, training])

    return calibrate_noise_multiplier(whole_run, target_epsilon=config.epsilon, delta=config.delta)


def check_group_fits(config: DPLPConfig, k_group: int, num_examples: int) -> None:
    """Refuse, before extraction and training, a dependency bound that covers every training example.

    One edge change may alter K = ``k_group`` examples (M dependent ones, plus its own under
    ``rigorous`` accounting); when K exceeds the training set, DP-SGD's group bound says nothing.

    Args:
        config: the run's settings (k, theta, lam, extractor, accounting). k_group: K.
        num_examples: training examples (links and capped negatives of the projected graph).

    Raises:
        ConfigError: K > ``num_examples``, naming M, the example count, and the groups that
            lower thetas give.
    """
    if k_group <= num_examples:
        return
    lower = [t for t in (int(config.theta) - 1, int(config.theta) // 2, 2) if 1 <= t < int(config.theta)]
    lower = list(dict.fromkeys(lower))
    groups = "/".join(str(_group_of(config.model_copy(update={"theta": t}))) for t in lower)
    hint = (f"theta={'/'.join(map(str, lower))} give groups of {groups} (a lower theta also leaves fewer "
            "examples)" if lower else "theta is already 1")
    shape = f"k={config.k}, " if config.extractor is Extractor.PATH else f"h={config.h}, "
    raise ConfigError(f"the dependency bound M={dependency_bound(config)} ({shape}theta={config.theta}, "
                      f"{config.accounting.value} accounting) gives a group of {k_group} examples that one edge "
                      f"can change, more than the {num_examples} training examples, so DP-SGD cannot bound it; "
                      f"lower theta or {'k' if config.extractor is Extractor.PATH else 'h'} ({hint}), "
                      "or use a larger graph")


def _group_of(config: DPLPConfig) -> int:
    bound = dependency_bound(config)
    return group_size(bound) if config.accounting is Accounting.RIGOROUS else bound


class _Selector:
    """Keeps the parameters of the epoch with the best validation AUC (first best on ties; a
    :class:`~graphpriv.methods.best_epoch.BestEpoch` with the initial-state fallback); without a
    validation set, the last epoch. An epoch whose validation scores are not finite (the model
    diverged: ``nan``) is counted in ``diverged_epochs`` and never kept; if every epoch diverged,
    the initial parameters (epoch 0, data-independent) are kept. ``history`` holds every epoch's
    validation AUC (``nan`` where it diverged)."""

    def __init__(self, model: torch.nn.Module, validate) -> None:
        self.best = BestEpoch(model, validate, keep_initial=True) if validate is not None else None
        self.diverged_epochs, self.last_epoch = 0, 0
        self.history: list[float] = []

    @property
    def best_epoch(self) -> int:
        """The selected epoch: the best one, 0 when every epoch diverged, the last without validation."""
        return self.last_epoch if self.best is None else self.best.epoch

    @property
    def best_auc(self) -> float | None:
        """The selected epoch's validation AUC (None without validation or when every epoch diverged)."""
        return None if self.best is None or self.best.epoch == 0 else self.best.score

    def end_epoch(self, epoch: int) -> dict[str, float]:
        """Record the end of ``epoch``; returns the progress fields (``val_auc``: the best so far)."""
        self.last_epoch = epoch
        if self.best is None:
            return {}
        val_auc = self.best.offer(epoch)
        self.history.append(val_auc)
        self.diverged_epochs += math.isnan(val_auc)
        return {} if self.best_auc is None else {"val_auc": self.best_auc}

    def restore(self) -> None:
        """Load the selected epoch's parameters into the model (nothing without validation)."""
        if self.best is not None:
            self.best.restore()


def _train_private(model, train_set, config, cap, sampler, engine_args, selector: _Selector, steps, per_epoch,
                   progress: Progress) -> None:
    sizes = torch.from_numpy(train_set.num_nodes_per_subgraph)
    # the vmap sum's clipped per-subgraph gradients, from one sparse batch per bucket
    clipped = {"clipped_sum": subgraph_clipped_sum(model, lambda idx: collate_sparse(train_set, idx, max_label=cap),
                                                   config.max_grad_norm, sizes=sizes, buckets=config.buckets)}
    engine = DPSGD(model, make_optimizer(model, config), sampler, **clipped, **engine_args)
    for step in range(1, steps + 1):
        model.train()
        loss = engine.step()
        if step % per_epoch == 0 or step == steps:
            progress(step, steps, loss=loss, **selector.end_epoch(math.ceil(step / per_epoch)))


def _train_nonprivate(model, train_set, config, cap, generator, selector: _Selector, per_epoch,
                      progress: Progress) -> None:
    optimizer = make_optimizer(model, config)
    steps, done = per_epoch * config.epochs, 0
    for epoch in range(1, config.epochs + 1):
        order = torch.randperm(len(train_set), generator=generator)
        model.train()
        for batch in order.split(config.batch_size):  # sparse batches: the dense ones' draws, no padding
            inputs, y = collate_sparse(train_set, batch, max_label=cap)
            optimizer.zero_grad()
            loss = bce_loss(model(*inputs), y)
            loss.backward()
            optimizer.step()
            done += 1
        progress(done, steps, loss=float(loss.detach()), **selector.end_epoch(epoch))


def _select(config: DPLPConfig, pairs: np.ndarray, num_nodes: int, ledger: Ledger, generator: torch.Generator):
    """Resolve ``auto`` k / theta privately; returns (resolved config, selection event, info)."""
    if not config.private or config.extractor is not Extractor.PATH:
        raise ConfigError("k=auto / theta=auto is private selection for path subgraphs (dplp-ps) only")
    frac = config.selection_fraction
    selection = select_k_theta(
        pairs, num_nodes,
        k_candidates=config.k_candidates if config.k == "auto" else (config.k,),
        theta_candidates=config.theta_candidates if config.theta == "auto" else (config.theta,),
        epsilon_selection=frac * config.epsilon, epsilon_train=(1 - frac) * config.epsilon,
        delta=config.delta, lam=config.lam, batch_size=config.batch_size, epochs=config.epochs,
        generator=generator)
    ledger.spend(selection.event, phase="selection", noise_multiplier=selection.noise_multiplier)
    info = {"selected_k": selection.k, "selected_theta": selection.theta,
            "selection_noisy_num_edges": selection.noisy_num_edges}
    return config.model_copy(update={"k": selection.k, "theta": selection.theta}), selection.event, info


def _build_model(config: DPLPConfig) -> SubgraphGNN:
    """The subgraph GNN of ``config`` (draws its initial weights from torch's global generator);
    SEAL's DGCNN (:class:`SEALDGCNNConfig`) has its own depth and dense width, and ``sort_k``
    resolved by ``fit``."""
    layers = config.k if config.extractor is Extractor.PATH else config.h
    if config.backbone is Backbone.DGCNN and getattr(config, "gcn_layers", None):
        layers = config.gcn_layers  # SEAL's DGCNN: its own depth, whatever h
    return SubgraphGNN(label_cap(config) + 1, backbone=config.backbone, hidden=config.hidden, dropout=config.dropout,
                       num_layers=layers, sort_k=config.sort_k, dense=getattr(config, "dense", None))


def sort_pool_size(sizes: np.ndarray, percentile: float) -> int:
    """SEAL's SortPooling size: the smallest size with at least ``percentile`` of the subgraphs no
    larger (the ``ceil(percentile n)``-th smallest), at least 10 (Zhang & Chen 2018, Sec. 5)."""
    ordered = np.sort(np.asarray(sizes))
    return max(10, int(ordered[max(0, math.ceil(percentile * ordered.size) - 1)])) if ordered.size else 10


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers (for JSON)."""
    return value.item() if isinstance(value, np.generic) else str(value)


class DPLPLinkPredictor(Estimator):
    """DPLP: a subgraph GNN link predictor trained with edge-level DP-SGD (or without noise).

    ``fit`` takes the training graph and optional held-out validation pairs and runs the paper's
    training (Algorithms 1-2): private (k, theta) selection when ``k`` or ``theta`` is ``"auto"``
    (path subgraphs only, ``selection_fraction`` of epsilon), degree projection to theta
    (``project``), training links with lambda negatives per positive, noise calibration to
    (epsilon, delta), subgraph extraction with the run-time check of the dependency bound M,
    DP-SGD (``private``) or plain minibatch training, and the choice of the epoch with the best
    validation AUC (the last epoch without validation pairs).

    Privacy (``private=True``): (epsilon, delta)-DP at edge level, neighbouring training graphs
    differing by adding or removing one edge; the guarantee covers the model weights (``model_``)
    only. ``graph_`` (the training graph predictions are extracted from) is not covered, nor are
    the facts of the private graph in ``info_`` (``train_edges``, ``projected_edges``,
    ``num_train_examples``, ``empirical_max_lsn``, ``max_subgraph_nodes``) and ``val_auc_``
    and ``info_["val_auc_by_epoch"]`` (held-out pairs scored on the training graph, the latter after
    every epoch, None where the model diverged). The saved file (:meth:`save`) holds the
    training graph (needed to extract prediction subgraphs) and those facts of the private data in
    ``info_``: keep it as private as the data; the model weights are what the guarantee covers.
    ``private=False`` spends nothing (``privacy_report_`` is ``None``).

    Args:
        random_state: seed of every draw of ``fit``: the selection (torch generator
            ``1000 s + 7``), the projection and the negatives (numpy ``default_rng([s, 1])``), the
            initial weights (``torch.manual_seed(s)``), the batches and the noise (torch generators
            ``1000 s + 1`` and ``1000 s + 2``).
        **params: the fields of :class:`DPLPConfig`.

    Attributes:
        model_: the trained :class:`~graphpriv.nn.subgraph_gnn.SubgraphGNN` (best epoch loaded).
        graph_: ``[2, E]`` LongTensor, the training graph's undirected edges (u < v) that
            prediction subgraphs are extracted from. num_nodes_: N of the training graph.
        k_, theta_: k and theta after ``"auto"`` selection. best_epoch_: the epoch kept (1-based).
        val_auc_: its validation AUC (``None`` without validation pairs).
        info_: facts of the run (dependency bound M, group size, empirical max |LSN|, noise
            multiplier and std, example and edge counts, steps, selection results, best epoch);
            the counts and the empirical max |LSN| are exact values of the private graph, not DP.
        ledger_: the :class:`~graphpriv.privacy.accountant.Ledger` of the run (``None`` after
            :meth:`load`). timings_: seconds per phase of ``fit``.
        privacy_report_: phases ``selection`` (when used) and ``training``; ``None`` when non-private.

    Raises:
        ConfigError: an unknown hyperparameter or an invalid value (at construction).
    """

    config_cls = DPLPConfig

    @staticmethod
    def _validation_pairs(val_pos: Any, val_neg: Any, num_nodes: int,
                          graph: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
        """The checked validation pairs of ``fit`` (subclasses' too): :func:`_validation_pairs`."""
        return _validation_pairs(val_pos, val_neg, num_nodes, graph)
    _fitted_private = ("_adj", "_fit_config")

    # -- fit ----------------------------------------------------------------------------------------

    def fit(self, data: Data, val_pos: Any = None, val_neg: Any = None,
            progress: Progress | None = no_progress, *, audit_hook: AuditHook | None = None) -> DPLPLinkPredictor:
        """Train on the training graph ``data``; select the epoch on ``val_pos`` / ``val_neg``.

        Args:
            data: the training graph (PyG ``Data``: ``edge_index [2, 2E]``, ``num_nodes`` N;
                features, if any, are checked but not used: the model sees structure only).
            val_pos, val_neg: optional held-out validation pairs, ``[2, P]`` and ``[2, Q]``
                integer node ids (LongTensor or numpy), not edges of ``data``; both or neither.
            progress: called ``progress(step, total_steps, loss=..., val_auc=...)`` once per epoch
                (``None``: no progress).
            audit_hook: for privacy audits only (:mod:`graphpriv.audit.dplp`; white box: what it
                carries is not part of a release), ``None`` for a real fit, which is then unchanged
                bit for bit. An :class:`~graphpriv.privacy.hooks.AuditHook` reaches the DP-SGD
                engine (:class:`~graphpriv.privacy.engine.DPSGD`): its ``noise_scale`` multiplies
                the noise std of every step while the ledger and ``privacy_report_`` still claim
                the calibrated guarantee (a deliberate fault; a non-private fit has no noise to
                scale), and its ``canaries`` (:class:`~graphpriv.privacy.hooks.GradientCanaries`,
                private fits only) are attached with ``group_size`` K (``info_["group_size"]``) and
                ``max_grad_norm`` C and append the extra examples they ask for after the N real
                training examples: the fixed-size sampler, the noise calibration and the step
                count (an epoch is a pass over the N + extra examples) cover that population, the
                extras are left out of the model's gradient and are told each step's sample and
                noise std. ``check_group_fits``, ``batch_size`` and the ``info_`` counts stay
                those of the real examples. ``auto`` k / theta take no hook other than the default
                (the private selection is not audited).

        Returns:
            ``self``, fitted.

        Raises:
            DatasetError: malformed ``data`` (no edges, ids out of range, non-finite features) or
                validation pairs (shape, ids, empty, a pair that is an edge of ``data``).
                ConfigError: one of the validation sets without the other; batch larger than the
                training set; ``auto`` without privacy or with neighbourhood subgraphs; a
                dependency group larger than the training set; an ``audit_hook`` that is not an
                AuditHook, canaries on a non-private fit, or a non-default hook with ``auto`` k /
                theta.
            BudgetExceededError: epsilon too small for the number of steps.
            SensitivityError: an empirical dependency above the bound M.
        """
        data = check_data(data, method=type(self).__name__)
        pairs, num_nodes = undirected_pairs(data.edge_index), int(data.num_nodes)
        val = self._validation_pairs(val_pos, val_neg, num_nodes, pairs)
        progress = progress or no_progress
        config, seed, timer = self._config, self.random_state, Timer()
        _check_audit_hook(audit_hook, config)
        ledger = Ledger(PrivacyUnit.EDGE, delta=config.delta, accounting=config.accounting)
        spent, info = None, {}
        if config.k == "auto" or config.theta == "auto":
            with timer.phase("selection"):
                config, spent, info = _select(config, pairs, num_nodes, ledger,
                                              torch.Generator().manual_seed(seed * 1000 + 7))
        rng = np.random.default_rng([seed, 1])
        with timer.phase("projection"):
            train = project_degree(pairs, num_nodes, theta=config.theta, rng=rng) if config.project else pairs
        return self._train(config, train, pairs, num_nodes, train_edges=int(pairs.shape[1]), ledger=ledger,
                           spent=spent, info=info, rng=rng, val=val, timer=timer, progress=progress,
                           audit_hook=audit_hook)

    def _train(self, config: DPLPConfig, pairs: np.ndarray, graph: np.ndarray, num_nodes: int, *,
               train_edges: int, ledger: Ledger, spent: dp_event.DpEvent | None, info: dict,
               rng: np.random.Generator, val: tuple[np.ndarray, np.ndarray] | None, timer: Timer,
               progress: Progress, audit_hook: AuditHook | None = None) -> DPLPLinkPredictor:
        """Build training examples on ``pairs``, train, keep the selected epoch; set the fitted state.

        Args:
            config: the resolved settings. pairs: ``[2, E']`` training graph of the examples
                (projected for DPLP). graph: ``[2, E'']`` graph validation and prediction subgraphs
                are extracted from. train_edges: recorded in ``info``. ledger / spent: budget
                already spent (selection, perturbation) that training composes with.
            rng: continues the projection's generator (negatives). val: validation pairs or None.
            audit_hook: an audit's hook (see :meth:`fit`; checked there), or None.
        """
        seed = self.random_state
        cap_theta = config.theta if config.project else num_nodes  # the negative cap needs the projection
        max_links = getattr(config, "max_train_links", None)  # SEAL's and LapGraph's: never a private fit
        if max_links is not None and config.private:
            raise ConfigError("max_train_links caps the training links of a model trained without DP; "
                              "DP-SGD's dependency bound needs every link: leave it None")
        if getattr(config, "negatives", "capped") == "uniform":
            links, labels = uniform_training_links(pairs, num_nodes, rng=rng, max_links=max_links)
        else:
            links, labels = training_links(pairs, num_nodes, lam=config.lam, theta=cap_theta, rng=rng,
                                           max_links=max_links)
        num_examples = links.shape[1]
        if config.batch_size > num_examples:
            raise ConfigError(f"batch_size={config.batch_size} exceeds the {num_examples} training "
                              "examples; lower the batch size")
        canaries = None if audit_hook is None else audit_hook.canaries
        extra = 0
        if config.private:
            bound = dependency_bound(config)
            k_group = _group_of(config)
            check_group_fits(config, k_group, num_examples)
            if canaries is not None:  # an audit's gradient canaries: extra examples after the N real ones
                extra = _attached_extras(canaries, k_group, config.max_grad_norm)
        per_epoch, steps = training_steps(config, num_examples + extra)
        gens = [torch.Generator().manual_seed(seed * 1000 + i) for i in range(3)]
        info.update({"train_edges": train_edges, "projected_edges": int(pairs.shape[1]),
                     "num_train_examples": num_examples, "steps": steps, "epochs": config.epochs})
        if config.private:
            sampler = WithoutReplacementSampler(num_examples + extra, config.batch_size, generator=gens[1])
            with timer.phase("calibration"):
                z = calibrate_training_noise(config, sampler, k_group, steps, spent=spent)
            engine_args = {"noise_multiplier": z, "max_grad_norm": config.max_grad_norm, "group_size": k_group,
                           "ledger": ledger, "generator": gens[2], "accounting": config.accounting,
                           "audit_hook": audit_hook, "num_real": num_examples}
            info.update(dependency_bound_M=bound, group_size=k_group, noise_multiplier=z,
                        noise_std=z * sampler.sensitivity(config.max_grad_norm, k_group))
        cap = label_cap(config)
        adj = to_csr(graph, num_nodes)
        with timer.phase("extraction"):
            train_set = extract_subgraphs(to_csr(pairs, num_nodes), links, labels,
                                          extractor=config.extractor, k=config.k, h=config.h,
                                          progress=phase_progress(progress, "extraction"))
            if config.private:
                info["empirical_max_lsn"] = check_dependency_bound(train_set, num_nodes, bound)
            val_set = None
            if val is not None:
                val_set = evaluation_subgraphs(adj, np.concatenate(val, axis=1),
                                               np.concatenate([np.ones(val[0].shape[1]), np.zeros(val[1].shape[1])]),
                                               extractor=config.extractor, k=config.k, h=config.h,
                                               progress=phase_progress(progress, "validation extraction"))
        info["max_subgraph_nodes"] = int(train_set.num_nodes_per_subgraph.max())
        if config.sort_k == "auto":  # SEAL's DGCNN: the percentile of the training subgraphs' sizes
            config = config.model_copy(update={"sort_k": sort_pool_size(train_set.num_nodes_per_subgraph,
                                                                        config.sort_percentile)})
            info["sort_k"] = config.sort_k
        torch.manual_seed(seed)
        model = _build_model(config)
        selector = _Selector(model, None if val_set is None else _ValidationAUC(model, val_set, config, cap))
        with timer.phase("training"):
            if config.private:
                _train_private(model, train_set, config, cap, sampler, engine_args, selector, steps, per_epoch,
                               progress)
            else:
                _train_nonprivate(model, train_set, config, cap, gens[1], selector, per_epoch, progress)
            selector.restore()
        model.eval()
        info["best_epoch"] = selector.best_epoch
        if selector.history:  # with validation pairs: every epoch's AUC, None where it diverged
            info["val_auc_by_epoch"] = [None if math.isnan(auc) else auc for auc in selector.history]
        if selector.diverged_epochs:
            info["diverged_epochs"] = selector.diverged_epochs
        spent_any = config.private or bool(ledger.phases)
        report = (ledger.report(target_epsilon=config.epsilon, notes=_notes(config, validated=val is not None))
                  if spent_any else None)
        self.model_, self.graph_, self.num_nodes_ = model, torch.from_numpy(np.ascontiguousarray(graph)), num_nodes
        self.k_, self.theta_ = config.k, config.theta
        self.best_epoch_, self.val_auc_ = selector.best_epoch, selector.best_auc
        self.info_, self.ledger_, self.timings_ = info, ledger, dict(timer.timings)
        self._fit_config, self._adj = config, adj
        return self._fitted(report)

    # -- predict ------------------------------------------------------------------------------------

    def predict_proba(self, pairs: Any, *, data: Data | None = None) -> torch.Tensor:
        """Link probabilities of node pairs of the fitted graph (or of the graph ``data``).

        Each pair's subgraph (path or h-hop, as fitted) is extracted from ``graph_`` (or from
        ``data``'s graph) without the pair's own edge, DRNL-labelled and scored by ``model_``. The
        subgraphs of the last pairs asked for are kept for the next call (and fit) with the same
        graph, pairs and k (:func:`~graphpriv.linkpred.evaluation_sets.evaluation_subgraphs`).

        Args:
            pairs: ``[2, P]`` integer node ids in ``[0, num_nodes_)`` (LongTensor or numpy), u != v.
            data: a graph on the fitted nodes (PyG ``Data``, ``edge_index [2, 2E]``, ``num_nodes``
                equal to ``num_nodes_``) to extract the subgraphs from instead of ``graph_``, e.g.
                the training graph without an audit's canary edges (so that no canary's score
                reads the other canaries' coins). ``None``: ``graph_``.

        Returns:
            ``[P]`` float32 tensor of sigmoid scores in [0, 1].

        Raises:
            NotFittedError: before ``fit``. DatasetError: a shape other than ``[2, P]``, a
                non-integer array, an id out of range or a pair (u, u); a malformed ``data`` or one
                whose ``num_nodes`` is not ``num_nodes_``.
        """
        self._check_fitted()
        pairs = check_node_pairs(pairs, self.num_nodes_, name="pairs", distinct=True)
        adj = self._adjacency() if data is None else self._adjacency_of(data)
        if pairs.shape[1] == 0:
            return torch.empty(0)
        config = self._fit_config
        subgraphs = evaluation_subgraphs(adj, pairs, np.zeros(pairs.shape[1]),
                                         extractor=config.extractor, k=config.k, h=config.h)
        return _scores(self.model_, subgraphs, config, label_cap(config))

    def score(self, pos: Any, neg: Any, *, data: Data | None = None) -> float:
        """ROC-AUC of :meth:`predict_proba` on positive pairs ``pos`` against negative pairs ``neg``.

        Args:
            pos, neg: ``[2, P]`` and ``[2, Q]`` node pairs (P, Q >= 1), scored in one call
                (``pos`` first) as the protocol does.
            data: the graph the subgraphs are extracted from (see :meth:`predict_proba`; ``None``:
                ``graph_``).

        Returns:
            The AUC in [0, 1].

        Raises:
            NotFittedError: before ``fit``. DatasetError: malformed or empty pairs, a pair (u, u);
                a malformed ``data`` or one on another number of nodes.
        """
        self._check_fitted()
        pos = check_node_pairs(pos, self.num_nodes_, name="pos", distinct=True)
        neg = check_node_pairs(neg, self.num_nodes_, name="neg", distinct=True)
        if not pos.shape[1] or not neg.shape[1]:
            raise DatasetError(f"score needs at least one positive and one negative pair (got {pos.shape[1]} and "
                               f"{neg.shape[1]})")
        scores = self.predict_proba(np.concatenate([pos, neg], axis=1), data=data)
        labels = np.concatenate([np.ones(pos.shape[1]), np.zeros(neg.shape[1])])
        return float(roc_auc_score(labels, scores.numpy()))

    def _adjacency(self):
        if self.__dict__.get("_adj") is None:
            self._adj = to_csr(self.graph_.numpy(), self.num_nodes_)
        return self._adj

    def _adjacency_of(self, data: Data):
        """CSR adjacency of a graph given to :meth:`predict_proba` (checked; same N as fitted)."""
        data = check_data(data, method=f"{type(self).__name__}.predict_proba")
        if int(data.num_nodes) != self.num_nodes_:
            raise DatasetError(f"data has {int(data.num_nodes)} nodes but this {type(self).__name__} was fitted on a "
                               f"graph of {self.num_nodes_}; predictions need a graph on the same nodes")
        return to_csr(undirected_pairs(data.edge_index), self.num_nodes_)

    # -- files --------------------------------------------------------------------------------------

    def _get_state(self) -> dict[str, Any]:
        return {"model": self.model_.state_dict(), "graph": self.graph_, "num_nodes": self.num_nodes_,
                "k": self.k_, "theta": self.theta_, "best_epoch": self.best_epoch_, "val_auc": self.val_auc_,
                "fit_config": json.dumps(self._fit_config.model_dump(mode="json")),
                "info": json.dumps(self.info_, default=_plain), "timings": dict(self.timings_)}

    def _set_state(self, state: dict[str, Any]) -> None:
        # the settings fit resolved and trained with (context: not hyperparameters a user passes; e.g.
        # LapGraph's SGNN ran with private=False, which LapGraphConfig refuses as a hyperparameter)
        config = self.config_cls.model_validate(json.loads(state["fit_config"]), context={"fit_config": True})
        with torch.random.fork_rng(devices=[]):  # the initial weights are overwritten: leave the global RNG be
            model = _build_model(config)
        model.load_state_dict(state["model"])
        model.eval()
        self.model_, self.graph_, self.num_nodes_ = model, state["graph"].long(), int(state["num_nodes"])
        self.k_, self.theta_ = state["k"], state["theta"]
        self.best_epoch_, self.val_auc_ = int(state["best_epoch"]), state["val_auc"]
        self.info_, self.ledger_, self.timings_ = json.loads(state["info"]), None, dict(state["timings"])
        self._fit_config, self._adj = config, None


class SEALLinkPredictor(DPLPLinkPredictor):
    """SEAL with its own DGCNN and settings (Zhang & Chen, "Link prediction based on graph neural
    networks", NeurIPS 2018; the DPLP paper's non-private baseline, Table II): h-hop enclosing
    subgraphs of the unprojected training graph, DRNL labels, DGCNN, no noise. Defaults:
    :class:`SEALDGCNNConfig`.

    No differential privacy: ``privacy_report_`` is ``None``. Everything else is
    :class:`DPLPLinkPredictor`'s (``fit``, ``predict_proba``, ``score``, the fitted attributes;
    ``info_["sort_k"]``: the SortPooling size ``fit`` chose). The saved file holds the training
    graph (``graph_``, needed to extract prediction subgraphs) and facts of it in ``info_``: keep it
    as private as the data (nothing in it is protected).
    """

    config_cls = SEALDGCNNConfig


class SEALGCNLinkPredictor(DPLPLinkPredictor):
    """The private models' subgraph GCN without noise on SEAL's 1-hop enclosing subgraphs
    (``seal-gcn``; what graphpriv called SEAL before it had SEAL's own DGCNN). Defaults:
    :class:`SEALConfig`. Not private; files as :class:`SEALLinkPredictor`'s."""

    config_cls = SEALConfig


def _check_audit_hook(audit_hook: AuditHook | None, config: DPLPConfig) -> None:
    """Refuse an audit hook ``fit`` cannot honour (see :meth:`DPLPLinkPredictor.fit`).

    Raises:
        ConfigError: not an AuditHook; canaries on a non-private fit (no DP-SGD population to join);
            canaries or a noise fault with ``auto`` k / theta (the private selection is not audited).
    """
    if audit_hook is None:
        return
    if not isinstance(audit_hook, AuditHook):
        raise ConfigError(f"audit_hook must be a graphpriv.privacy.hooks.AuditHook or None (got "
                          f"{type(audit_hook).__name__})")
    if audit_hook.canaries is not None and not config.private:
        raise ConfigError("gradient canaries ride along DP-SGD: a non-private fit (private=False) cannot carry them")
    if (config.k == "auto" or config.theta == "auto") and (audit_hook.canaries is not None
                                                            or audit_hook.noise_scale != 1):
        raise ConfigError("an audit needs fixed k and theta: the private k / theta selection (auto) takes no "
                          "canaries or noise fault")


def _attached_extras(canaries: Any, k_group: int, max_grad_norm: float) -> int:
    """``canaries.attach(group_size=K, max_grad_norm=C)``: the extra examples, checked (an int >= 0)."""
    extra = canaries.attach(group_size=k_group, max_grad_norm=max_grad_norm)
    if isinstance(extra, bool) or not isinstance(extra, (int, np.integer)) or extra < 0:
        raise ConfigError(f"gradient canaries must ask for a whole number >= 0 of extra examples (got {extra!r})")
    return int(extra)


def _validation_pairs(val_pos: Any, val_neg: Any, num_nodes: int,
                      graph: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Checked ``(val_pos, val_neg)``, or None when neither is given.

    Args:
        val_pos, val_neg: the validation pairs given to ``fit``. num_nodes: N of the training graph.
        graph: ``[2, E]`` the training graph's undirected edges (u < v): a validation pair may not
            be one of them (selection on held-out pairs is what the privacy report's note states;
            a training edge among them would steer the epoch choice by data the noise does not cover).

    Raises:
        ConfigError: one of the two without the other. DatasetError: malformed or empty pairs, a
            pair (u, u), or a pair that is an edge of ``graph`` (one line naming the argument).
    """
    if val_pos is None and val_neg is None:
        return None
    if val_pos is None or val_neg is None:
        raise ConfigError("pass both val_pos and val_neg (held-out edges and non-edges), or neither (the model is "
                          "then the last epoch's)")
    pos = check_node_pairs(val_pos, num_nodes, name="val_pos", distinct=True)
    neg = check_node_pairs(val_neg, num_nodes, name="val_neg", distinct=True)
    if not pos.shape[1] or not neg.shape[1]:
        raise DatasetError(f"val_pos and val_neg need at least one pair each (got {pos.shape[1]} and "
                           f"{neg.shape[1]}) for a validation AUC; pass None for both to keep the last epoch")
    if graph is not None and graph.size:
        edges = np.minimum(graph[0], graph[1]) * num_nodes + np.maximum(graph[0], graph[1])
        for name, arr in (("val_pos", pos), ("val_neg", neg)):
            inside = np.flatnonzero(np.isin(np.minimum(arr[0], arr[1]) * num_nodes + np.maximum(arr[0], arr[1]), edges))
            if inside.size:
                j = int(inside[0])
                raise DatasetError(f"{name} pair ({int(arr[0, j])}, {int(arr[1, j])}) at column {j} is an edge of the "
                                   f"training graph ({inside.size} of its {arr.shape[1]} pairs are); validation pairs "
                                   "must be held out: remove those edges from data before fit, or pass other pairs")
    return pos, neg


def _notes(config: DPLPConfig, *, validated: bool = True) -> list[str]:
    if not config.private:
        return [("the model is trained without noise on a graph released by the recorded phases: "
                 "post-processing of that release")]
    notes = ["sampler: fixed-size batches drawn uniformly without replacement, independently per step"]
    if config.accounting is Accounting.PAPER:
        notes.append("paper accounting: the DPLP paper's effective-rate rho with the WBK bound "
                     "(Theorem 2); not a proven bound for group changes")
    else:
        notes.append("rigorous accounting: multi-term hypergeometric RDP bound (Daigavane et al. 2021)")
    notes.append("validation-based epoch selection uses held-out edges outside the training graph" if validated
                 else "the model is the last epoch's (no validation pairs, no epoch selection)")
    return notes
