"""``ppgsl``: learned graph publishing against sensitive link inference (specs/ppgsl.md).

The run follows the sensitive-link protocol of the baselines (:mod:`graphpriv.methods.publishing`):
the learner starts from G minus E_s and the LP test edges, protects E_s, and the Bernoulli-sampled
release is attacked and its utility measured on the same split. No DP guarantee (empirical).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field
from torch_geometric.data import Data

from graphpriv.data.validation import IF_PRESENT, check_data, check_seed
from graphpriv.methods.base import Progress, Result, Timer, no_progress
from graphpriv.methods.publishing import PublishConfig, evaluate_release, sensitive_protocol
from graphpriv.publishing.ppgsl import PPGSLSettings, ppgsl

__all__ = ["PPGSLConfig", "run"]


class PPGSLConfig(PublishConfig):
    """PPGSL hyperparameters (paper Sec. V-A.6; spec defaults: sparse, k = 1, mu = 50, SITP)."""

    alpha: float = Field(0.005, ge=0, description="utility weight alpha of Eq. 9 (paper: [0, 0.01])")
    parameterization: Literal["sparse", "fgp"] = "sparse"
    k: int = Field(1, ge=0, description="sampled non-edge candidates per edge (sparse)")
    mu: int = Field(50, ge=1, description="surrogate update interval (PPGSL-skip)")
    protocol: Literal["sitp", "adv"] = "sitp"
    head: Literal["cos", "inner", "mlp"] = "cos"
    tau: float = Field(5.0, gt=0, description="cos-head temperature (the paper's is 1)")
    learner_steps: int = Field(500, ge=0, description="N2")
    surrogate_epochs: int = Field(100, ge=1, description="N1")
    learner_lr: float = Field(0.5, gt=0)
    surrogate_lr: float = Field(0.01, gt=0)
    fgp_max_gib: float = Field(8.0, gt=0, description="FGP refuses graphs needing more (N x N state)")


def run(config: PPGSLConfig, data: Data, *, seed: int, method: str = "ppgsl",
        progress: Progress = no_progress) -> Result:
    """Learn, sample and evaluate a PPGSL release.

    Returns:
        :class:`Result` with the protocol's metrics, the release attached, and info (parameters,
        final losses, surrogate losses). No privacy report: the guarantee is empirical.

    Raises:
        DatasetError: no sensitive links, or sensitive links still edges of the input.
        ConfigError: FGP beyond ``fgp_max_gib``.
    """
    data = check_data(data, needs_features=config.use_features and IF_PRESENT, needs_labels=IF_PRESENT,
                      method=method)
    seed = check_seed(seed)
    timer = Timer()
    protocol = sensitive_protocol(config, data, seed, timer)
    settings = PPGSLSettings(alpha=config.alpha, parameterization=config.parameterization, k=config.k,
                             mu=config.mu, protocol=config.protocol, head=config.head, tau=config.tau,
                             learner_steps=config.learner_steps, surrogate_epochs=config.surrogate_epochs,
                             learner_lr=config.learner_lr, surrogate_lr=config.surrogate_lr,
                             fgp_max_bytes=int(config.fgp_max_gib * 2**30))
    with timer.phase("learning"):
        out = ppgsl(protocol.input_graph.pairs, protocol.num_nodes, protocol.sensitive_links, protocol.x,
                    settings=settings, seed=seed, progress=progress)
    steps = [h for h in out.history if "loss" in h]
    info = {"num_parameters": out.num_parameters, "learned_positive_pairs": int(out.weights[1].size),
            "learned_weight_sum": float(np.sum(out.weights[1])),
            "final_priv_loss": steps[-1]["priv"] if steps else None,
            "final_util_loss": steps[-1]["util"] if steps else None,
            "surrogate_losses": [h["surrogate_loss"] for h in out.history if "surrogate_loss" in h]}
    return evaluate_release(config, protocol, out.published, method=method, seed=seed, timer=timer, ledger=None,
                     info=info)
