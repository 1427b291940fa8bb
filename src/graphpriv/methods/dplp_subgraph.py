"""DPLP-subgraph: edge-level DP link prediction with subgraph GNNs, and the SEAL baseline.

Source: Ran, Ye, Hu, Huang, Xu, Fu, "Differentially private graph neural networks for link
prediction" (papers/000), Algorithms 1-2, Lemma 2, Theorems 1-2; specs/dplp-subgraph.md.
Method ids: ``dplp-ps`` (path subgraphs), ``dplp-ns`` (neighbourhood subgraphs), ``seal``
(non-private, neighbourhood subgraphs of the unprojected training graph).

Privacy: edge-level (add or remove one edge of the training graph). The released artefact is the
trained model. One edge change alters at most M training subgraphs (+1: its own example), so each
DP-SGD step is analysed with the hypergeometric multi-term bound (``rigorous``) or the paper's
effective-rate bound (``paper``). Held-out validation/test edges are evaluation data outside the
training graph; selecting the epoch by validation AUC follows the paper's protocol.
"""

from __future__ import annotations

import copy
import math
from typing import Annotated, Literal

import numpy as np
import torch
from dp_accounting import dp_event
from pydantic import Field
from sklearn.metrics import roc_auc_score
from torch_geometric.data import Data

from graphpriv.data.graph import to_csr
from graphpriv.data.splits import LinkSplit, link_split
from graphpriv.data.validation import check_data, check_seed
from graphpriv.errors import ConfigError
from graphpriv.linkpred.dependency import check_dependency_bound
from graphpriv.linkpred.drnl import max_drnl_label
from graphpriv.linkpred.examples import training_links
from graphpriv.linkpred.projection import project_degree
from graphpriv.linkpred.subgraphs import (
    Extractor,
    SubgraphSet,
    collate_dense,
    extract_subgraphs,
)
from graphpriv.methods.base import MethodConfig, Progress, Result, Timer, no_progress
from graphpriv.methods.dplp_selection import select_k_theta
from graphpriv.nn.subgraph_gnn import Backbone, SubgraphGNN, bce_loss, predict
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.calibration import calibrate_noise_multiplier
from graphpriv.privacy.engine import DPSGD
from graphpriv.privacy.sampling import WithoutReplacementSampler
from graphpriv.privacy.sensitivity import (
    group_size,
    neighbourhood_bound,
    path_bound,
    path_bound_paper,
)
from graphpriv.privacy.units import Accounting, PrivacyUnit


class DPLPConfig(MethodConfig):
    """Hyperparameters of DPLP-PS / DPLP-NS / SEAL (defaults: the paper's, Sec. VII-A)."""

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
    val_ratio: float = Field(0.05, ge=0, lt=1)
    test_ratio: float = Field(0.10, gt=0, lt=1)
    eval_batch_size: int = Field(256, ge=1)
    buckets: int = Field(4, ge=1, description="size buckets per DP-SGD batch (speed only)")


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


def _auc(model: SubgraphGNN, subgraphs: SubgraphSet, config: DPLPConfig, cap: int) -> float:
    chunks = np.array_split(np.arange(len(subgraphs)), max(1, math.ceil(len(subgraphs) / config.eval_batch_size)))
    scores = predict(model, (collate_dense(subgraphs, c, max_label=cap)[0] for c in chunks))
    return float(roc_auc_score(subgraphs.labels, scores.numpy()))


