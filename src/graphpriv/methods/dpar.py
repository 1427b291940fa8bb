"""DPAR: node-level DP node classification with DP approximate personalized PageRank.

Method ids ``dpar-em0``, ``dpar-em1``, ``dpar-gm`` (node-level (eps, delta)-DP, add/remove one
node) and ``dpar-nodp`` (the same model without noise, clipping or node sampling). Source: Zhang,
Ma, Xu, Lou, "Towards differentially private graph neural networks via personalized PageRank"
(DPAR, WWW 2024), Algorithms 1-3; specs/dpar.md; docs/dpar.md.

Flow of a run: inductive 80/20 node split, every edge between the parts removed
(:func:`graphpriv.data.splits.node_split`); each training node kept with probability q'
(``node_rate``); M seeds uniform from the sample; their APPR vectors on the sample's induced graph
(:func:`graphpriv.propagation.appr.appr_ista`); DP-APPR rows (EM0, EM1 or GM,
:mod:`graphpriv.propagation.dp_appr`); Pi = those rows for the seeds, one-hot rows for the other
sampled nodes, optionally at most ``max_rows`` rows per node, then the column l1 clip to r;
DP-SGD over Pi's rows with per-row clipping and Poisson batches (the noise calibrated to the
number m of rows a node reaches, see :mod:`graphpriv.privacy.dpar_accounting`); inference on the
test-node graph with P propagation steps; metric: test accuracy (= micro-F1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from pydantic import Field
from torch_geometric.data import Data

from graphpriv.data.graph import to_csr
from graphpriv.data.splits import node_split
from graphpriv.data.validation import check_data, check_seed
from graphpriv.errors import DatasetError
from graphpriv.methods.base import MethodConfig, Progress, Result, Timer, no_progress
from graphpriv.nn.decoupled import DecoupledModel, feature_mlp, padded_rows, propagate
from graphpriv.privacy import dpar_accounting as acc
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.analysis.top_k import one_shot_top_k_epsilon
from graphpriv.privacy.calibration import quiet_absl
from graphpriv.privacy.ghost_clipping import decoupled_clipped_sum
from graphpriv.privacy.mechanisms import audit_test_noise_factor
from graphpriv.privacy.report import PhaseReport, PrivacyReport
from graphpriv.privacy.sampling import PoissonSampler
from graphpriv.privacy.units import PrivacyUnit
from graphpriv.propagation.appr import appr_ista
from graphpriv.propagation.dp_appr import (
    cap_rows_per_node,
    column_clip,
    dp_appr_em,
    dp_appr_gaussian,
    rows_per_node,
)

__all__ = ["DPARConfig", "DPARFit", "evaluate", "fit_epsilon", "run", "steps_and_rate", "train_dpar", "train_rows"]

Appr = Literal["em0", "em1", "gm", "exact"]
_METHOD_APPR = {"dpar-em0": "em0", "dpar-em1": "em1", "dpar-gm": "gm", "dpar-nodp": "exact"}


class DPARConfig(MethodConfig):
    """DPAR's hyperparameters (specs/dpar.md defaults; the authors' code for dropout and weight decay)."""

    epsilon: float = Field(8.0, gt=0, description="node-level epsilon of the whole run (after q' sampling)")
    delta: float = Field(1e-4, gt=0, lt=1, description="below 1 / N up to 10,000 nodes (the paper's 2e-3 on Cora-ML "
                         "is above 1 / N: its tables set it with allow_large_delta)")
    accounting: Literal["rigorous", "paper"] = "rigorous"
    private: bool = True
    node_rate: float = Field(0.09, gt=0, le=1, description="q': Poisson node sampling of the training nodes")
    seeds: int | None = Field(70, ge=1, description="M seeds with DP-APPR rows (None: every sampled node)")
    k: int = Field(2, ge=1, description="K entries kept per DP-APPR row")
    alpha: float = Field(0.25, gt=0, lt=1, description="PageRank teleport (ISTA and inference)")
    rho: float = Field(1e-4, ge=0, description="ISTA l1 weight")
    tol: float = Field(1e-4, gt=0, description="ISTA tolerance gamma")
    c1: float = Field(0.01, gt=0, description="GM: L2 clip of an APPR row")
    c2: float = Field(0.001, gt=0, description="EM: clip of each APPR entry")
    r: float = Field(1.0, gt=0, description="column l1 clip of Pi")
    max_rows: int | None = Field(None, ge=1, description="at most this many training rows per node (None: no cap)")
    appr_share: float = Field(0.5, gt=0, lt=1, description="share of the inner epsilon spent on DP-APPR")
    hidden: int = Field(32, ge=1)
    dropout: float = Field(0.1, ge=0, lt=1)
    weight_decay: float = Field(1e-4, ge=0)
    lr: float = Field(0.005, gt=0)
    epochs: int = Field(200, ge=1)
    batch_size: int = Field(60, ge=1, description="B: expected Poisson batch size")
    max_grad_norm: float = Field(1.0, gt=0, description="C: per-row gradient clip")
    prop_steps: int = Field(2, ge=0, description="P: propagation steps at inference")
    test_ratio: float = Field(0.2, gt=0, lt=1)


def run(config: DPARConfig, data: Data, *, seed: int, method: str = "dpar-gm",
        progress: Progress = no_progress) -> Result:
    """One DPAR run.

    Returns:
        :class:`Result` with ``accuracy`` (test nodes), ``epsilon_rigorous`` and ``epsilon_paper``
        (the same noise under both analyses), the privacy report (phases ``dp-appr`` and
        ``dp-sgd`` on the node sample, total after sampling; None for ``dpar-nodp``) and info on
        the sample (sizes, m, noise).

    Raises:
        DatasetError: a graph without features or labels. ValueError / BudgetExceededError: settings
            no noise can satisfy (e.g. delta / q' >= 1).
    """
    data = check_data(data, needs_features=True, needs_labels=True, method=method)
    seed = check_seed(seed)
    timer = Timer()
    rng = np.random.default_rng([seed, 97])
    x = torch.as_tensor(data.x, dtype=torch.float32)
    y = torch.as_tensor(data.y, dtype=torch.long)
    with timer.phase("split"):
        split = node_split(data, train_ratio=1 - config.test_ratio, seed=seed, inductive=True)
        train = split.train_idx[y.numpy()[split.train_idx] >= 0]  # unlabelled nodes (label -1) left out
    fit = train_dpar(config, x, y, train, split.train_edge_index, rng=rng, seed=seed, method=method,
                     num_classes=int(y.max()) + 1, timer=timer, progress=progress)
    with timer.phase("inference"):
        accuracy = evaluate(fit.model, x, y, split, config)
    return Result(method=method, dataset=str(getattr(data, "name", "graph")), seed=seed,
                  config=config.model_dump(mode="json"), metrics={"accuracy": accuracy, **fit.metrics},
                  privacy=fit.privacy, timings=timer.finish(), info=fit.info)


@dataclass
class DPARFit:
    """What :func:`train_dpar` released and accounted.

    Attributes:
        model: the trained f_theta (eval mode). privacy: the privacy report (None when not private).
        metrics: ``epsilon_rigorous``, ``epsilon_paper``, ``epsilon_appr``, ``epsilon_sgd`` (private
            runs). info: the sample's sizes, m, the noise. sample: the sampled training nodes
            (global ids). pi: ``[S, S]`` the training rows over the sample. budget, noise,
            appr_info, steps, rate, group: the accounting's inputs (budget and noise None when not
            private).
    """

    model: DecoupledModel
    privacy: PrivacyReport | None
    metrics: dict
    info: dict
    sample: np.ndarray
    pi: sp.csr_matrix
    budget: acc.DparPhaseBudget | None
    noise: acc.DparSgdNoise | None
    appr_info: dict
    steps: int
    rate: float
    group: int


def train_dpar(config: DPARConfig, x: torch.Tensor, y: torch.Tensor, train: np.ndarray, edge_index: np.ndarray, *,
               rng: np.random.Generator, seed: int, method: str = "dpar-gm", num_classes: int | None = None,
               timer: Timer | None = None, progress: Progress = no_progress) -> DPARFit:
    """DPAR's private part on a given set of training nodes: the q' node sample, the seeds,
    APPR, DP-APPR rows, Pi (row cap, column clip), DP-SGD with its accounting (what :func:`run`
    does between the split and the inference; the node-level audit calls it with canary nodes added).

    Args:
        x: ``[N, F]`` features and y: ``[N]`` labels of every node. train: the labelled training
            nodes (global ids). edge_index: ``[2, E]`` the training graph's edges (global ids; edges
            with an end outside the sample are dropped). rng: the sample, seeds and DP-APPR noise.
            seed: DP-SGD's. num_classes: C (default: max label + 1).

    Raises:
        DatasetError: the q' sample kept fewer than 2 nodes.
    """
    timer = timer or Timer()
    appr_kind = _METHOD_APPR.get(method, "gm")
    private = config.private and appr_kind != "exact"
    num_classes = int(y.max()) + 1 if num_classes is None else num_classes
    with timer.phase("split"):
        sample = train[rng.random(train.size) < config.node_rate] if config.node_rate < 1 else train
        if sample.size < 2:
            raise DatasetError(f"the q' = {config.node_rate} sample kept {sample.size} training nodes")
        local = np.full(int(x.shape[0]), -1)
        local[sample] = np.arange(sample.size)
        pairs = np.asarray(edge_index)
        inside = (local[pairs[0]] >= 0) & (local[pairs[1]] >= 0)
        adj = to_csr(local[pairs[:, inside]], sample.size)
        seeds = np.arange(sample.size) if config.seeds is None else np.sort(
            rng.choice(sample.size, min(config.seeds, sample.size), replace=False))
    budget = acc.inner_budget(config.epsilon, config.delta, node_rate=config.node_rate,
                              appr_share=config.appr_share, accounting=config.accounting) if private else None
    info: dict = {"train_nodes": int(train.size), "sampled_nodes": int(sample.size), "seeds": int(seeds.size)}
    with timer.phase("appr"):
        p, iterations = appr_ista(adj, seeds, alpha=config.alpha, rho=config.rho, tol=config.tol)
        info["ista_iterations"] = iterations
        rows, appr_info = _dp_rows(p, appr_kind if private else "exact", config, budget, rng)
        info.update(appr_info)
        pi = sp.identity(sample.size, format="lil")
        pi[seeds] = rows
        pi = sp.csr_matrix(pi)
        if config.max_rows is not None:
            pi = cap_rows_per_node(pi, config.max_rows)
        pi = column_clip(pi, config.r)
        group = rows_per_node(pi)
        info["rows_per_node"] = group
    steps, rate = steps_and_rate(sample.size, config.epochs, config.batch_size)
    ledger = None
    noise = None
    if private:
        noise = acc.sgd_noise(budget.sgd_epsilon, budget.sgd_delta, sample_rate=rate, steps=steps,
                              group_size=group, max_grad_norm=config.max_grad_norm, r=config.r,
                              accounting=config.accounting)
        ledger = Ledger(PrivacyUnit.NODE, delta=budget.sgd_delta, accounting=config.accounting)
        event = acc.sgd_event(noise.noise_multiplier, sample_rate=rate, group_size=group,
                              accounting=config.accounting)
        info.update(sgd_noise_multiplier=noise.noise_multiplier, sgd_noise_std=noise.noise_std)
    with timer.phase("training"):
        model = train_rows(x[sample], y[sample], pi, num_classes=num_classes, config=config, steps=steps, sample_rate=rate,
                           noise_std=None if noise is None else noise.noise_std, seed=seed,
                           on_step=(lambda: ledger.spend(event, phase="dp-sgd")) if ledger else None,
                           progress=progress)
    privacy, metrics = None, {}
    if private:
        with quiet_absl():
            privacy, metrics = _report(config, budget, appr_info, noise, ledger, rate=rate, steps=steps, group=group)
    return DPARFit(model=model, privacy=privacy, metrics=metrics, info=info, sample=sample, pi=pi, budget=budget,
                   noise=noise, appr_info=appr_info, steps=steps, rate=rate, group=group)


def fit_epsilon(config: DPARConfig, fit: DPARFit, delta: float, *, accounting: str = "rigorous") -> float:
    """Epsilon of a private :class:`DPARFit`'s noise at total ``delta`` under ``accounting``, split
    as the run splits its own delta (delta / q' inside the sample, half to each phase; EM rows at
    delta_appr / 2M each; the EM rows are pure K eps-DP, so any row delta is a valid choice). At
    ``config.delta`` it is the run's ``epsilon_rigorous`` / ``epsilon_paper``; the privacy audit
    asks for it at a smaller delta.

    Raises:
        ValueError: a non-private fit, or delta / q' >= 1.
    """
    if fit.noise is None or fit.budget is None:
        raise ValueError("a non-private DPAR fit has no epsilon")
    inner_delta = delta / config.node_rate
    if not 0 < inner_delta < 1:
        raise ValueError(f"need 0 < delta / q' < 1 (got {inner_delta:g})")
    budget = acc.DparPhaseBudget(fit.budget.appr_epsilon, inner_delta / 2, fit.budget.sgd_epsilon, inner_delta / 2)
    info = dict(fit.appr_info)
    if "em_round_epsilon" in info:
        info["em_row_delta"] = budget.appr_delta / (2 * int(info["num_rows"]))
    with quiet_absl():
        appr_eps = _appr_epsilon(config, info, budget, accounting)
        sgd_eps = acc.sgd_epsilon(fit.noise.noise_std, max_grad_norm=config.max_grad_norm, sample_rate=fit.rate,
                                  steps=fit.steps, group_size=fit.group, delta=budget.sgd_delta, r=config.r,
                                  accounting=accounting)
    return acc.outer_epsilon(appr_eps + sgd_eps, inner_delta, node_rate=config.node_rate, accounting=accounting)[0]


def steps_and_rate(num_rows: int, epochs: int, batch_size: int) -> tuple[int, float]:
    """(epochs x ceil(n / B), B / n): the DP-SGD schedule of DPAR and its baselines."""
    return epochs * math.ceil(num_rows / batch_size), min(1.0, batch_size / num_rows)


def _dp_rows(p: np.ndarray, kind: str, config: DPARConfig, budget, rng) -> tuple[sp.csr_matrix, dict]:
    """The seeds' rows of Pi: DP-APPR (EM0/EM1/GM) or the exact top-K APPR values (``exact``)."""
    k = min(config.k, p.shape[1])
    if kind == "exact":
        idx = np.argpartition(-p, k - 1, axis=1)[:, :k]
        rows = np.repeat(np.arange(p.shape[0]), k)
        return sp.csr_matrix((np.take_along_axis(p, idx, 1).ravel(), (rows, idx.ravel())), shape=p.shape), {}
    m = p.shape[0]
    base = {"num_rows": m, "k": k}
    if kind in ("em0", "em1"):
        values = kind == "em1"
        round_eps, row_delta = acc.em_row_epsilon(budget.appr_epsilon, budget.appr_delta, k=k, rows=m,
                                                  values=values, accounting=config.accounting)
        value_eps = one_shot_top_k_epsilon(round_eps, k, row_delta) if values else None
        out = dp_appr_em(p, k=k, epsilon_row=round_eps, c2=config.c2, rng=rng,
                         values="laplace" if values else "uniform", epsilon_values=value_eps)
        return out, {**base, "em_round_epsilon": round_eps, "em_row_delta": row_delta, "em_value_epsilon": value_eps}
    std = acc.gm_row_noise(budget.appr_epsilon, budget.appr_delta, c1=config.c1, rows=m,
                           accounting=config.accounting)
    return dp_appr_gaussian(p, k=k, noise_std=std, c1=config.c1, rng=rng), {**base, "gm_noise_std": std}


