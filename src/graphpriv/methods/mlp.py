"""Feature-only node classifiers: ``mlp`` (non-private) and ``dp-mlp`` (DP-SGD; DPAR's "Features").

Source: DPAR (Zhang et al., WWW 2024), Sec. 5 baselines ("Features": DP-SGD on the node
features alone, no graph); specs/dpar.md. Same inductive 80/20 split, 2-layer MLP (hidden 32),
optimiser and epochs as DPAR, but every training node is used (no q' node sampling) and the test
prediction uses no edges. One node's data reaches one training example (its own row), so
``dp-mlp`` is node-level (eps, delta)-DP (add/remove) by ordinary Poisson DP-SGD: noise std z C,
RDP of ``PoissonSampledDpEvent(q, GaussianDpEvent(z))`` composed over the steps.
"""

from __future__ import annotations

from typing import Literal

import scipy.sparse as sp
import torch
from dp_accounting import dp_event
from pydantic import Field
from torch_geometric.data import Data

from graphpriv.data.splits import node_split
from graphpriv.data.validation import check_data, check_seed
from graphpriv.methods.base import MethodConfig, Progress, Result, Timer, no_progress
from graphpriv.methods.dpar import evaluate, steps_and_rate, train_rows
from graphpriv.privacy.accountant import Ledger, check_delta
from graphpriv.privacy.calibration import calibrate_noise_multiplier, quiet_absl
from graphpriv.privacy.sampling import PoissonSampler
from graphpriv.privacy.units import PrivacyUnit

__all__ = ["MLPConfig", "run"]


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
    alpha: float = Field(0.25, gt=0, lt=1, description="unused (no propagation); kept for evaluate()")


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


def run(config: MLPConfig, data: Data, *, seed: int, method: str = "dp-mlp", progress: Progress = no_progress) -> Result:
    """One run; metrics ``accuracy`` on the test nodes; privacy report for ``dp-mlp``.

    Raises:
        DatasetError: no features or labels. BudgetExceededError: the budget cannot be met.
    """
    data = check_data(data, needs_features=True, needs_labels=True, method=method)
    seed = check_seed(seed)
    private = config.private and method != "mlp"
    timer = Timer()
    x = torch.as_tensor(data.x, dtype=torch.float32)
    y = torch.as_tensor(data.y, dtype=torch.long)
    split = node_split(data, train_ratio=1 - config.test_ratio, seed=seed, inductive=True)
    train = split.train_idx[y.numpy()[split.train_idx] >= 0]  # unlabelled nodes (label -1) left out
    steps, rate = steps_and_rate(train.size, config.epochs, config.batch_size)
    noise_std, ledger, event, info = None, None, None, {"train_nodes": int(train.size), "steps": steps}
    if private:
        z, _, _, _ = calibrated_noise(config, train.size)
        event = PoissonSampler(train.size, rate, generator=torch.Generator()).step_event(z)
        noise_std = z * config.max_grad_norm
        ledger = Ledger(PrivacyUnit.NODE, delta=config.delta)
        info.update(noise_multiplier=z)
    with timer.phase("training"):
        model = train_rows(x[train], y[train], sp.identity(train.size, format="csr"), num_classes=int(y.max()) + 1,
                           config=config, steps=steps, sample_rate=rate, noise_std=noise_std, seed=seed,
                           on_step=(lambda: ledger.spend(event, phase="dp-sgd", noise_multiplier=z)) if private
                           else None, progress=progress)
    with timer.phase("inference"):
        accuracy = evaluate(model, x, y, split, config)
    privacy = None
    if private:
        with quiet_absl():
            privacy = ledger.report(target_epsilon=config.epsilon, notes=[(
                "node-level add/remove: a node's features and label reach only its own training row; the "
                "model uses no edges")])
    return Result(method=method, dataset=str(getattr(data, "name", "graph")), seed=seed,
                  config=config.model_dump(mode="json"), metrics={"accuracy": accuracy}, privacy=privacy,
                  timings=timer.finish(), info=info)

