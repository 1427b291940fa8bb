"""GAP: :class:`GAPClassifier` (edge-level DP, ``private=True``: GAP-EDP; ``private=False``: GAP-INF)
and :class:`GAPNodeClassifier` (node-level DP: GAP-NDP).

Source: Sajadmanesh, Shamsabadi, Bellet, Gatica-Perez, "GAP: Differentially Private Graph Neural
Networks with Aggregation Perturbation" (USENIX Security 2023), Sec. 4 (the three modules) and
Sec. 5.1 (edge-level privacy): (1) the encoder, an MLP on node features with a linear head, trained
on the training labels; it reads no edge. (2) The aggregation module: K hops of sum aggregation over
the row-normalised embeddings, Gaussian noise on every node's aggregate at every hop
(:mod:`graphpriv.propagation.aggregation_perturbation`), the only step that reads the edges. (3)
The classification module, trained on the K + 1 private aggregates of the training nodes.

Privacy (edge level): neighbouring graphs differ by one undirected edge added or removed
(graphpriv's edge relation). Only the aggregation module reads edges; it is (eps, delta)-DP by the
Gaussian mechanism at sensitivity sqrt(2) per hop, composed over the K hops by the RDP accountant;
the encoder (no edges) and the classification module (post-processing of the aggregates, the
features and the labels) add nothing. Features and labels are not protected (edge-level DP).
The report also gives the epsilon of the same noise under the directed relation (one direction
of an edge as the unit, sensitivity 1: the public GAP code's), to set numbers beside the paper's.

Node level (Sec. 5.2): the same modules with the degree cut to D before the hops, the hops' noise
at sensitivity sqrt(D) and the encoder and classifier trained by DP-SGD
(:mod:`graphpriv.methods.node_level_aggregation` has the relation and the argument).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
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
from graphpriv.nn.gap import ClassificationModule, Encoder
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.hooks import AuditHook, noise_scale_of
from graphpriv.propagation.aggregation_perturbation import perturbed_aggregations

__all__ = ["GAPClassifier", "GAPConfig", "GAPNodeClassifier", "GAPNodeConfig"]


class GAPConfig(AggregationPerturbationConfig):
    """GAP's hyperparameters: the paper's code's defaults (hops 2, hidden 16, a 2-layer encoder,
    1-layer bases and head, SELU with batch normalisation, no dropout, 100 epochs for the encoder
    and the classifier, Adam at lr 0.01), with full-batch training; ``val_ratio`` and ``test_ratio``
    are the transductive protocol's split (:mod:`graphpriv.evaluation.transductive`: 75/10/15)."""

    hops: int = Field(2, ge=1, description="K, hops of noisy aggregation")
    encoder_layers: int = Field(2, ge=0, description="0: no encoder, H_0 = the row-normalised features (nothing "
                                "trained before the hops)")
    encoder_epochs: int = Field(100, ge=1)


