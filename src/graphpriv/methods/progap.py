"""ProGAP: :class:`ProGAPClassifier` (edge-level DP, ``private=True``: ProGAP-EDP; ``private=False``:
ProGAP-INF) and :class:`ProGAPNodeClassifier` (node-level DP: ProGAP-NDP).

Source: Sajadmanesh and Gatica-Perez, "ProGAP: Progressive Graph Neural Networks with Differential
Privacy Guarantees" (WSDM 2024), Sec. 4 and Alg. 1: S = depth + 1 stages trained one after the
other; stage 0 reads the node features; after stage i (i < depth) its embedding (stage i's base
output on every node) is row-normalised, summed over each node's neighbours and perturbed with
Gaussian noise, giving the aggregate ``x_{i+1}`` every later stage reads
(:func:`graphpriv.propagation.aggregation_perturbation.noisy_aggregate`); stage i trains the
bases 0..i, its combination and its head on the training nodes; the last stage predicts.

Privacy (edge level, neighbouring graphs differ by one undirected edge added or removed): only the
depth aggregations read edges, each a Gaussian mechanism at L2 sensitivity sqrt(2) over rows of
norm 1, adaptive (stage i's embedding is a function of the earlier private aggregates, features and
labels), composed by the RDP accountant; training is post-processing. As for GAP, the report also
gives the epsilon of the same noise under the directed relation (the public code's sensitivity 1).

Node level (Sec. 5): every stage trained by DP-SGD with per-node clipping, the degree cut to D
before the aggregations, their noise at sensitivity sqrt(D), one noise multiplier z calibrated to
the whole fit, DP-SGD's at r z (``sgd_noise_ratio`` r, 1 by default;
:mod:`graphpriv.methods.node_level_aggregation` has the relation and the argument).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from pydantic import Field
from torch_geometric.data import Data

from graphpriv.methods.base import Progress, Timer, no_progress, phase_progress
from graphpriv.methods.node_level_aggregation import (
    NodeBudget,
    NodeLevelAggregation,
    NodeLevelConfig,
    node_budget,
    stream_seed,
    train_dp_sgd,
)
from graphpriv.methods.transductive_classifier import (
    AggregationPerturbationConfig,
    EdgeBudget,
    EdgeLevelAggregation,
    TransductiveClassifier,
    accuracy_of,
    train_full_batch,
)
from graphpriv.nn.progap import ProgressiveModel, StageLogits
from graphpriv.privacy.hooks import AuditHook, noise_scale_of
from graphpriv.propagation.aggregation_perturbation import noisy_aggregate

__all__ = ["ProGAPClassifier", "ProGAPConfig", "ProGAPNodeClassifier", "ProGAPNodeConfig"]


class ProGAPConfig(AggregationPerturbationConfig):
    """ProGAP's hyperparameters: the paper's code's defaults (depth 2, hidden 16, 1-layer bases and
    heads, jumping knowledge by concatenation, SELU with batch normalisation, no dropout, 100
    epochs per stage, Adam at lr 0.01), full-batch training."""

    depth: int = Field(2, ge=1, description="aggregations (stages - 1)")


class ProGAPClassifier(EdgeLevelAggregation, TransductiveClassifier):
    """ProGAP (WSDM 2024) as an estimator.

    Privacy: ``private=True`` (ProGAP-EDP): ``fit`` is edge-level (eps, delta)-DP for the graph it
    is given (add/remove one undirected edge; module docstring); the guarantee covers the stages'
    aggregates (``aggregates_``) and the model trained on them. ``private=False`` (ProGAP-INF): no
    noise, no guarantee. Prediction on the fitted graph reads its aggregates; on another graph it
    runs the stages' aggregations afresh with the same noise (a new release of that graph). The
    saved file holds the fitted graph's node features (stage 0's input for ``data=None``): edge-level
    DP does not protect them, keep the file as private as the features.

    Args:
        random_state: seed of the initialisation and of the noise.
        **params: :class:`ProGAPConfig` fields.

    Attributes:
        model_: the trained :class:`~graphpriv.nn.progap.ProgressiveModel` (eval mode).
        aggregates_: ``[x_1 .. x_depth]``, each ``[N, hidden]``, the fitted graph's noisy aggregates.
        noise_multiplier_: z (0.0 for ProGAP-INF). n_features_in_: F. n_classes_: C. info_, timings_.
            ``info_`` holds ``train_nodes``, the noise and, under ``best_val``, ``selected_epochs``
            (``{"stage i": e}``), no fact of the edges.

    Raises:
        ConfigError: an unknown hyperparameter or an invalid value.
    """

    config_cls = ProGAPConfig
    _fitted_private = ("_x",)

    def fit(self, data: Data, train_nodes: object = None, *, val_nodes: object = None, num_classes: int | None = None,
            progress: Progress | None = no_progress, audit_hook: AuditHook | None = None) -> ProGAPClassifier:
        """Train the stages one after the other, releasing an aggregate between them.

        Args:
            data: a ``Data`` with ``x [N, F]``, ``y [N]`` (-1: unlabelled), ``edge_index``.
            train_nodes: ``[T]`` labelled node ids (default: every labelled node).
            val_nodes: ``[V]`` labelled node ids held out of ``train_nodes``, whose labels pick each
                stage's epoch under ``model_selection="best_val"`` (checked but not used under ``"last"``;
                edge-level DP does not protect labels; the node-level classifier refuses
                ``best_val``).
            num_classes: C (default: the largest label + 1). progress: phases ``stage 0`` ..
                ``stage depth``.
            audit_hook: for a privacy audit only: its ``noise_scale`` multiplies the calibrated
                noise while the ledger still spends the calibrated steps. None for a real fit.

        Returns:
            ``self``, fitted.

        Raises:
            DatasetError: missing features or labels, unusable training or validation nodes.
            ConfigError: ``best_val`` without ``val_nodes``. BudgetExceededError: no noise meets
                the budget.
        """
        progress = progress or no_progress
        config = self._config
        data, x, y, train, classes = self._fit_inputs(data, train_nodes, num_classes)
        val = self._validation_nodes(val_nodes, y, train)
        timer = Timer()
        info: dict = {"train_nodes": int(train.size)}  # no edge count: it is what the guarantee hides
        budget = self._budget(int(train.size), info)
        torch.manual_seed(self.random_state)
        model = ProgressiveModel(x.shape[1], config.hidden, classes, num_stages=config.depth + 1,
                                 base_layers=config.base_layers, head_layers=config.head_layers,
                                 dropout=config.dropout, batch_norm=config.batch_norm)
        generator = torch.Generator().manual_seed(self.random_state + 2)
        index = torch.from_numpy(train)
        xs = [x]
        edge_index = self._edges(data.edge_index.long(), int(x.shape[0]), info)
        for stage in range(config.depth + 1):
            with timer.phase(f"stage {stage}"):
                if stage:
                    with torch.no_grad():
                        model.eval()
                        embedding = model(xs, stage - 1)[0]
                    xs.append(noisy_aggregate(F.normalize(embedding, p=2.0, dim=-1), edge_index,
                                              noise_multiplier=budget.noise_multiplier, generator=generator,
                                              ledger=budget.ledger, noise_scale=noise_scale_of(audit_hook),
                                              sensitivity=self._sensitivity()))
                logits = StageLogits(model, stage)
                validation = None if val is None else accuracy_of(
                    lambda logits=logits, inputs=tuple(t[val] for t in xs): logits(*inputs), y[val])
                self._train_stage(logits, tuple(t[index] for t in xs), y[index], stage=stage,
                                  budget=budget, progress=phase_progress(progress, f"stage {stage}"),
                                  audit_hook=audit_hook, validation=validation, info=info)
        privacy = self._report(budget, info)
        self.model_ = model.eval()
        self.aggregates_ = xs[1:]
        self.noise_multiplier_ = float(budget.noise_multiplier)
        self.n_features_in_, self.n_classes_ = int(x.shape[1]), classes
        self.info_, self.timings_ = info, dict(timer.timings)
        self.ledger_ = budget.ledger
        self._x = x
        return self._fitted(privacy)

    # What ProGAP counts and says for EdgeLevelAggregation's steps (ProGAPNodeClassifier overrides those).

    def _aggregation_count(self) -> int:
        return self._config.depth

    def _aggregation_words(self) -> tuple[str, str]:
        return "the aggregations between stages", "the stages' training is post-processing"

    def _train_stage(self, module: StageLogits, inputs: tuple[torch.Tensor, ...], y: torch.Tensor, *, stage: int,
                     budget: EdgeBudget, progress: Progress, audit_hook: AuditHook | None,
                     validation: Callable[[], float] | None, info: dict) -> None:
        """Full-batch Adam on the stage's parameters (edge level: training reads no edge); with
        ``validation`` the model ends at the stage's best epoch (``info["selected_epochs"]``)."""
        config = self._config
        epoch = train_full_batch(module, lambda: module(*inputs), y, epochs=config.epochs, lr=config.lr,
                                 weight_decay=config.weight_decay, progress=progress,
                                 parameters=module.model.stage_parameters(stage), validation=validation)
        if validation is not None:
            info.setdefault("selected_epochs", {})[f"stage {stage}"] = epoch

    def _logits_of(self, data: Data | None, index_of) -> torch.Tensor:
        """The last stage on the fitted graph's aggregates (``data=None``: no new privacy spent), or
        on ``data``'s, computed afresh with the fitted noise multiplier (a new release of it)."""
        depth = self._config.depth
        with torch.no_grad():
            if data is None:
                xs = [self._x, *self.aggregates_]
            else:
                xs = [torch.as_tensor(data.x, dtype=torch.float32)]
                edge_index = self._edges(data.edge_index.long(), int(xs[0].shape[0]), None)
                generator = torch.Generator().manual_seed(self.random_state + 3)
                for stage in range(1, depth + 1):
                    embedding = self.model_(xs, stage - 1)[0]
                    xs.append(noisy_aggregate(F.normalize(embedding, p=2.0, dim=-1), edge_index,
                                              noise_multiplier=self.noise_multiplier_, generator=generator,
                                              sensitivity=self._sensitivity()))
            index = index_of(int(xs[0].shape[0]))
            return self.model_([t[index] for t in xs], depth)[1]

    def _get_state(self) -> dict[str, Any]:
        return {"model": self._weights(self.model_), "x": self._x.clone(),
                "aggregates": [a.clone() for a in self.aggregates_], "noise_multiplier": self.noise_multiplier_,
                **self._facts()}

    def _set_state(self, state: dict[str, Any]) -> None:
        config = self._config
        model = ProgressiveModel(int(state["n_features_in"]), config.hidden, int(state["n_classes"]),
                                 num_stages=config.depth + 1, base_layers=config.base_layers,
                                 head_layers=config.head_layers, dropout=config.dropout, batch_norm=config.batch_norm)
        self.model_ = self._load_weights(model, state["model"])
        self._x, self.aggregates_ = state["x"], list(state["aggregates"])
        self.noise_multiplier_ = float(state["noise_multiplier"])
        self._set_facts(state)


