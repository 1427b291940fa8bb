"""ProGAP with edge-level DP: :class:`ProGAPClassifier` (``private=True``: ProGAP-EDP; ``private=False``:
ProGAP-INF).

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
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from pydantic import Field
from torch_geometric.data import Data

from graphpriv.methods.base import Progress, Timer, no_progress, phase_progress
from graphpriv.methods.transductive_classifier import (
    AggregationPerturbationConfig,
    TransductiveClassifier,
    aggregation_budget,
    aggregation_report,
    train_full_batch,
)
from graphpriv.nn.progap import ProgressiveModel
from graphpriv.propagation.aggregation_perturbation import (
    noisy_aggregate,
)

__all__ = ["ProGAPClassifier", "ProGAPConfig"]


class ProGAPConfig(AggregationPerturbationConfig):
    """ProGAP's hyperparameters: the paper's code's defaults (depth 2, hidden 16, 1-layer bases and
    heads, jumping knowledge by concatenation, SELU with batch normalisation, no dropout, 100
    epochs per stage, Adam at lr 0.01), full-batch training."""

    depth: int = Field(2, ge=1, description="aggregations (stages - 1)")


class ProGAPClassifier(TransductiveClassifier):
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
            ``info_`` holds ``train_nodes`` and the noise, no fact of the edges.

    Raises:
        ConfigError: an unknown hyperparameter or an invalid value.
    """

    config_cls = ProGAPConfig
    _fitted_private = ("_x",)

    def fit(self, data: Data, train_nodes: object = None, *, num_classes: int | None = None,
            progress: Progress | None = no_progress) -> ProGAPClassifier:
        """Train the stages one after the other, releasing an aggregate between them.

        Args:
            data: a ``Data`` with ``x [N, F]``, ``y [N]`` (-1: unlabelled), ``edge_index``.
            train_nodes: ``[T]`` labelled node ids (default: every labelled node).
            num_classes: C (default: the largest label + 1). progress: phases ``stage 0`` ..
                ``stage depth``.

        Returns:
            ``self``, fitted.

        Raises:
            DatasetError: missing features or labels, unusable training nodes.
            BudgetExceededError: no noise meets the budget.
        """
        progress = progress or no_progress
        config = self._config
        data, x, y, train, classes = self._fit_inputs(data, train_nodes, num_classes)
        timer = Timer()
        info = {"train_nodes": int(train.size)}  # no edge count: it is what the guarantee hides
        ledger, z = aggregation_budget(config, config.depth, info)
        torch.manual_seed(self.random_state)
        model = ProgressiveModel(x.shape[1], config.hidden, classes, num_stages=config.depth + 1,
                                 base_layers=config.base_layers, head_layers=config.head_layers,
                                 dropout=config.dropout, batch_norm=config.batch_norm)
        generator = torch.Generator().manual_seed(self.random_state + 2)
        index = torch.from_numpy(train)
        xs, edge_index = [x], data.edge_index.long()
        for stage in range(config.depth + 1):
            with timer.phase(f"stage {stage}"):
                if stage:
                    with torch.no_grad():
                        model.eval()
                        embedding = model(xs, stage - 1)[0]
                    xs.append(noisy_aggregate(F.normalize(embedding, p=2.0, dim=-1), edge_index, noise_multiplier=z,
                                              generator=generator, ledger=ledger))
                inputs = [t[index] for t in xs]
                train_full_batch(model, lambda inputs=inputs, stage=stage: model(inputs, stage)[1], y[index],
                                 epochs=config.epochs, lr=config.lr, weight_decay=config.weight_decay,
                                 progress=phase_progress(progress, f"stage {stage}"),
                                 parameters=model.stage_parameters(stage))
        privacy = None
        if ledger is not None:
            privacy, directed = aggregation_report(ledger, config, z, config.depth,
                                                   where="the aggregations between stages",
                                                   rest="the stages' training is post-processing")
            info["epsilon_directed"] = directed
        self.model_ = model.eval()
        self.aggregates_ = xs[1:]
        self.noise_multiplier_ = float(z)
        self.n_features_in_, self.n_classes_ = int(x.shape[1]), classes
        self.info_, self.timings_ = info, dict(timer.timings)
        self.ledger_ = ledger
        self._x = x
        return self._fitted(privacy)

    def _logits_of(self, data: Data | None, index_of) -> torch.Tensor:
        """The last stage on the fitted graph's aggregates (``data=None``: no new privacy spent), or
        on ``data``'s, computed afresh with the fitted noise multiplier (a new release of it)."""
        depth = self._config.depth
        with torch.no_grad():
            if data is None:
                xs = [self._x, *self.aggregates_]
            else:
                xs, edge_index = [torch.as_tensor(data.x, dtype=torch.float32)], data.edge_index.long()
                generator = torch.Generator().manual_seed(self.random_state + 3)
                for stage in range(1, depth + 1):
                    embedding = self.model_(xs, stage - 1)[0]
                    xs.append(noisy_aggregate(F.normalize(embedding, p=2.0, dim=-1), edge_index,
                                              noise_multiplier=self.noise_multiplier_, generator=generator))
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