class GAPClassifier(EdgeLevelAggregation, TransductiveClassifier):
    """GAP (USENIX Security 2023) as an estimator: encoder, aggregation perturbation, classifier.

    Privacy: ``private=True`` (GAP-EDP): ``fit`` is edge-level (eps, delta)-DP for the graph it is
    given, under add/remove of one undirected edge (module docstring); the guarantee covers the
    aggregates (``aggregates_``) and everything trained on them (``classifier_``); the encoder
    reads no edge. ``private=False`` (GAP-INF): the same model without noise, no guarantee.
    Prediction on the fitted graph reads the fitted aggregates (no new privacy spent); on another
    graph it aggregates that graph afresh with the same noise, a new release of that graph at the
    same epsilon (``privacy_report_`` covers the fit only).

    Args:
        random_state: seed of the initialisations and of the aggregation noise.
        **params: :class:`GAPConfig` fields.

    Attributes:
        encoder_, classifier_: the trained modules (eval mode; with ``encoder_layers=0`` the encoder
            is the identity and its head is not trained). aggregates_: ``[N, width, K + 1]``, the
            fitted graph's aggregates (width: ``hidden``, or F without an encoder).
            noise_multiplier_: z (0.0 for GAP-INF).
        n_features_in_: F. n_classes_: C. info_: facts of the fit. timings_: seconds per phase.
            ``info_`` holds ``train_nodes``, the noise and, under ``best_val``, ``selected_epochs``
            (``{"encoder": e, "classifier": e}``), no fact of the edges.

    Raises:
        ConfigError: an unknown hyperparameter or an invalid value.
    """

    config_cls = GAPConfig

    def fit(self, data: Data, train_nodes: object = None, *, val_nodes: object = None, num_classes: int | None = None,
            progress: Progress | None = no_progress, audit_hook: AuditHook | None = None) -> GAPClassifier:
        """Train the encoder, release the aggregates, train the classifier.

        Args:
            data: a ``Data`` with ``x [N, F]``, ``y [N]`` (class ids, -1: unlabelled) and
                ``edge_index [2, 2|E|]`` (both directions; ``[2, 0]``: no edges).
            train_nodes: ``[T]`` labelled node ids (default: every labelled node).
            val_nodes: ``[V]`` labelled node ids held out of ``train_nodes``, whose labels pick the
                encoder's and the classifier's epochs under ``model_selection="best_val"`` (checked but
                not used under ``"last"``). Edge-level DP does not protect labels, so reading them spends
                nothing; the node-level classifier refuses ``best_val``.
            num_classes: C (default: the largest label + 1).
            progress: phases ``encoder``, ``aggregation``, ``classifier`` (``None``: none).
            audit_hook: for a privacy audit only (:mod:`graphpriv.audit.gap`): its ``noise_scale``
                multiplies the fit's calibrated noise (the aggregation's; at node level the
                DP-SGD steps' too) while the ledger still spends the calibrated steps (a deliberate
                fault). None (default) for a real fit.

        Returns:
            ``self``, fitted.

        Raises:
            DatasetError: missing features or labels, unusable training or validation nodes, a class
                without a training node. ConfigError: ``best_val`` without ``val_nodes``.
            BudgetExceededError: no noise meets the budget.
        """
        progress = progress or no_progress
        config = self._config
        data, x, y, train, classes = self._fit_inputs(data, train_nodes, num_classes)
        val = self._validation_nodes(val_nodes, y, train)
        timer = Timer()
        info: dict = {"train_nodes": int(train.size)}  # no edge count: it is what the guarantee hides
        budget = self._budget(int(train.size), info)
        torch.manual_seed(self.random_state)
        encoder = self._encoder(x.shape[1], classes)
        if config.encoder_layers:  # without one, the embedding is the features: nothing to train
            with timer.phase("encoder"):
                self._train(encoder, (x[train],), y[train], phase="encoder", epochs=config.encoder_epochs,
                            budget=budget, progress=phase_progress(progress, "encoder"), audit_hook=audit_hook,
                            validation=None if val is None else accuracy_of(lambda: encoder(x[val]), y[val]),
                            info=info)
        with timer.phase("aggregation"):
            edge_index = self._edges(data.edge_index.long(), int(x.shape[0]), info)
            aggregates = self._aggregates(encoder, x, edge_index, budget.noise_multiplier, budget.ledger,
                                          seed=self.random_state, noise_scale=noise_scale_of(audit_hook))
            progress(1, 1, phase="aggregation")
        torch.manual_seed(self.random_state + 1)
        classifier = self._classifier(encoder.width, classes)
        with timer.phase("classifier"):
            self._train(classifier, (aggregates[torch.from_numpy(train)],), y[train], phase="classifier",
                        epochs=config.epochs, budget=budget, progress=phase_progress(progress, "classifier"),
                        audit_hook=audit_hook,
                        validation=None if val is None else accuracy_of(lambda: classifier(aggregates[val]), y[val]),
                        info=info)
        privacy = self._report(budget, info)
        self.encoder_, self.classifier_, self.aggregates_ = encoder, classifier, aggregates
        self.noise_multiplier_ = float(budget.noise_multiplier)
        self.n_features_in_, self.n_classes_ = int(x.shape[1]), int(classes)
        self.info_, self.timings_ = info, dict(timer.timings)
        self.ledger_ = budget.ledger
        return self._fitted(privacy)

    # What GAP counts and says for EdgeLevelAggregation's steps (GAPNodeClassifier overrides those).

    def _aggregation_count(self) -> int:
        return self._config.hops

    def _aggregation_words(self) -> tuple[str, str]:
        return "the aggregation's hops", "the encoder reads no edge, the classifier is post-processing"

    def _train(self, module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], y: torch.Tensor, *, phase: str,
               epochs: int, budget: EdgeBudget, progress: Progress, audit_hook: AuditHook | None,
               validation: Callable[[], float] | None, info: dict) -> None:
        """Full-batch Adam (edge level: the modules' training reads no edge); with ``validation``
        the module ends at its best epoch, which ``info["selected_epochs"][phase]`` records."""
        config = self._config
        epoch = train_full_batch(module, lambda: module(*inputs), y, epochs=epochs, lr=config.lr,
                                 weight_decay=config.weight_decay, progress=progress, validation=validation)
        if validation is not None:
            info.setdefault("selected_epochs", {})[phase] = epoch

    def _aggregates(self, encoder: Encoder, x: torch.Tensor, edge_index: torch.Tensor, z: float,
                    ledger: Ledger | None, *, seed: int, noise_scale: float = 1.0) -> torch.Tensor:
        with torch.no_grad():
            embedding = encoder.embed(x)
        return perturbed_aggregations(embedding, edge_index, hops=self._config.hops, noise_multiplier=z,
                                      generator=torch.Generator().manual_seed(seed + 2), ledger=ledger,
                                      noise_scale=noise_scale, sensitivity=self._sensitivity())

    def _logits_of(self, data: Data | None, index_of) -> torch.Tensor:
        """The fitted aggregates (``data=None``: no new privacy spent), or ``data`` aggregated afresh
        with the fitted noise multiplier: a new release of that graph (``privacy_report_`` covers
        the fit only)."""
        if data is None:
            aggregates = self.aggregates_
        else:
            x = torch.as_tensor(data.x, dtype=torch.float32)
            edge_index = self._edges(data.edge_index.long(), int(x.shape[0]), None)
            aggregates = self._aggregates(self.encoder_, x, edge_index, self.noise_multiplier_, None,
                                          seed=self.random_state + 3)
        index = index_of(int(aggregates.shape[0]))
        with torch.no_grad():
            return self.classifier_(aggregates[index])

    def _encoder(self, num_features: int, num_classes: int) -> Encoder:
        config = self._config
        return Encoder(num_features, config.hidden, num_classes, layers=config.encoder_layers, dropout=config.dropout,
                       batch_norm=config.batch_norm)

    def _classifier(self, width: int, num_classes: int) -> ClassificationModule:
        config = self._config
        return ClassificationModule(width, config.hidden, num_classes, hops=config.hops, base_layers=config.base_layers,
                                    head_layers=config.head_layers, dropout=config.dropout,
                                    batch_norm=config.batch_norm)

    def _modules(self, num_features: int, num_classes: int) -> tuple[Encoder, ClassificationModule]:
        encoder = self._encoder(num_features, num_classes)
        return encoder, self._classifier(encoder.width, num_classes)

    def _get_state(self) -> dict[str, Any]:
        return {"encoder": self._weights(self.encoder_), "classifier": self._weights(self.classifier_),
                "aggregates": self.aggregates_.detach().clone(), "noise_multiplier": self.noise_multiplier_,
                **self._facts()}

    def _set_state(self, state: dict[str, Any]) -> None:
        encoder, classifier = self._modules(int(state["n_features_in"]), int(state["n_classes"]))
        self.encoder_ = self._load_weights(encoder, state["encoder"])
        self.classifier_ = self._load_weights(classifier, state["classifier"])
        self.aggregates_ = state["aggregates"]
        self.noise_multiplier_ = float(state["noise_multiplier"])
        self._set_facts(state)


