"""The node classifiers' shared part: f_theta (a 2-layer MLP on node features), inductive prediction
with personalized-PageRank propagation, and the DP-SGD over training rows both estimators run.

:class:`NodeClassifier` is the base of :class:`~graphpriv.methods.dpar.DPARClassifier` (rows: DPAR's
Pi) and :class:`~graphpriv.methods.mlp.MLPClassifier` (rows: one per training node); :func:`train_rows`
is their training (DP-SGD with per-row clipping and Poisson batches, ghost clipping for the sum),
:func:`steps_and_rate` their schedule. Source: Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled
Graph Neural Networks with Node-Level Differential Privacy" (WWW 2024), Sec. 3.2 and Algorithm 2
(decoupled f_theta, DP-SGD over the rows of Pi) and Sec. 4, "Inference Phase" (propagation).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn.functional as F
from torch_geometric.data import Data

from graphpriv.data.validation import check_data, check_node_ids
from graphpriv.errors import DatasetError
from graphpriv.methods.base import Progress, Timer, no_progress
from graphpriv.methods.best_epoch import BestEpoch
from graphpriv.methods.estimator import Estimator
from graphpriv.nn.decoupled import DecoupledModel, feature_mlp, padded_rows, propagate
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.engine import DPSGD
from graphpriv.privacy.ghost_clipping import ghost_clipped_sum
from graphpriv.privacy.hooks import AuditHook
from graphpriv.privacy.sampling import PoissonSampler
from graphpriv.privacy.units import Accounting

__all__ = ["NodeClassifier", "steps_and_rate", "train_rows"]


def _where(data: Data) -> str:
    name = getattr(data, "name", None)
    return f"{name}: " if isinstance(name, str) else ""


def _check_graph(data: object, *, labels: bool, edges: bool, who: str) -> Data:
    """``data`` checked by :func:`~graphpriv.data.validation.check_data` (features needed, labels
    when ``labels``), except that a graph without edges (``edge_index`` of shape ``[2, 0]``, or
    none when ``edges`` is False) is accepted: a node classifier can score isolated nodes.

    Raises:
        DatasetError: what ``check_data`` raises; a missing ``edge_index`` when ``edges``.
    """
    if edges and isinstance(data, Data) and getattr(data, "edge_index", None) is None:
        raise DatasetError(f"{_where(data)}data.edge_index is missing: {who} propagates over the graph; set it to "
                           "the [2, E] node ids of the edges (an empty [2, 0] long tensor for a graph without edges)")
    return check_data(data, needs_features=True, needs_labels=labels, method=who, allow_no_edges=True)


def _plain(value: Any) -> Any:
    """JSON fallback for numpy scalars in ``info_``."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


