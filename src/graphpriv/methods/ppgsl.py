"""``ppgsl``: learned graph publishing against sensitive link inference, as an estimator.

Source: Wu, Yang, Han, Wang, Wu, "Learning-based Privacy-Preserving Graph Publishing Against
Sensitive Link Inference Attacks" (IEEE TKDE 2025), Sec. III (Eq. 5-11, Algorithm 1); the learner is
:func:`graphpriv.publishing.ppgsl.ppgsl`. :class:`PPGSL` releases a graph from the publisher's
graph and the sensitive links it protects; the sensitive-link protocol that attacks the release
and measures its utility is :func:`graphpriv.evaluation.publishing.run_ppgsl`. No DP guarantee
(empirical: attack AUC on the sensitive links near 0.5).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from graphpriv.methods.publisher import GraphPublisher, PublishConfig
from graphpriv.publishing.ppgsl import PPGSLSettings, ppgsl

__all__ = ["PPGSL", "PPGSLConfig"]


class PPGSLConfig(PublishConfig):
    """PPGSL hyperparameters (paper Sec. V-A.6; graphpriv's defaults: sparse, k = 1, mu = 50, SITP, and
    the utility term normalised by ||A||_F^2 with alpha = 0.4, docs/ppgsl.md; the registry preset
    ``paper`` gives Eq. 8 as written with the paper's alpha = 0.005)."""

    alpha: float = Field(0.4, ge=0, description="utility weight alpha of Eq. 9 (on the normalised loss; the "
                         "paper's [0, 0.01] is on its sum: utility_normalisation=none)")
    utility_normalisation: Literal["edges", "none"] = Field(
        "edges", description="edges: L_util / ||A||_F^2 (= 2|E|), a mean like L_priv, so one alpha is one trade-off "
                             "on every graph; none: the paper's Eq. 8 (a sum over entries)")
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

    def settings(self) -> PPGSLSettings:
        """The learner's :class:`~graphpriv.publishing.ppgsl.PPGSLSettings` of these hyperparameters."""
        return PPGSLSettings(alpha=self.alpha, utility_normalisation=self.utility_normalisation,
                             parameterization=self.parameterization, k=self.k, mu=self.mu,
                             protocol=self.protocol, head=self.head, tau=self.tau,
                             learner_steps=self.learner_steps, surrogate_epochs=self.surrogate_epochs,
                             learner_lr=self.learner_lr, surrogate_lr=self.surrogate_lr,
                             fgp_max_bytes=int(self.fgp_max_gib * 2**30))


class PPGSL(GraphPublisher):
    """PPGSL: learn a graph A' against a surrogate link-inference attacker, release A'' ~ Bernoulli(A').

    Source: Wu et al., "Learning-based Privacy-Preserving Graph Publishing Against Sensitive Link
    Inference Attacks" (IEEE TKDE 2025), Sec. III: the learner H_theta (sparse or full-graph
    parameterization, Eq. 6), the surrogate GCN attacker (Eq. 5), the loss L_priv + alpha L_util
    (Eq. 7-9), the SITP or ADV schedule (Eq. 10-11), Bernoulli sampling (Sec. III-B.5). No
    differential-privacy guarantee: ``privacy_report_`` is None.

    ``fit`` / ``publish`` need ``sensitive_links`` (``[2, S]``, the links to hide, which must not
    be edges of the input graph: remove them first). The features ``x`` (when ``use_features``)
    feed the surrogate and are released with the graph.

    Args:
        alpha, utility_normalisation, parameterization, k, mu, protocol, head, tau, learner_steps, surrogate_epochs,
        learner_lr, surrogate_lr, fgp_max_gib: see :class:`PPGSLConfig`. use_features: use and
        release ``x`` (True). random_state: seed of the candidates, the initialisation, the
        surrogate's draws and the sampling. Other fields of :class:`PPGSLConfig` are protocol
        settings.

    Attributes:
        released_: the sampled release A'' (:class:`~graphpriv.data.release.PublishedGraph`).
        weights_: ``(pairs [2, P] int64, w [P] float32)``: the learned A' (positive entries), or
            None on a loaded estimator (not saved: it is closer to the input graph than the release).
        history_: per learner step ``{"step", "priv", "util", "loss"}``, and ``{"step",
            "surrogate_loss"}`` after each surrogate update.
        num_parameters_: the size of theta.

    Raises (fit):
        DatasetError: no sensitive links, or sensitive links that are edges of the input.
        ConfigError: FGP beyond ``fgp_max_gib``.
    """

    config_cls = PPGSLConfig
    needs_sensitive_links = True

    def _release(self, graph, sensitive, progress, noise_scale=1.0):
        out = ppgsl(graph.pairs, graph.num_nodes, sensitive, graph.x, settings=self._config.settings(),
                    seed=self.random_state, progress=progress)
        self.weights_ = out.weights
        self.history_ = out.history
        self.num_parameters_ = out.num_parameters
        return out.published, None

    def _get_state(self) -> dict[str, Any]:
        return {**super()._get_state(), "history": [dict(h) for h in self.history_],
                "num_parameters": int(self.num_parameters_)}

    def _set_state(self, state: dict[str, Any]) -> None:
        super()._set_state(state)
        self.history_ = [dict(h) for h in state["history"]]
        self.num_parameters_ = int(state["num_parameters"])
        self.weights_ = None