class GAPNodeConfig(NodeLevelConfig, GAPConfig):
    """GAP-NDP's hyperparameters: :class:`GAPConfig`'s and :class:`~graphpriv.methods.node_level_aggregation.NodeLevelConfig`'s
    (the degree bound D, DP-SGD's clip and batch; no batch normalisation)."""


class GAPNodeClassifier(NodeLevelAggregation, GAPClassifier):
    """GAP-NDP (USENIX Security 2023, Sec. 5.2) as an estimator: the degree cut to D, the encoder and
    the classification module trained by DP-SGD with per-node clipping, the hops' noise at
    sensitivity sqrt(D), one noise multiplier z calibrated to the whole fit (DP-SGD's at r z,
    ``sgd_noise_ratio`` r; 1 by default, the public code's choice).

    Privacy: ``fit`` is node-level (eps, delta)-DP (add/remove one node with its features, label and
    edges) over graphs whose degrees are at most D (:mod:`graphpriv.methods.node_level_aggregation`;
    docs/privacy.md has the proof and why a graph above D is not covered: the report says when
    the fitted graph was). The guarantee covers the released model (``encoder_``,
    ``classifier_``); predictions on the fitted graph read every node's own aggregates, which the
    guarantee covers for the other nodes (each node's prediction is a function of the model and of
    its own noisy rows: releasing it to that node is joint DP). ``aggregates_`` and the saved file
    hold every node's own rows, which it does not cover for that node: keep them as private as the
    graph.

    Args, Attributes: as :class:`GAPClassifier` (``info_`` adds ``within_degree_bound``,
    ``sgd_noise_multiplier``, ``sgd_noise_std`` and ``steps``; ``noise_multiplier_`` is the hops' z).

    Raises:
        ConfigError: an unknown hyperparameter or an invalid value (``max_degree`` < 1,
            ``private=False``, ``batch_norm=True``).
    """

    config_cls = GAPNodeConfig

    def _budget(self, num_train: int, info: dict) -> NodeBudget:
        config = self._config
        phases = {"encoder": config.encoder_epochs} if config.encoder_layers else {}
        return node_budget(config, num_train, {**phases, "classifier": config.epochs}, config.hops, info)

    def _train(self, module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], y: torch.Tensor, *, phase: str,
               epochs: int, budget: NodeBudget, progress: Progress, audit_hook: AuditHook | None,
               validation: Callable[[], float] | None, info: dict) -> None:
        """DP-SGD (``validation`` is always None: the config refuses ``best_val`` at node level)."""
        train_dp_sgd(module, inputs, y, config=self._config, budget=budget, phase=phase,
                     seed=stream_seed(self.random_state, f"dp-sgd {phase}"), progress=progress, audit_hook=audit_hook)

    def _aggregations(self) -> str:
        return f"the {self._config.hops} hops"
