"""DPAR: node-level DP node classification with DP approximate personalized PageRank.

:class:`DPARClassifier`, the estimator; ``appr`` picks the variant: ``em0``, ``em1``, ``gm`` (the
DP-APPR rows drawn by the exponential mechanism with 1/K values, with Laplace values, or by the
Gaussian mechanism: node-level (eps, delta)-DP, the neighbouring graphs differing by one node added
or removed with its features, label and edges) or ``exact`` (the exact top-K APPR rows, no noise,
no DP). Source: Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with
Node-Level Differential Privacy" (WWW 2024), Algorithms 1-3.

``fit`` on the training nodes of the graph it is given: each training node kept with probability
q' (``node_rate``); M seeds uniform from the sample; their APPR vectors on the sample's induced
graph (:func:`graphpriv.propagation.appr.appr_ista`); DP-APPR rows (EM0, EM1 or GM,
:mod:`graphpriv.propagation.dp_appr`); Pi = those rows for the seeds, one-hot rows for the other
sampled nodes, optionally at most ``max_rows`` rows per node, then the column l1 clip to r; DP-SGD
over Pi's rows with per-row clipping and Poisson batches (the noise calibrated to the number m of
rows a node reaches, see :mod:`graphpriv.privacy.dpar_accounting`). ``predict_proba`` on any graph
with the fitted feature width (inductive): f_theta on every node, then P propagation steps over
that graph's edges. The protocol that splits a graph, fits, and scores the test nodes (the method
ids ``dpar-em0``, ``dpar-em1``, ``dpar-gm``, ``dpar-nodp``) is :mod:`graphpriv.evaluation.node`.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
from pydantic import Field
from torch_geometric.data import Data

from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.errors import ConfigError, DatasetError, PrivacyError
from graphpriv.methods.base import MethodConfig, Progress, Timer, no_progress
from graphpriv.methods.node_classifier import NodeClassifier, steps_and_rate, train_rows
from graphpriv.nn.decoupled import DecoupledModel
from graphpriv.privacy import dpar_accounting as acc
from graphpriv.privacy.accountant import Ledger, check_delta
from graphpriv.privacy.analysis.top_k import one_shot_top_k_epsilon
from graphpriv.privacy.calibration import quiet_absl
from graphpriv.privacy.hooks import AuditHook, noise_scale_of
from graphpriv.privacy.report import PrivacyReport
from graphpriv.privacy.units import Accounting
from graphpriv.propagation.appr import appr_ista
from graphpriv.propagation.dp_appr import (
    cap_rows_per_node,
    column_clip,
    dp_appr_em,
    dp_appr_gaussian,
    rows_per_node,
)

__all__ = ["APPR_VARIANTS", "DPARClassifier", "DPARConfig", "DPARFit", "check_appr", "fit_epsilon", "train_dpar"]

#: DPAR's variants: the DP-APPR mechanism of a private fit (``em0``, ``em1``, ``gm``), or ``exact``.
APPR_VARIANTS: tuple[str, ...] = ("em0", "em1", "gm", "exact")


class DPARConfig(MethodConfig):
    """DPAR's hyperparameters: the paper's (the authors' code for dropout and weight decay), except
    three defaults that make it learn under rigorous accounting.

    The paper's q' = 0.09 node sampling, every sampled node in as many rows as reach it and half of
    the budget to DP-APPR cost, under a correct (rigorous) analysis, so much noise that DPAR falls
    below the majority class (test accuracy 0.149 at epsilon 8 on Cora-ML). The defaults are the
    one-row setting instead: ``node_rate=1.0`` (no sampling), ``max_rows=1`` (each node in its own
    row only, so one node reaches one row of DP-SGD) and ``appr_share=0.1``; five seeds beat dp-mlp
    at epsilon 4 and 8 on Cora-ML, CiteSeer and Cora (docs/dpar.md, ``graphpriv reproduce
    dpar-defaults``). The paper's setting is the ``paper`` preset (``node_rate=0.09``,
    ``max_rows=None``, ``appr_share=0.5``); the paper tables use it.

    The variant (``appr``) is not one of them: it is a :class:`DPARClassifier` argument, so the
    config, and the config hash of every stored run, is the same for the four variants."""

    epsilon: float = Field(8.0, gt=0, description="node-level epsilon of the whole run (after q' sampling)")
    delta: float = Field(1e-4, gt=0, lt=1, description="below 1 / N up to 10,000 nodes (the paper's 2e-3 on Cora-ML "
                         "is above 1 / N: its tables set it with allow_large_delta)")
    accounting: Accounting = Accounting.RIGOROUS
    private: bool = True
    node_rate: float = Field(1.0, gt=0, le=1, description="q': Poisson node sampling of the training nodes "
                             "(the paper: 0.09)")
    seeds: int | None = Field(70, ge=1, description="M seeds with DP-APPR rows (None: every sampled node)")
    k: int = Field(2, ge=1, description="K entries kept per DP-APPR row")
    alpha: float = Field(0.25, gt=0, lt=1, description="PageRank teleport (ISTA and inference)")
    rho: float = Field(1e-4, ge=0, description="ISTA l1 weight")
    tol: float = Field(1e-4, gt=0, description="ISTA tolerance gamma")
    c1: float = Field(0.01, gt=0, description="GM: L2 clip of an APPR row")
    c2: float = Field(0.001, gt=0, description="EM: clip of each APPR entry")
    r: float = Field(1.0, gt=0, description="column l1 clip of Pi")
    max_rows: int | None = Field(1, ge=1, description="at most this many training rows per node (None: no cap, "
                                 "the paper)")
    appr_share: float = Field(0.1, gt=0, lt=1, description="share of the inner epsilon spent on DP-APPR (the paper: "
                              "0.5)")
    hidden: int = Field(32, ge=1)
    dropout: float = Field(0.1, ge=0, lt=1)
    weight_decay: float = Field(1e-4, ge=0)
    lr: float = Field(0.005, gt=0)
    epochs: int = Field(200, ge=1)
    batch_size: int = Field(60, ge=1, description="B: expected Poisson batch size")
    max_grad_norm: float = Field(1.0, gt=0, description="C: per-row gradient clip")
    prop_steps: int = Field(2, ge=0, description="P: propagation steps at inference")
    test_ratio: float = Field(0.2, gt=0, lt=1)


def check_appr(appr: object, *, private: bool | None = None) -> str:
    """``appr`` when it names a DPAR variant that agrees with ``private``.

    Args:
        appr: ``"em0"``, ``"em1"``, ``"gm"`` (a DP-APPR mechanism) or ``"exact"`` (exact top-K
            APPR rows: no mechanism, no DP). private: the config's ``private`` (``None``: not
            checked).

    Returns:
        ``appr``.

    Raises:
        ConfigError: any other value (there is no fallback variant), or ``appr="exact"`` with
            ``private=True`` (exact rows are not private; pass ``private=False``).
    """
    if not isinstance(appr, str) or appr not in APPR_VARIANTS:
        raise ConfigError(f"appr must be one of {', '.join(APPR_VARIANTS)} (got {appr!r})")
    if appr == "exact" and private:
        raise ConfigError("appr='exact' trains on exact APPR rows, without differential privacy: pass "
                          "private=False with it, or a DP-APPR variant (appr='em0', 'em1' or 'gm')")
    return appr


class DPARClassifier(NodeClassifier):
    """DPAR (Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with
    Node-Level Differential Privacy", WWW 2024, Algorithms 1-3) as an estimator.

    Privacy: with ``private=True`` and ``appr`` in ``em0``, ``em1``, ``gm``, ``fit`` is node-level
    (eps, delta)-DP for the training graph it is given: neighbouring graphs differ by one node added
    or removed with its features, label and edges; the q' node sample, the DP-APPR rows and DP-SGD
    are composed, then amplified by the sample (``accounting="rigorous"``) or scaled as the paper
    does (``"paper"``: not a guarantee; ``epsilons_`` gives the same noise under both). The
    guarantee covers the model weights (``model_``); the q' sample and Pi are not kept (the
    amplification needs the sample secret). ``info_`` is not covered: it keeps exact facts of the
    private data, ``train_nodes``, ``sampled_nodes`` (the size of the secret q' sample),
    ``ista_iterations`` and ``rows_per_node`` (m, read off Pi), besides the noise scales. The
    saved file holds those facts in ``info_``: keep it as private as the data; the model weights
    are what the guarantee covers. ``private=False``: no noise, no clipping, no mechanism: the
    rows are the exact top-K APPR rows whatever ``appr`` says.

    Args:
        appr: the variant: ``"em0"`` (exponential mechanism, values 1/K), ``"em1"`` (exponential
            mechanism, Laplace values), ``"gm"`` (Gaussian mechanism; default) or ``"exact"``
            (exact top-K APPR rows, no DP: it needs ``private=False``; the ``dpar-nodp`` preset
            adds ``node_rate=1.0, seeds=None``). Not part of :class:`DPARConfig`, so the config of
            the four variants is the same; ``get_params`` includes it.
        random_state: seed of the q' sample, the seeds, the DP-APPR noise and DP-SGD (``None``,
            the default: a fresh secret seed, see :class:`~graphpriv.methods.estimator.Estimator`).
        **params: :class:`DPARConfig` fields (``epsilon``, ``delta``, ``node_rate``, ``k``, ...).

    Attributes:
        epsilons_: ``epsilon_rigorous``, ``epsilon_paper`` (the whole fit's noise under both
            analyses), ``epsilon_appr``, ``epsilon_sgd`` (the two phases on the sample, in the
            fit's mode); empty when not private. The others: see :class:`NodeClassifier`.

    Raises:
        ConfigError: an unknown hyperparameter, an invalid value, an unknown ``appr``, or
            ``appr="exact"`` with ``private=True``.
    """

    config_cls = DPARConfig
    variant_param = "appr"
    _fitted_private = ("_noise_record",)

    def __init__(self, appr: str = "gm", random_state: int | None = None, **params: Any) -> None:
        super().__init__(random_state=random_state, **params)
        self.appr = check_appr(appr, private=self._config.private)

    def _check_variant(self, value: Any, config: DPARConfig) -> str:
        return check_appr(value, private=config.private)

    def fit(self, data: Data, train_nodes: object = None, *, num_classes: int | None = None,
            progress: Progress | None = no_progress, audit_hook: AuditHook | None = None) -> DPARClassifier:
        """Train on ``train_nodes`` of ``data`` and account the privacy spent.

        Args:
            data: a ``Data`` with ``x [N, F]``, ``y [N]`` (class ids, -1: unlabelled) and
                ``edge_index [2, E]`` (``[2, 0]``: no edges); checked by
                :func:`~graphpriv.data.validation.check_data`. Only the training nodes and the
                edges among them are used.
            train_nodes: ``[T]`` labelled node ids (default: every labelled node).
            num_classes: C, the output width (default: the largest label of ``data.y`` + 1).
            progress: called after every training step (``None``: no progress).
            audit_hook: for a privacy audit only (:mod:`graphpriv.audit`): its ``noise_scale``
                multiplies the DP-SGD noise std while the ledger still spends the calibrated steps
                (a deliberate fault), and ``observed`` receives the fit's white-box facts: ``sample``
                (the q' sample's node ids), ``pi`` (its training rows, CSR), ``group`` (m) and
                ``noise_std``. None (default) for a real fit: the sample and Pi are never kept.

        Returns:
            ``self``, fitted.

        Raises:
            DatasetError: a graph without features, labels or ``edge_index``; bad training nodes;
                the q' sample kept fewer than 2 nodes. PrivacyError: delta / q' >= 1 (lower delta
                or raise node_rate). BudgetExceededError: settings no noise can satisfy.
        """
        data, x, y, train, classes = self._fit_inputs(data, train_nodes, num_classes, edges=True)
        timer = Timer()
        rng = np.random.default_rng([self.random_state, 97])
        pairs = undirected_pairs(data.edge_index) if data.edge_index.numel() else np.zeros((2, 0), dtype=np.int64)
        fit = train_dpar(self._config, x, y, train, pairs, rng=rng, seed=self.random_state, appr=self.appr,
                         num_classes=classes, timer=timer, progress=progress or no_progress,
                         noise_scale=noise_scale_of(audit_hook))
        if audit_hook is not None:
            audit_hook.observed.update(sample=fit.sample, pi=fit.pi, group=fit.group,
                                       noise_std=fit.noise.noise_std if fit.noise else 0.0)
        self.epsilons_ = dict(fit.metrics)
        self._noise_record = None if fit.noise is None else _noise_record(fit)
        self._keep(fit.model, x.shape[1], classes, fit.info, timer)
        return self._fitted(fit.privacy)

    def epsilon_at(self, delta: float, accounting: Accounting | str | None = None) -> float:
        """The epsilon of the fitted noise at total ``delta``, split as the fit splits its own
        (:func:`fit_epsilon`); at ``privacy_report_.delta`` it is the report's epsilon. Works on a
        loaded estimator too (the file keeps the accounting's inputs: budgets, noise, m, steps).

        Args:
            delta: in (0, 1), below ``node_rate``. accounting: ``"rigorous"`` or ``"paper"``
                (default: the fit's; ``epsilons_`` has both at the fit's delta).

        Raises:
            NotFittedError: before ``fit``. PrivacyError: a non-private fit, a bad delta, or
                delta / q' >= 1. ConfigError: an unknown accounting mode.
        """
        self._check_fitted()
        record = self.__dict__.get("_noise_record")
        if self.privacy_report_ is None or record is None:
            raise PrivacyError(f"this {type(self).__name__} is non-private: it has no epsilon at any delta")
        mode = self._config.accounting if accounting is None else accounting
        if mode not in ("rigorous", "paper"):
            raise ConfigError(f"accounting must be 'rigorous' or 'paper' (got {accounting!r})")
        return fit_epsilon(self._config, record, check_delta(delta), accounting=mode)

    def _get_state(self) -> dict[str, Any]:
        return {**super()._get_state(), "epsilons": self._dumps(self.epsilons_),
                "noise_record": self._dumps(self._noise_record)}

    def _set_state(self, state: dict[str, Any]) -> None:
        super()._set_state(state)
        self.epsilons_ = json.loads(state["epsilons"])
        self._noise_record = json.loads(state["noise_record"]) if "noise_record" in state else None


def _noise_record(fit: DPARFit) -> dict:
    """What :func:`fit_epsilon` reads of a private fit, as JSON values (no node ids, no Pi)."""
    return {"budget": dataclasses.asdict(fit.budget), "noise": dataclasses.asdict(fit.noise),
            "appr_info": fit.appr_info, "steps": fit.steps, "rate": fit.rate, "group": fit.group}


@dataclass
class DPARFit:
    """What :func:`train_dpar` released and accounted.

    Attributes:
        model: the trained f_theta (eval mode). privacy: the privacy report (None when not private),
            built by ``ledger``. metrics: ``epsilon_rigorous``, ``epsilon_paper``, ``epsilon_appr``,
            ``epsilon_sgd`` (private runs). info: the sample's sizes, m, the noise. sample: the
            sampled training nodes (global ids). pi: ``[S, S]`` the training rows over the sample.
            budget, noise, appr_info, steps, rate, group: the accounting's inputs (budget and noise
            None when not private). ledger: the fit's ledger (phases ``dp-appr``, ``dp-sgd``; None
            when not private).
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
    ledger: Ledger | None = None


