"""Feature-only node classifier: :class:`MLPClassifier` (``private=True``: DP-SGD, DPAR's
"Features" baseline, method id ``dp-mlp``; ``private=False``: plain training, id ``mlp``).

Source: Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with Node-Level
Differential Privacy" (WWW 2024), Sec. 4 baselines ("Features": DP-SGD on the node features
alone, no graph). DPAR's 2-layer MLP (hidden 32), optimiser and epochs, but every training node is used (no
q' node sampling) and prediction uses no edges. One node's data reaches one training example (its
own row), so the private fit is node-level (eps, delta)-DP (neighbouring graphs differ by one node
added or removed) by ordinary Poisson DP-SGD: noise std z C, RDP of
``PoissonSampledDpEvent(q, GaussianDpEvent(z))`` composed over the steps. The protocol (inductive
split, test accuracy) is :mod:`graphpriv.evaluation.node`.
"""

from __future__ import annotations

from typing import Literal

import scipy.sparse as sp
import torch
from dp_accounting import dp_event
from pydantic import Field
from torch_geometric.data import Data

from graphpriv.methods.base import MethodConfig, Progress, Timer, no_progress
from graphpriv.methods.node_classifier import NodeClassifier, steps_and_rate, train_rows
from graphpriv.privacy.accountant import Ledger, check_delta
from graphpriv.privacy.calibration import calibrate_noise_multiplier, quiet_absl
from graphpriv.privacy.hooks import AuditHook, noise_scale_of
from graphpriv.privacy.sampling import PoissonSampler
from graphpriv.privacy.units import PrivacyUnit

__all__ = ["MLPClassifier", "MLPConfig", "calibrated_noise", "calibrated_noise_epsilon"]


class MLPConfig(MethodConfig):
    """The feature-only baseline's hyperparameters (DPAR's training settings)."""

    epsilon: float = Field(8.0, gt=0, description="node-level epsilon (dp-mlp)")
    delta: float = Field(1e-4, gt=0, lt=1, description="below 1 / N up to 10,000 nodes")
    private: bool = True
    hidden: int = Field(32, ge=1)
    dropout: float = Field(0.1, ge=0, lt=1)
    weight_decay: float = Field(1e-4, ge=0)
    lr: float = Field(0.005, gt=0)
    epochs: int = Field(200, ge=1)
    batch_size: int = Field(60, ge=1)
    max_grad_norm: float = Field(1.0, gt=0)
    test_ratio: float = Field(0.2, gt=0, lt=1)
    prop_steps: Literal[0] = Field(0, description="no propagation: features only")
    alpha: float = Field(0.25, gt=0, lt=1, description="unused (no propagation); kept so stored configs keep "
                         "their hash")


def calibrated_noise(config: MLPConfig, num_rows: int) -> tuple[float, int, float, float]:
    """(noise multiplier z, steps, sampling rate, accounted epsilon) of dp-mlp on ``num_rows``
    training nodes: Poisson DP-SGD calibrated by the RDP accountant to ``config.epsilon``."""
    steps, rate = steps_and_rate(num_rows, config.epochs, config.batch_size)
    check_delta(config.delta)

    def whole(z: float) -> dp_event.DpEvent:
        return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(z)), steps)
    with quiet_absl():
        z = calibrate_noise_multiplier(whole, target_epsilon=config.epsilon, delta=config.delta)
    return z, steps, rate, calibrated_noise_epsilon(z, steps, rate, num_rows, config.delta)


def calibrated_noise_epsilon(noise_multiplier: float, steps: int, rate: float, num_rows: int, delta: float) -> float:
    """The accountant's epsilon at ``delta`` of dp-mlp's DP-SGD with this noise and schedule."""
    with quiet_absl():
        ledger = Ledger(PrivacyUnit.NODE, delta=delta)
        ledger.spend(PoissonSampler(num_rows, rate, generator=torch.Generator()).step_event(noise_multiplier),
                     phase="dp-sgd", count=steps)
        return ledger.epsilon()


class MLPClassifier(NodeClassifier):
    """A 2-layer MLP on node features alone (DPAR's "Features" baseline, WWW 2024, Sec. 4), as an
    estimator.

    Privacy: ``private=True`` (default): ``fit`` is node-level (eps, delta)-DP for the training
    nodes it is given (neighbouring graphs differ by one node added or removed; a node's features
    and label reach only its own training row, and no edge is read): Poisson DP-SGD, each row's
    gradient clipped to ``max_grad_norm``, the noise calibrated by the RDP accountant to
    ``epsilon`` at ``delta``. ``private=False``: Adam on shuffled minibatches, no DP. The
    guarantee covers the model weights (``model_``); ``info_`` keeps the exact number of training
    nodes (and the steps derived from it), which it does not cover, and so does the saved file:
    keep it as private as that count.

    Args:
        random_state: seed of the initialisation, the batches and the DP-SGD noise.
        **params: :class:`MLPConfig` fields (``epsilon``, ``delta``, ``private``, ``epochs``, ...).

    Attributes:
        See :class:`~graphpriv.methods.node_classifier.NodeClassifier`; ``info_`` holds ``train_nodes``,
        ``steps`` and (private) ``noise_multiplier``.

    Raises:
        ConfigError: an unknown hyperparameter or an invalid value.
    """

    config_cls = MLPConfig

    def fit(self, data: Data, train_nodes: object = None, *, num_classes: int | None = None,
            progress: Progress | None = no_progress, audit_hook: AuditHook | None = None) -> MLPClassifier:
        """Train on the features and labels of ``train_nodes`` of ``data``.

        Args:
            data: a ``Data`` with ``x [N, F]`` and ``y [N]`` (class ids, -1: unlabelled); edges are
                not read (``edge_index`` may be absent).
            train_nodes: ``[T]`` labelled node ids (default: every labelled node).
            num_classes: C, the output width (default: the largest label of ``data.y`` + 1).
            progress: called after every training step (``None``: no progress).
            audit_hook: for a privacy audit only (:mod:`graphpriv.audit`): its ``noise_scale``
                multiplies the DP-SGD noise std while the ledger still spends the calibrated
                steps (a deliberate fault). None (default) for a real fit.

        Returns:
            ``self``, fitted (``ledger_``: the fit's ledger, None when not private).

        Raises:
            DatasetError: missing or unusable features or labels, bad training nodes.
            BudgetExceededError: no noise meets the budget.
        """
        data, x, y, train, classes = self._fit_inputs(data, train_nodes, num_classes, edges=False)
        progress = progress or no_progress
        config = self._config
        private = config.private
        timer = Timer()
        steps, rate = steps_and_rate(train.size, config.epochs, config.batch_size)
        z, ledger, info = None, None, {"train_nodes": int(train.size), "steps": steps}
        if private:
            z, _, _, _ = calibrated_noise(config, train.size)
            ledger = Ledger(PrivacyUnit.NODE, delta=config.delta)
            info.update(noise_multiplier=z)
        with timer.phase("training"):
            model = train_rows(x[train], y[train], sp.identity(train.size, format="csr"), num_classes=classes,
                               config=config, steps=steps, sample_rate=rate, seed=self.random_state,
                               noise_multiplier=z, ledger=ledger, progress=progress,
                               noise_scale=noise_scale_of(audit_hook))
        privacy = None
        if private:
            with quiet_absl():
                privacy = ledger.report(target_epsilon=config.epsilon, notes=[(
                    "node-level add/remove: a node's features and label reach only its own training row; the "
                    "model uses no edges")])
        self._keep(model, x.shape[1], classes, info, timer)
        self.ledger_ = ledger
        return self._fitted(privacy)
