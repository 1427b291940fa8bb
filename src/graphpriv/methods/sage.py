"""SAGE-NDP, node-level DP-SGD on a one-hop GNN with a degree bound: :class:`SAGEClassifier`
(method id ``sage-ndp``; with ``max_degree=0``, the feature-only baseline on the same split:
``dp-mlp-transductive``, and ``mlp-transductive`` without noise).

Source: Daigavane, Madan, Sinha, Thakurta, Aggarwal, Jain, "Node-Level Differentially Private Graph
Neural Networks" (2021), Sec. 4 (a one-layer GNN, the degree bounded by sampling, DP-SGD where one
node reaches its own example and its neighbours', accounted by a multi-term amplification bound);
the baseline GAP compares with as SAGE-NDP (Sajadmanesh et al., USENIX Security 2023, Sec. 6).

The model: the graph cut to degree at most D (:mod:`graphpriv.propagation.degree_bound`); training
node v's example is ``sum_u Pi[v, u] f_theta(x_u)`` over v and its kept neighbours, Pi the
row-normalised ``A_D + I`` (a mean over the closed neighbourhood), f_theta DPAR's 2-layer MLP
(:func:`graphpriv.nn.decoupled.feature_mlp`): one hop, the MLP before the aggregation (Daigavane et
al. aggregate the features first; both are one-hop models whose example reads at most D + 1
nodes). Training: :func:`graphpriv.methods.node_classifier.train_rows` (Poisson DP-SGD, each row's
gradient clipped to C by ghost clipping). The protocol is the transductive one
(:mod:`graphpriv.evaluation.transductive`), the split GAP and ProGAP are measured on.

Privacy (node level, over graphs whose degrees are at most D: the relation of GAP-NDP,
docs/privacy.md; the cut is the identity on them): removing node v removes its own example (when
v trains) and changes the examples of its at most D neighbours, each moving the clipped sum by at
most 2C: K = D + 1 examples per node, each step the
:class:`~graphpriv.privacy.events.BinomialGroupGaussianDpEvent` (multi-term bound for
Binomial(K, q) changed examples, noise std 2 C K), composed by the RDP accountant. With D = 0 no
edge is read: one example per node, ordinary Poisson DP-SGD (noise std C), and the relation
holds for every graph. The training-node count (q) is treated as public, as for dp-mlp.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
from dp_accounting import dp_event
from pydantic import Field, model_validator
from torch_geometric.data import Data

from graphpriv.methods.base import Progress, Timer, no_progress, phase_progress
from graphpriv.methods.node_classifier import steps_and_rate, train_rows
from graphpriv.methods.node_level_aggregation import PUBLIC_COUNTS_NOTE, above_bound_notes, bounded_edges
from graphpriv.methods.transductive_classifier import TransductiveClassifier, TransductiveConfig
from graphpriv.nn.decoupled import DecoupledModel, feature_mlp, padded_rows
from graphpriv.privacy.accountant import Ledger, check_delta
from graphpriv.privacy.calibration import calibrate_noise_multiplier, quiet_absl
from graphpriv.privacy.hooks import AuditHook, noise_scale_of
from graphpriv.privacy.sampling import PoissonSampler
from graphpriv.privacy.units import PrivacyUnit

__all__ = ["SAGEClassifier", "SAGEConfig", "closed_neighbourhood_rows"]


class SAGEConfig(TransductiveConfig):
    """SAGE-NDP's hyperparameters: the degree bound (GAP's SAGE-NDP baseline and Daigavane et al.
    bound it to a small D), DPAR's MLP and DP-SGD settings, expected batches of 256."""

    epsilon: float = Field(8.0, gt=0, description="node-level epsilon")
    delta: float = Field(1e-5, gt=0, lt=1, description="below 1 / N up to 100,000 nodes")
    private: bool = True
    max_degree: int = Field(10, ge=0, description="D; 0: no edge, the feature-only baseline")
    hidden: int = Field(32, ge=1)
    dropout: float = Field(0.0, ge=0, lt=1)
    lr: float = Field(0.01, gt=0)
    weight_decay: float = Field(0.0, ge=0)
    epochs: int = Field(100, ge=1)
    batch_size: int = Field(256, ge=1)
    max_grad_norm: float = Field(1.0, gt=0)

    @model_validator(mode="after")
    def _best_val_without_privacy(self) -> SAGEConfig:
        if self.private and self.model_selection != "last":
            raise ValueError("model_selection='best_val' reads the validation nodes' labels at every epoch, which "
                             "node-level DP protects and no step of the budget pays for: keep model_selection='last' "
                             "for the private fit, or set private=false")
        return self