class NodeClassifier(Estimator):
    """Base of graphpriv's node classifiers (:class:`DPARClassifier`, the feature-only
    :class:`~graphpriv.methods.mlp.MLPClassifier`): f_theta, a 2-layer MLP on node features,
    then ``prop_steps`` personalized-PageRank propagation steps (teleport ``alpha``) over the graph
    predicted on (none when ``prop_steps`` is 0). Prediction is inductive: any graph whose
    features have the fitted width, including one ``fit`` never saw. Subclasses implement ``fit``
    (ending with :meth:`_keep` and :meth:`_fitted`).

    Attributes:
        model_: the trained :class:`~graphpriv.nn.decoupled.DecoupledModel` (eval mode); its
            ``mlp`` is f_theta. n_features_in_: F, the feature width fitted on. n_classes_: C.
        info_: facts of the fit (sizes, noise; what a run's ``info`` holds). timings_: seconds per
            phase of ``fit``. privacy_report_: see :class:`~graphpriv.methods.estimator.Estimator`.
    """

    def predict_proba(self, data: Data, nodes: object = None) -> torch.Tensor:
        """Class probabilities of ``nodes`` of ``data`` (softmax of :meth:`predict`'s scores).

        Args:
            data: a ``Data`` with ``x [N, F]`` (F = ``n_features_in_``) and, when ``prop_steps`` >
                0, ``edge_index [2, E]`` (``[2, 0]``: no edges); it need not be the graph fitted on.
            nodes: ``[K]`` node ids of ``data`` (default: every node, in order).

        Returns:
            ``[K, C]`` float32, each row summing to 1.

        Raises:
            NotFittedError: before ``fit``. DatasetError: a malformed graph, another feature width,
                a node id outside ``[0, N)``.
        """
        return torch.softmax(self._logits(data, nodes), dim=1)

    def predict(self, data: Data, nodes: object = None) -> torch.Tensor:
        """The most likely class of ``nodes`` of ``data`` (arguments and errors as
        :meth:`predict_proba`).

        Returns:
            ``[K]`` int64 class ids in ``[0, C)``.
        """
        return self._logits(data, nodes).argmax(1)

    def _logits(self, data: Data, nodes: object) -> torch.Tensor:
        """``[K, C]`` scores: f_theta on the nodes' features, propagated over ``data``'s edges."""
        self._check_fitted()
        config = self._config
        propagates = config.prop_steps > 0
        data = _check_graph(data, labels=False, edges=propagates, who=type(self).__name__)
        x = torch.as_tensor(data.x, dtype=torch.float32)
        if x.shape[1] != self.n_features_in_:
            raise DatasetError(f"{_where(data)}data.x has {x.shape[1]} features per node, but this "
                               f"{type(self).__name__} was fitted on {self.n_features_in_}; pass a graph with the "
                               "same features")
        n = int(x.shape[0])
        index = torch.from_numpy(check_node_ids(nodes, n, name="nodes"))
        with torch.no_grad():  # every node at once: a node's scores do not depend on ``nodes``
            h = self.model_.mlp(x)
            if propagates:
                h = propagate(h, data.edge_index.long(), n, alpha=config.alpha, steps=config.prop_steps)
            return h[index]

    def _fit_inputs(self, data: Data, train_nodes: object, num_classes: int | None, *,
                    edges: bool) -> tuple[Data, torch.Tensor, torch.Tensor, np.ndarray, int]:
        """Check what ``fit`` was given.

        Returns:
            ``(checked data, x [N, F] float32, y [N] int64, train [T] sorted ids, C)``.

        Raises:
            DatasetError: a malformed graph, missing or unusable features or labels; training nodes
                that are out of range, repeated (a node reaches training once) or unlabelled; or
                ``num_classes`` not above every training label.
        """
        data = _check_graph(data, labels=True, edges=edges, who=type(self).__name__)
        x = torch.as_tensor(data.x, dtype=torch.float32)
        y = torch.as_tensor(data.y, dtype=torch.long)
        if train_nodes is None:
            train = np.flatnonzero(y.numpy() >= 0)
        else:
            ids = check_node_ids(train_nodes, int(x.shape[0]), name="train_nodes")
            train, counts = np.unique(ids, return_counts=True)
            if (counts > 1).any():
                raise DatasetError(f"train_nodes lists node {int(train[counts > 1][0])} more than once; each "
                                   "training node is used once (the privacy unit is one node)")
            unlabelled = train[y.numpy()[train] < 0]
            if unlabelled.size:
                raise DatasetError(f"train_nodes includes unlabelled node {int(unlabelled[0])} (label -1); pass "
                                   "labelled nodes only")
        if train.size == 0:
            raise DatasetError(f"{_where(data)}no training node: train_nodes is empty")
        top = int(y[torch.from_numpy(train)].max()) + 1
        classes = int(y.max()) + 1 if num_classes is None else num_classes
        if isinstance(classes, bool) or not isinstance(classes, (int, np.integer)) or classes < max(2, top):
            raise DatasetError(f"num_classes must be an integer of at least {max(2, top)} (the training labels go up "
                               f"to {top - 1}), got {num_classes!r}")
        return data, x, y, train, int(classes)

    def _keep(self, model: DecoupledModel, num_features: int, num_classes: int, info: dict, timer: Timer) -> None:
        """Record the fitted state (before :meth:`_fitted`)."""
        self.model_ = model
        self.n_features_in_ = int(num_features)
        self.n_classes_ = int(num_classes)
        self.info_ = info
        self.timings_ = dict(timer.timings)

    @staticmethod
    def _dumps(value: Any) -> str:
        """JSON of fitted facts (numpy scalars as Python numbers) for :meth:`_get_state`."""
        return json.dumps(value, default=_plain)

    def _get_state(self) -> dict[str, Any]:
        return {"model": self._weights(self.model_),
                "n_features_in": self.n_features_in_, "n_classes": self.n_classes_,
                "info": self._dumps(self.info_), "timings": json.dumps(self.timings_)}

    def _set_state(self, state: dict[str, Any]) -> None:
        model = DecoupledModel(feature_mlp(int(state["n_features_in"]), self._config.hidden,
                                           int(state["n_classes"]), self._config.dropout))
        self.model_ = self._load_weights(model, state["model"])
        self.n_features_in_ = int(state["n_features_in"])
        self.n_classes_ = int(state["n_classes"])
        self.info_ = json.loads(state["info"])
        self.timings_ = json.loads(state["timings"])


def steps_and_rate(num_rows: int, epochs: int, batch_size: int) -> tuple[int, float]:
    """(epochs x ceil(n / B), B / n): the DP-SGD schedule of DPAR and its baselines."""
    return epochs * math.ceil(num_rows / batch_size), min(1.0, batch_size / num_rows)