def _eval_sets(split: LinkSplit, config: DPLPConfig, graph_pairs: np.ndarray) -> dict[str, SubgraphSet]:
    adj = to_csr(graph_pairs, split.num_nodes)
    out = {}
    for name, pos, neg in (("val", split.val_pos, split.val_neg), ("test", split.test_pos, split.test_neg)):
        links = np.concatenate([pos, neg], axis=1)
        labels = np.concatenate([np.ones(pos.shape[1]), np.zeros(neg.shape[1])])
        out[name] = extract_subgraphs(adj, links, labels, extractor=config.extractor, k=config.k, h=config.h)
    return out


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
    """Keeps the parameters of the epoch with the best validation AUC."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model, self.best_auc, self.best_epoch = model, -1.0, 0
        self.state = copy.deepcopy(model.state_dict())

    def update(self, epoch: int, val_auc: float) -> None:
        if val_auc > self.best_auc:
            self.best_auc, self.best_epoch = val_auc, epoch
            self.state = copy.deepcopy(self.model.state_dict())


def _train_private(model, train_set, config, cap, sampler, engine_args, val_set, steps, per_epoch,
                   progress: Progress) -> _Selector:
    engine = DPSGD(model, make_optimizer(model, config), sampler, loss_fn=bce_loss,
                   collate=lambda idx: collate_dense(train_set, idx, max_label=cap),
                   sizes=torch.from_numpy(train_set.num_nodes_per_subgraph), buckets=config.buckets,
                   **engine_args)
    selector = _Selector(model)
    for step in range(1, steps + 1):
        model.train()
        loss = engine.step()
        if step % per_epoch == 0 or step == steps:
            epoch = math.ceil(step / per_epoch)
            selector.update(epoch, _auc(model, val_set, config, cap))
            progress(step, steps, loss=loss, val_auc=selector.best_auc)
    return selector


def _train_nonprivate(model, train_set, config, cap, generator, val_set, per_epoch,
                      progress: Progress) -> _Selector:
    optimizer = make_optimizer(model, config)
    selector = _Selector(model)
    steps, done = per_epoch * config.epochs, 0
    for epoch in range(1, config.epochs + 1):
        order = torch.randperm(len(train_set), generator=generator)
        model.train()
        for batch in order.split(config.batch_size):
            inputs, y = collate_dense(train_set, batch, max_label=cap)
            optimizer.zero_grad()
            loss = bce_loss(model(*inputs), y)
            loss.backward()
            optimizer.step()
            done += 1
        selector.update(epoch, _auc(model, val_set, config, cap))
        progress(done, steps, loss=float(loss.detach()), val_auc=selector.best_auc)
    return selector


def _training_graph(config: DPLPConfig, split: LinkSplit, rng: np.random.Generator) -> np.ndarray:
    if not config.project:
        return split.train_edge_index
    return project_degree(split.train_edge_index, split.num_nodes, theta=config.theta, rng=rng)


def _select(config: DPLPConfig, split: LinkSplit, ledger: Ledger, generator: torch.Generator):
    """Resolve ``auto`` k / theta privately; returns (resolved config, selection event, info)."""
    if not config.private or config.extractor is not Extractor.PATH:
        raise ConfigError("k=auto / theta=auto is private selection for path subgraphs (dplp-ps) only")
    frac = config.selection_fraction
    selection = select_k_theta(
        split.train_edge_index, split.num_nodes,
        k_candidates=config.k_candidates if config.k == "auto" else (config.k,),
        theta_candidates=config.theta_candidates if config.theta == "auto" else (config.theta,),
        epsilon_selection=frac * config.epsilon, epsilon_train=(1 - frac) * config.epsilon,
        delta=config.delta, lam=config.lam, batch_size=config.batch_size, epochs=config.epochs,
        generator=generator)
    ledger.spend(selection.event, phase="selection", noise_multiplier=selection.noise_multiplier)
    info = {"selected_k": selection.k, "selected_theta": selection.theta,
            "selection_noisy_num_edges": selection.noisy_num_edges}
    return config.model_copy(update={"k": selection.k, "theta": selection.theta}), selection.event, info


def run(config: DPLPConfig, data: Data, *, seed: int, method: str = "dplp-ps",
        progress: Progress = no_progress) -> Result:
    """Train a subgraph GNN link predictor (privately when ``config.private``) and test it.

    Args:
        config: Hyperparameters (``k``/``theta`` may be ``"auto"``: private selection with
            ``selection_fraction`` of epsilon). data: Cleaned graph. seed: Seeds the split (shared
            by all methods for a seed), projection, negatives, initialisation, batches and noise.
        method: Method id recorded in the result. progress: Training progress callback.

    Returns:
        :class:`Result` with ``test_auc``, ``val_auc``, the privacy report (private runs: phases
        ``selection`` when used, and ``training``) and info (M, group size, empirical max |LSN|,
        noise multiplier, sizes).

    Raises:
        ConfigError: batch larger than the training set, auto without privacy.
        BudgetExceededError: epsilon too small for the number of steps.
        SensitivityError: empirical dependency above the bound.
    """
    data = check_data(data, method=method)
    seed = check_seed(seed)
    timer = Timer()
    with timer.phase("split"):
        split = link_split(data, val_ratio=config.val_ratio, test_ratio=config.test_ratio, seed=seed)
    ledger = Ledger(PrivacyUnit.EDGE, delta=config.delta, accounting=config.accounting)
    spent, info = None, {}
    if config.k == "auto" or config.theta == "auto":
        with timer.phase("selection"):
            config, spent, info = _select(config, split, ledger, torch.Generator().manual_seed(seed * 1000 + 7))
    rng = np.random.default_rng([seed, 1])
    with timer.phase("projection"):
        pairs = _training_graph(config, split, rng)
    return fit_and_evaluate(config, split, pairs, split.train_edge_index, seed=seed, method=method,
                            ledger=ledger, spent=spent, info=info, timer=timer, progress=progress,
                            rng=rng, dataset=str(data.name))


def fit_and_evaluate(config: DPLPConfig, split: LinkSplit, pairs: np.ndarray, eval_pairs: np.ndarray, *,
                     seed: int, method: str, ledger: Ledger, spent: dp_event.DpEvent | None, info: dict,
                     timer: Timer, progress: Progress, rng: np.random.Generator, dataset: str) -> Result:
    """Build training examples on ``pairs``, train, select the epoch on validation, test.

    Args:
        pairs: Training graph ``[2, E]`` (projected for DPLP). eval_pairs: Graph the val/test
            subgraphs are extracted from (the training graph, or a released perturbed graph).
        ledger / spent: budget already spent (selection, perturbation) that training composes with.
    """
    cap_theta = config.theta if config.project else split.num_nodes  # the negative cap needs the projection
    links, labels = training_links(pairs, split.num_nodes, lam=config.lam, theta=cap_theta, rng=rng)
    num_examples = links.shape[1]
    if config.batch_size > num_examples:
        raise ConfigError(f"batch_size={config.batch_size} exceeds the {num_examples} training "
                          "examples; lower the batch size")
    per_epoch, steps = training_steps(config, num_examples)
    gens = [torch.Generator().manual_seed(seed * 1000 + i) for i in range(3)]
    info.update({"train_edges": int(split.train_edge_index.shape[1]), "projected_edges": int(pairs.shape[1]),
                 "num_train_examples": num_examples, "steps": steps, "epochs": config.epochs})
    if config.private:
        bound = dependency_bound(config)
        k_group = _group_of(config)
        check_group_fits(config, k_group, num_examples)
        sampler = WithoutReplacementSampler(num_examples, config.batch_size, generator=gens[1])
        with timer.phase("calibration"):
            z = calibrate_training_noise(config, sampler, k_group, steps, spent=spent)
        engine_args = {"noise_multiplier": z, "max_grad_norm": config.max_grad_norm, "group_size": k_group,
                       "ledger": ledger, "generator": gens[2], "accounting": config.accounting}
        info.update(dependency_bound_M=bound, group_size=k_group, noise_multiplier=z,
                    noise_std=z * sampler.sensitivity(config.max_grad_norm, k_group))
    cap = label_cap(config)
    with timer.phase("extraction"):
        train_set = extract_subgraphs(to_csr(pairs, split.num_nodes), links, labels,
                                      extractor=config.extractor, k=config.k, h=config.h)
        if config.private:
            info["empirical_max_lsn"] = check_dependency_bound(train_set, split.num_nodes, bound)
        eval_sets = _eval_sets(split, config, eval_pairs)
    info["max_subgraph_nodes"] = int(train_set.num_nodes_per_subgraph.max())
    torch.manual_seed(seed)
    model = SubgraphGNN(cap + 1, backbone=config.backbone, hidden=config.hidden, dropout=config.dropout,
                        num_layers=config.k if config.extractor is Extractor.PATH else config.h,
                        sort_k=config.sort_k)
    with timer.phase("training"):
        if config.private:
            selector = _train_private(model, train_set, config, cap, sampler, engine_args,
                                      eval_sets["val"], steps, per_epoch, progress)
        else:
            selector = _train_nonprivate(model, train_set, config, cap, gens[1], eval_sets["val"],
                                         per_epoch, progress)
    with timer.phase("evaluation"):
        model.load_state_dict(selector.state)
        test_auc = _auc(model, eval_sets["test"], config, cap)
    info["best_epoch"] = selector.best_epoch
    spent_any = config.private or bool(ledger.phases)
    report = ledger.report(target_epsilon=config.epsilon, notes=_notes(config)) if spent_any else None
    return Result(method=method, dataset=dataset, seed=seed, config=config.model_dump(mode="json"),
                  metrics={"test_auc": test_auc, "val_auc": selector.best_auc}, privacy=report,
                  timings=timer.finish(), info=info)


def _notes(config: DPLPConfig) -> list[str]:
    if not config.private:
        return [("the model is trained without noise on a graph released by the recorded phases: "
                 "post-processing of that release")]
    notes = ["sampler: fixed-size batches drawn uniformly without replacement, independently per step"]
    if config.accounting is Accounting.PAPER:
        notes.append("paper accounting: the DPLP paper's effective-rate rho with the WBK bound "
                     "(Theorem 2); not a proven bound for group changes")
    else:
        notes.append("rigorous accounting: multi-term hypergeometric RDP bound (Daigavane et al. 2021)")
    notes.append("validation-based epoch selection uses held-out edges outside the training graph")
    return notes