class ProGAPNodeConfig(NodeLevelConfig, ProGAPConfig):
    """ProGAP-NDP's hyperparameters: :class:`ProGAPConfig`'s and
    :class:`~graphpriv.methods.node_level_aggregation.NodeLevelConfig`'s (D, DP-SGD's clip and
    batch; no batch normalisation)."""


class ProGAPNodeClassifier(NodeLevelAggregation, ProGAPClassifier):
    """ProGAP-NDP (WSDM 2024, Sec. 5) as an estimator: every stage trained by DP-SGD with per-node
    clipping on the training nodes' inputs, the degree cut to D, the aggregations' noise at
    sensitivity sqrt(D), one noise multiplier z calibrated to the whole fit (DP-SGD's at r z,
    ``sgd_noise_ratio`` r; 1 by default).

    Privacy: ``fit`` is node-level (eps, delta)-DP (add/remove one node with its features, label and
    edges) over graphs whose degrees are at most D (docs/privacy.md; the report says when the fitted
    graph was above the bound, which the relation does not cover). The guarantee covers
    ``model_``; predictions and ``aggregates_`` as for :class:`~graphpriv.methods.gap.GAPNodeClassifier`
    (each node's own rows are not covered for that node; the saved file holds them and the
    features).

    Args, Attributes: as :class:`ProGAPClassifier` (``info_`` adds ``within_degree_bound``,
    ``sgd_noise_multiplier``, ``sgd_noise_std`` and ``steps``; ``noise_multiplier_`` is the
    aggregations' z).

    Raises:
        ConfigError: an unknown hyperparameter or an invalid value (``max_degree`` < 1,
            ``private=False``, ``batch_norm=True``).
    """

    config_cls = ProGAPNodeConfig

    def _budget(self, num_train: int, info: dict) -> NodeBudget:
        config = self._config
        return node_budget(config, num_train, {f"stage {i}": config.epochs for i in range(config.depth + 1)},
                           config.depth, info)

    def _train_stage(self, module: StageLogits, inputs: tuple[torch.Tensor, ...], y: torch.Tensor, *, stage: int,
                     budget: NodeBudget, progress: Progress, audit_hook: AuditHook | None,
                     validation: Callable[[], float] | None, info: dict) -> None:
        """DP-SGD (``validation`` is always None: the config refuses ``best_val`` at node level)."""
        train_dp_sgd(module, inputs, y, config=self._config, budget=budget, phase=f"stage {stage}",
                     seed=stream_seed(self.random_state, f"dp-sgd stage {stage}"), progress=progress,
                     parameters=module.model.stage_parameters(stage), audit_hook=audit_hook)

    def _aggregations(self) -> str:
        return f"the {self._config.depth} aggregations"