def train_rows(x: torch.Tensor, y: torch.Tensor, pi: sp.csr_matrix, *, num_classes: int, config, steps: int,
               sample_rate: float, seed: int, noise_multiplier: float | None = None, sensitivity: float | None = None,
               group_size: int = 1, ledger: Ledger | None = None, accounting: Accounting = Accounting.RIGOROUS,
               progress: Progress = no_progress, noise_scale: float = 1.0,
               validation: Callable[[DecoupledModel], float] | None = None,
               info: dict | None = None) -> DecoupledModel:
    """Train f_theta on the rows of Pi: row v predicts y[v] from sum_u Pi[v, u] f_theta(x[u]).

    Private (``noise_multiplier`` given): DP-SGD by :class:`~graphpriv.privacy.engine.DPSGD`, Poisson
    batches of rate ``sample_rate`` (one generator, seeded ``seed + 1``, draws the batches and the
    noise), each row's gradient clipped to ``config.max_grad_norm`` and summed by ghost clipping
    (:func:`~graphpriv.privacy.ghost_clipping.ghost_clipped_sum`), N(0, (z x sensitivity)^2 I) added
    to the sum, divided by the expected batch size, Adam; every step spends the Poisson sampler's
    event for ``group_size`` rows per unit on ``ledger`` (phase ``dp-sgd``).
    Non-private: Adam on shuffled minibatches of ``config.batch_size`` rows, as many steps; with
    ``validation``, the model is scored (eval mode, no gradients) after every pass over the rows
    and ends restored to the first pass of best score (``info["selected_epochs"]["training"]``,
    1-based).

    Privacy: node-level add/remove when a node reaches ``group_size`` rows (K = 1: ordinary Poisson
    DP-SGD, ``PoissonSampledDpEvent(q, GaussianDpEvent(z))``; K > 1:
    :class:`~graphpriv.privacy.events.BinomialGroupGaussianDpEvent`), as the ledger composes it.

    Args:
        x: ``[R, F]`` features of the rows' nodes. y: ``[R]`` labels. pi: ``[R, R]`` CSR.
        num_classes: C, the width of f_theta's output. config: ``hidden``, ``dropout``, ``lr``,
            ``weight_decay``, ``max_grad_norm``, ``batch_size``. steps, sample_rate: the schedule
            (:func:`steps_and_rate`). seed: initialisation, dropout, batches and noise.
        noise_multiplier: z > 0 (None: not private). sensitivity: the noisy sum's L2 sensitivity
            (default: the Poisson sampler's, C for K = 1 and 2 C K otherwise).
        group_size: K, the rows one unit reaches (decides the step's event). ledger: where each
            step is spent (required when private). accounting: passed to the sampler's event.
        progress: called ``progress(step, steps)`` after every step.
        noise_scale: the noise std times this factor (1.0; other values only from a privacy audit's
            fault test, :class:`graphpriv.privacy.hooks.AuditHook`: the ledger still spends the
            calibrated step).
        validation: the score of the model as it stands (non-private only: a private run would read
            the validation labels outside its budget). info: gains the selected pass.

    Returns:
        The trained model (eval mode).

    Raises:
        ValueError: a private run without a ledger, or with ``validation``; z, C or the
            sensitivity not > 0.

    Source: Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with Node-Level
    Differential Privacy" (WWW 2024), Algorithm 2.
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
    if noise_multiplier is not None:
        if ledger is None:
            raise ValueError("a private train_rows needs the ledger its steps are spent on")
        if validation is not None:
            raise ValueError("a private train_rows cannot pick its epoch on validation labels its budget does not "
                             "cover")
        engine = DPSGD(model, optimizer, PoissonSampler(n, sample_rate, generator=generator),
                       clipped_sum=ghost_clipped_sum(model, collate, config.max_grad_norm),
                       noise_multiplier=noise_multiplier, max_grad_norm=config.max_grad_norm, group_size=group_size,
                       sensitivity=sensitivity, ledger=ledger, generator=generator, accounting=accounting,
                       phase="dp-sgd", audit_hook=AuditHook(noise_scale=noise_scale))
        for step in range(steps):
            engine.step()
            progress(step + 1, steps)
    else:
        step, epoch = 0, 0
        best = BestEpoch(model, lambda: validation(model)) if validation is not None else None
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
            epoch += 1
            if best is not None:
                best.offer(epoch)
        if best is not None:
            selected = best.restore()
            if selected is not None and info is not None:
                info.setdefault("selected_epochs", {})["training"] = selected
    return model.eval()