def train_dpar(config: DPARConfig, x: torch.Tensor, y: torch.Tensor, train: np.ndarray, edge_index: np.ndarray, *,
               rng: np.random.Generator, seed: int, appr: str, num_classes: int | None = None,
               timer: Timer | None = None, progress: Progress = no_progress, noise_scale: float = 1.0) -> DPARFit:
    """DPAR's private part on a given set of training nodes: the q' node sample, the seeds,
    APPR, DP-APPR rows, Pi (row cap, column clip), DP-SGD with its accounting (Zhang et al., DPAR,
    WWW 2024, Algorithms 1-3). :meth:`DPARClassifier.fit` runs it on its training nodes (the
    node-level audit through that ``fit``, with canary nodes among them). Node-level (eps, delta)-DP (add/remove one
    node) when ``config.private`` and ``appr`` is a DP-APPR variant; no DP otherwise.

    Args:
        config: the hyperparameters. x: ``[N, F]`` features and y: ``[N]`` labels of every node.
            train: ``[T]`` the labelled training nodes (ids into x). edge_index: ``[2, E]`` the
            training graph's edges (either or both directions; edges with an end outside the sample
            are dropped). rng: the sample, seeds and DP-APPR noise. seed: DP-SGD's. appr: ``em0``,
            ``em1``, ``gm`` or ``exact`` (exact rows; also the rows of any non-private fit).
            num_classes: C (default: max label + 1). timer: phases ``split``, ``appr``,
            ``training`` are added to it. progress: called after every DP-SGD step.
            noise_scale: an audit's fault on the DP-SGD noise (:func:`train_rows`; 1.0 otherwise).

    Returns:
        The :class:`DPARFit`.

    Raises:
        ConfigError: ``appr`` is not a DPAR variant. DatasetError: the q' sample kept fewer than 2
            nodes. PrivacyError: delta / q' >= 1. BudgetExceededError: settings no noise can satisfy.
    """
    timer = timer or Timer()
    appr_kind = check_appr(appr)
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
    ledger, noise, sgd = None, None, {}
    if private:
        noise = acc.sgd_noise(budget.sgd_epsilon, budget.sgd_delta, sample_rate=rate, steps=steps,
                              group_size=group, max_grad_norm=config.max_grad_norm, r=config.r,
                              accounting=config.accounting)
        ledger = acc.dpar_ledger(config.delta, node_rate=config.node_rate, accounting=config.accounting)
        event, num_rows, label = acc.appr_event(appr_info, c1=config.c1)
        ledger.spend(event, phase="dp-appr", count=num_rows, label=label)
        sgd = {"noise_multiplier": noise.noise_multiplier, "sensitivity": noise.sensitivity,
               "group_size": acc.sgd_group(group, config.accounting), "ledger": ledger,
               "accounting": config.accounting}
        info.update(sgd_noise_multiplier=noise.noise_multiplier, sgd_noise_std=noise.noise_std)
    with timer.phase("training"):  # DP-SGD spends each step on the ledger (phase dp-sgd)
        model = train_rows(x[sample], y[sample], pi, num_classes=num_classes, config=config, steps=steps,
                           sample_rate=rate, seed=seed, progress=progress, noise_scale=noise_scale, **sgd)
    privacy, metrics = None, {}
    fit = DPARFit(model=model, privacy=None, metrics={}, info=info, sample=sample, pi=pi, budget=budget, noise=noise,
                  appr_info=appr_info, steps=steps, rate=rate, group=group, ledger=ledger)
    if private:
        with quiet_absl():
            privacy, metrics = _report(config, _noise_record(fit), ledger)
    return dataclasses.replace(fit, privacy=privacy, metrics=metrics)