def train_rows(x: torch.Tensor, y: torch.Tensor, pi: sp.csr_matrix, *, num_classes: int, config, steps: int,
               sample_rate: float, noise_std: float | None, seed: int, on_step=None, progress: Progress = no_progress) -> DecoupledModel:
    """Train f_theta on the rows of Pi: row v predicts y[v] from sum_u Pi[v, u] f_theta(x[u]).

    Private (``noise_std`` given): DP-SGD, Poisson batches of rate ``sample_rate``, each row's
    gradient clipped to ``config.max_grad_norm``, N(0, noise_std^2) added to the sum, divided by
    the expected batch size, Adam; ``on_step`` is called after every noisy step (the ledger).
    Non-private: Adam on shuffled minibatches of ``config.batch_size`` rows, as many steps.

    Args:
        x: ``[R, F]`` features of the rows' nodes. y: ``[R]`` labels. pi: ``[R, R]`` CSR.
        num_classes: C, the width of f_theta's output.

    Returns:
        The trained model (eval mode).
    """
    torch.manual_seed(seed)
    index, weight = (torch.from_numpy(a) for a in padded_rows(pi))
    model = DecoupledModel(feature_mlp(x.shape[1], config.hidden, num_classes, config.dropout))
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    generator = torch.Generator().manual_seed(seed + 1)
    n = index.shape[0]

    def collate(rows: torch.Tensor):
        return (x[index[rows]], weight[rows]), y[rows]

    model.train()
    if noise_std is not None:
        noise_std = noise_std * audit_test_noise_factor()  # 1.0 except in the audit's broken-noise test
        sampler = PoissonSampler(n, sample_rate, generator=generator)
        for step in range(steps):
            rows = sampler.sample()
            if rows.numel():
                (inputs, w), target = collate(rows)  # ghost clipping: the engine's sum, batched
                summed, _ = decoupled_clipped_sum(model, inputs, w, target, config.max_grad_norm)
            else:
                summed = {name: torch.zeros_like(p) for name, p in model.named_parameters()}
            for name, param in model.named_parameters():
                noise = torch.randn(param.shape, generator=generator) * noise_std
                param.grad = (summed[name] + noise) / sampler.expected_batch_size
            optimizer.step()
            if on_step is not None:
                on_step()
            progress(step + 1, steps)
    else:
        step = 0
        while step < steps:
            for rows in torch.randperm(n, generator=generator).split(config.batch_size):
                optimizer.zero_grad()
                (inputs, w), target = collate(rows)
                F.cross_entropy(model(inputs, w), target).backward()
                optimizer.step()
                step += 1
                progress(step, steps)
                if step >= steps:
                    break
    return model.eval()