def closed_neighbourhood_rows(edge_index: torch.Tensor, num_nodes: int) -> sp.csr_matrix:
    """Row-normalised ``A + I``: ``[N, N]`` CSR whose row v spreads 1 evenly over v and its neighbours.

    Args:
        edge_index: ``[2, M]`` long, both directions of every edge (duplicates count once).
        num_nodes: N.
    """
    rows, cols = edge_index.numpy()
    a = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(num_nodes, num_nodes))
    a.data[:] = 1.0
    a = (a + sp.identity(num_nodes, format="csr")).tocsr()
    a.data[:] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / np.asarray(a.sum(1)).ravel()) @ a)


def _row_accuracy(x: torch.Tensor, rows: sp.csr_matrix, y: torch.Tensor) -> Callable[[DecoupledModel], float]:
    """The accuracy of a model on ``rows`` (``[V, N]`` CSR of Pi) against ``y [V]``, as a score."""
    index, weight = (torch.from_numpy(a) for a in padded_rows(rows))
    return lambda model: float((model(x[index], weight).argmax(1) == y).float().mean())


class SAGEClassifier(TransductiveClassifier):
    """SAGE-NDP (Daigavane et al., 2021) as an estimator; ``max_degree=0``: the feature-only MLP.

    Privacy: ``private=True``: ``fit`` is node-level (eps, delta)-DP (add/remove one node with its
    features, label and edges) over graphs whose degrees are at most D (every graph when D = 0;
    module docstring); the guarantee covers ``model_`` only. A prediction reads the node's
    neighbours' raw features and degrees without noise, so predictions are covered only when
    D = 0 (each then reads the node's own features alone: joint DP). ``private=False``: the same
    model without noise. The saved file holds the fitted graph's features and cut edges (what
    prediction on it reads): keep it as private as the graph.

    Args:
        random_state: seed of the cut, the initialisation, the batches and the noise.
        **params: :class:`SAGEConfig` fields.

    Attributes:
        model_: the trained :class:`~graphpriv.nn.decoupled.DecoupledModel` (eval mode).
        noise_multiplier_: z (0.0 without noise). n_features_in_, n_classes_, info_ (``train_nodes``,
            ``steps``, ``group_size``, the noise, ``within_degree_bound``), timings_.

    Raises:
        ConfigError: an unknown hyperparameter or an invalid value (``max_degree`` < 0).
    """

    config_cls = SAGEConfig
    _fitted_private = ("_graph",)

    def fit(self, data: Data, train_nodes: object = None, *, val_nodes: object = None, num_classes: int | None = None,
            progress: Progress | None = no_progress, audit_hook: AuditHook | None = None) -> SAGEClassifier:
        """Cut the graph to degree D and train on the training nodes' closed neighbourhoods.

        Args:
            data: a ``Data`` with ``x [N, F]``, ``y [N]`` (-1: unlabelled), ``edge_index``.
            train_nodes: ``[T]`` labelled node ids (default: every labelled node).
            val_nodes: ``[V]`` labelled node ids held out of them, whose accuracy picks the epoch
                under ``model_selection="best_val"`` (non-private only; checked but not used under
                ``"last"``).
            num_classes: C (default: the largest label + 1). progress: phase ``training``.
            audit_hook: a privacy audit's fault on the DP-SGD noise (None for a real fit).

        Returns:
            ``self``, fitted.

        Raises:
            DatasetError: missing features or labels, unusable training or validation nodes.
            ConfigError: ``best_val`` without ``val_nodes``. PrivacyError: a bad delta.
            BudgetExceededError: no noise meets the budget.
        """
        progress = progress or no_progress
        config = self._config
        data, x, y, train, classes = self._fit_inputs(data, train_nodes, num_classes)
        val = self._validation_nodes(val_nodes, y, train)
        timer = Timer()
        n = int(x.shape[0])
        info: dict = {"train_nodes": int(train.size)}
        edge_index = self._edges(data.edge_index.long(), n, info)
        steps, rate = steps_and_rate(int(train.size), config.epochs, config.batch_size)
        group = config.max_degree + 1
        info.update(steps=steps, group_size=group)
        z, ledger = None, None
        if config.private:
            z, ledger = self._budget(steps, rate, group, info)
        pi = closed_neighbourhood_rows(edge_index, n)
        validation = None if val is None else _row_accuracy(x, pi[val.numpy()], y[val])
        with timer.phase("training"):
            model = train_rows(x, y[torch.from_numpy(train)], pi[train], num_classes=classes, config=config,
                               steps=steps, sample_rate=rate, seed=self.random_state, noise_multiplier=z,
                               group_size=group, ledger=ledger, progress=phase_progress(progress, "training"),
                               noise_scale=noise_scale_of(audit_hook), validation=validation, info=info)
        privacy = None
        if ledger is not None:
            relation = ("node-level add/remove of one node with its features, label and edges; no edge is read, one "
                        "training example per node" if not config.max_degree else
                        f"node-level add/remove of one node with its features, label and edges, over graphs whose "
                        f"degrees are at most D = {config.max_degree} (bounded-degree relation): a node reaches its "
                        f"own example and its <= D neighbours' (K = {group}), each moving the clipped sum by <= 2C")
            predictions = ("predictions read each node's own features only (joint DP)" if not config.max_degree else
                           "the guarantee covers the model; predictions read the neighbours' features without noise, "
                           "which it does not cover")
            notes = [relation, PUBLIC_COUNTS_NOTE, predictions, *above_bound_notes(config.max_degree, info)]
            with quiet_absl():
                privacy = ledger.report(target_epsilon=config.epsilon, notes=notes)
        self.model_ = model
        self.noise_multiplier_ = 0.0 if z is None else float(z)
        self.n_features_in_, self.n_classes_ = int(x.shape[1]), classes
        self.info_, self.timings_ = info, dict(timer.timings)
        self.ledger_ = ledger
        self._graph = (x, edge_index)
        return self._fitted(privacy)

    def _edges(self, edge_index: torch.Tensor, num_nodes: int, info: dict | None) -> torch.Tensor:
        """The edges the rows read: none when D = 0, else the graph cut to D (the fit's cut, which
        records its facts in ``info``, seeded ``random_state + 6``; a prediction's, ``info`` None,
        ``random_state + 7``)."""
        if not self._config.max_degree:
            return torch.zeros(2, 0, dtype=torch.long)
        return bounded_edges(edge_index, num_nodes, self._config.max_degree,
                             seed=self.random_state + (6 if info is not None else 7), info=info)

    def _budget(self, steps: int, rate: float, group: int, info: dict) -> tuple[float, Ledger]:
        """z calibrated so that ``steps`` Poisson steps with K = ``group`` spend epsilon; the ledger."""
        config = self._config
        check_delta(config.delta)
        sampler = PoissonSampler(1, rate, generator=torch.Generator())

        def whole(z: float) -> dp_event.DpEvent:
            return dp_event.SelfComposedDpEvent(sampler.step_event(z, group_size=group), steps)
        with quiet_absl():
            z = calibrate_noise_multiplier(whole, target_epsilon=config.epsilon, delta=config.delta)
        info.update(noise_multiplier=z, noise_std=z * PoissonSampler.sensitivity(config.max_grad_norm, group))
        return z, Ledger(PrivacyUnit.NODE, delta=config.delta)

    def _logits_of(self, data: Data | None, index_of) -> torch.Tensor:
        """The model on the fitted graph's closed neighbourhoods (``data=None``), or on ``data``'s
        (cut to D afresh)."""
        if data is None:
            x, edge_index = self._graph
        else:
            x = torch.as_tensor(data.x, dtype=torch.float32)
            edge_index = self._edges(data.edge_index.long(), int(x.shape[0]), None)
        nodes = index_of(int(x.shape[0])).numpy()
        index, weight = (torch.from_numpy(a) for a in padded_rows(closed_neighbourhood_rows(edge_index,
                                                                                           int(x.shape[0]))[nodes]))
        with torch.no_grad():
            return self.model_(x[index], weight)

    def _get_state(self) -> dict[str, Any]:
        x, edge_index = self._graph
        return {"model": self._weights(self.model_), "x": x.clone(), "edge_index": edge_index.clone(),
                "noise_multiplier": self.noise_multiplier_, **self._facts()}

    def _set_state(self, state: dict[str, Any]) -> None:
        config = self._config
        model = DecoupledModel(feature_mlp(int(state["n_features_in"]), config.hidden, int(state["n_classes"]),
                                           config.dropout))
        self.model_ = self._load_weights(model, state["model"])
        self._graph = (state["x"], state["edge_index"])
        self.noise_multiplier_ = float(state["noise_multiplier"])
        self._set_facts(state)