def fit_epsilon(config: DPARConfig, record: dict, delta: float, *,
                accounting: Accounting = Accounting.RIGOROUS) -> float:
    """Epsilon of a private fit's noise at total ``delta`` under ``accounting``: the fit's ledger
    rebuilt from its record (:func:`graphpriv.privacy.dpar_accounting.spent_ledger`), which splits
    delta as the run does (delta / q' inside the sample, half to each phase; EM rows at
    delta_appr / 2M each; the EM rows are pure K eps-DP, so any row delta is a valid choice). At
    ``config.delta`` it is the run's ``epsilon_rigorous`` / ``epsilon_paper``; the privacy audit
    asks for it at a smaller delta.

    Args:
        config: the fit's hyperparameters. record: the fit's accounting inputs, as
            :func:`_noise_record` of a private :class:`DPARFit` writes them (JSON values: the phase
            budgets, the DP-SGD noise, the DP-APPR facts, steps, rate and m). delta: in (0, 1).
        accounting: ``rigorous`` or ``paper``.

    Raises:
        PrivacyError: delta / q' >= 1.
    """
    inner_delta = delta / config.node_rate
    if not 0 < inner_delta < 1:
        raise PrivacyError(f"need 0 < delta / q' < 1 (got delta / node_rate = {delta:g} / {config.node_rate:g} = "
                           f"{inner_delta:g}); ask for a delta below node_rate")
    with quiet_absl():
        return _spent(config, record, accounting).epsilon(delta)