def evaluate(model: DecoupledModel, x: torch.Tensor, y: torch.Tensor, split, config) -> float:
    """Test accuracy over the labelled test nodes: f_theta on the test nodes' features,
    ``config.prop_steps`` propagation steps on the test-node graph (the inductive split's edges
    inside the test part)."""
    test = split.test_idx
    local = np.full(int(x.shape[0]), -1)
    local[test] = np.arange(test.size)
    pairs = local[split.test_edge_index]
    pairs = pairs[:, (pairs >= 0).all(0)]
    edge_index = torch.from_numpy(np.concatenate([pairs, pairs[::-1]], axis=1)).long()
    with torch.no_grad():
        h = model.mlp(x[test])
        if config.prop_steps:
            h = propagate(h, edge_index, test.size, alpha=config.alpha, steps=config.prop_steps)
    labelled = y[test] >= 0  # unlabelled test nodes (label -1) take part in propagation, not in the score
    return float((h.argmax(1) == y[test])[labelled].float().mean())


def _report(config: DPARConfig, budget, appr_info: dict, noise, ledger: Ledger, *, rate: float, steps: int,
            group: int) -> tuple[PrivacyReport, dict]:
    """The run's privacy report in its own mode, and the epsilon of the same noise in both modes."""
    parts = {}
    for mode in ("rigorous", "paper"):
        appr_eps = _appr_epsilon(config, appr_info, budget, mode)
        sgd_eps = acc.sgd_epsilon(noise.noise_std, max_grad_norm=config.max_grad_norm, sample_rate=rate,
                                  steps=steps, group_size=group, delta=budget.sgd_delta, r=config.r,
                                  accounting=mode)
        total, total_delta = acc.outer_epsilon(appr_eps + sgd_eps, budget.appr_delta + budget.sgd_delta,
                                               node_rate=config.node_rate, accounting=mode)
        parts[mode] = (appr_eps, sgd_eps, total, total_delta)
    mode = config.accounting
    appr_eps, _, total, total_delta = parts[mode]
    sgd_report = ledger.report()
    phases = [PhaseReport(name="dp-appr", epsilon=appr_eps, events=[_appr_event(config, appr_info)]),
              PhaseReport(name="dp-sgd", epsilon=sgd_report.epsilon, noise_multiplier=noise.noise_multiplier,
                          steps=steps, events=sgd_report.phases[0].events)]
    sampling = ("amplified by the sampling: ln(1 + q'(e^eps - 1))" if mode == "rigorous"
                else "multiplied by q' (the paper's linear scaling; not a guarantee)")
    sgd = ("noise std z 2C m, multi-term Binomial(m, q) bound" if mode == "rigorous" and group > 1 else
           "noise std z r C, ordinary Poisson accounting (the paper's Theorem 2)" if mode == "paper" else
           "noise std z C (one row per node)")
    notes = [(f"node-level add/remove; both phases run on the q' = {config.node_rate:g} node sample, composed "
              f"(basic composition: eps_appr + eps_sgd at delta_appr + delta_sgd), then {sampling}"),
             f"DP-SGD: one node reaches m = {group} training rows; {sgd}",
             (f"the same noise under both analyses: rigorous epsilon = {parts['rigorous'][2]:.4g}, "
              f"paper epsilon = {parts['paper'][2]:.4g}")]
    report = PrivacyReport(unit=PrivacyUnit.NODE.value, relation=PrivacyUnit.NODE.description, accounting=mode,
                           accountant="rdp + (eps, delta) composition", epsilon=total, delta=total_delta,
                           target_epsilon=config.epsilon, phases=phases, notes=notes)
    return report, {"epsilon_rigorous": parts["rigorous"][2], "epsilon_paper": parts["paper"][2],
                    "epsilon_appr": appr_eps, "epsilon_sgd": sgd_report.epsilon}