def _spent(config: DPARConfig, record: dict, accounting: Accounting) -> Ledger:
    """The fit's ledger under ``accounting``, rebuilt from its record at the run's delta."""
    return acc.spent_ledger(record, delta=config.delta, node_rate=config.node_rate, c1=config.c1,
                            max_grad_norm=config.max_grad_norm, r=config.r, accounting=accounting)


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


def _report(config: DPARConfig, record: dict, ledger: Ledger) -> tuple[PrivacyReport, dict]:
    """The run's privacy report, built by its ledger, and the epsilon of the same noise in both modes."""
    mode = Accounting(config.accounting)
    other = Accounting.PAPER if mode is Accounting.RIGOROUS else Accounting.RIGOROUS
    epsilon = {mode: ledger.epsilon(), other: _spent(config, record, other).epsilon()}
    group = int(record["group"])
    sampling = ("amplified by the sampling: ln(1 + q'(e^eps - 1))" if mode is Accounting.RIGOROUS
                else "multiplied by q' (the paper's linear scaling; not a guarantee)")
    sgd = ("noise std z 2C m, multi-term Binomial(m, q) bound" if mode is Accounting.RIGOROUS and group > 1 else
           "noise std z r C, ordinary Poisson accounting (the paper's Theorem 2)" if mode is Accounting.PAPER else
           "noise std z C (one row per node)")
    notes = [(f"node-level add/remove; both phases run on the q' = {config.node_rate:g} node sample, composed "
              f"(basic composition: eps_appr + eps_sgd at delta_appr + delta_sgd), then {sampling}"),
             f"DP-SGD: one node reaches m = {group} training rows; {sgd}",
             (f"the same noise under both analyses: rigorous epsilon = {epsilon[Accounting.RIGOROUS]:.4g}, "
              f"paper epsilon = {epsilon[Accounting.PAPER]:.4g}")]
    report = ledger.report(target_epsilon=config.epsilon, notes=notes)
    phases = {phase.name: phase.epsilon for phase in report.phases}
    return report, {"epsilon_rigorous": epsilon[Accounting.RIGOROUS], "epsilon_paper": epsilon[Accounting.PAPER],
                    "epsilon_appr": phases["dp-appr"], "epsilon_sgd": phases["dp-sgd"]}