def _appr_epsilon(config: DPARConfig, info: dict, budget, mode: str) -> float:
    """Phase 1's epsilon (on the sample) for the rows actually drawn, under ``mode``."""
    rows = int(info["num_rows"])
    k = int(info["k"])
    if "em_round_epsilon" in info:
        values = info.get("em_value_epsilon") is not None
        if mode == "paper":
            per_row = one_shot_top_k_epsilon(info["em_round_epsilon"], k, info["em_row_delta"])
            return acc.paper_rows_epsilon(per_row * (2 if values else 1), rows, budget.appr_delta)
        return acc.em_rows_epsilon(info["em_round_epsilon"], k=k, rows=rows, row_delta=info["em_row_delta"],
                                   values=values, target_delta=budget.appr_delta)
    std = info["gm_noise_std"]
    if mode == "paper":
        row_delta = budget.appr_delta / (2 * rows)
        return acc.paper_rows_epsilon(math.sqrt(2 * math.log(1.25 / row_delta)) * config.c1 / std, rows,
                                      budget.appr_delta)
    return acc.gm_rows_epsilon(std, c1=config.c1, rows=rows, delta=budget.appr_delta)


def _appr_event(config: DPARConfig, info: dict) -> str:
    if "em_round_epsilon" in info:
        return (f"{info['num_rows']} one-shot top-{config.k} Gumbel rows, round epsilon "
                f"{info['em_round_epsilon']:.4g}" + (", Laplace values" if info.get("em_value_epsilon") else ""))
    return f"{info['num_rows']} Gaussian rows, std {info['gm_noise_std']:.4g} (L2 clip C1 = {config.c1:g})"
