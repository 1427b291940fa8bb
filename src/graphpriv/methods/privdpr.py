"""PrivDPR and DPR: node-level DP synthetic graphs from a deep PageRank, as an estimator.

Source: Zhang, Hu, Ye, Xu, "PrivDPR: Synthetic Graph Publishing with Deep PageRank under
Differential Privacy" (KDD 2025): Algorithm 2 lines 1-12 train the node embeddings V with
Gaussian noise on V's summed gradient (:func:`graphpriv.synthesis.privdpr.train_embeddings`;
sensitivity by Theorem 4.2 and Eq. 13); lines 13-18 generate the synthetic graph from V V^T
(:mod:`graphpriv.synthesis.generation`, post-processing). Method ids: ``privdpr`` (with noise) and
``dpr`` (``private=False``: the same model without noise, no guarantee)::

    est = PrivDPR(epsilon=3.2, random_state=0).fit(data)   # trains V on data's graph
    synthetic = est.generate()                             # a PyG Data: the synthetic graph
    est.embeddings_, est.privacy_report_, est.released_    # V, the node-level report, the release

``fit`` is the mechanism only. Judging a synthetic graph (the 80/20 edge split, the structural
errors, link-prediction AUC, node-classification F1 and link-inference attacks) is the synthesis
protocol's work: :mod:`graphpriv.evaluation.synthesis`; the config fields ``test_ratio``,
``evaluate`` and ``attacks`` are read by that protocol only.

The target edge count (``edge_count``): ``input`` (default) reads the fitted graph's |E| and *says
so* (the paper's behaviour; that count is private data and the privacy report's notes state that
it is treated as a public parameter, outside the guarantee); ``public`` takes ``num_edges`` from
the caller; ``model`` counts pairs with sigmoid(v_i . v_j) > 0.5, a function of V only (covered by
the guarantee, but with a weakly trained V about a quarter of all pairs: 1.8M edges for Cora's
4,222, docs/privdpr.md).

Graphs are undirected: graphpriv's loaders symmetrise directed edge lists (p2p_gnutella08), so the
walks follow undirected edges and d_in = d_out = degree.

Privacy audits (:mod:`graphpriv.audit.privdpr`) run this ``fit`` itself, through
``fit(..., audit_hook=AuditHook(...))`` (:class:`graphpriv.privacy.hooks.AuditHook`): white-box
gradient canaries in extra rows of V and a deliberate noise fault; without a hook ``fit`` is the
release a user gets.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

import numpy as np
import torch
from pydantic import Field, model_validator
from torch_geometric.data import Data

from graphpriv.attacks.suite import resolve_attacks
from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.data.release import PublishedGraph
from graphpriv.data.validation import check_data, check_seed
from graphpriv.errors import ConfigError
from graphpriv.methods.base import MethodConfig, Progress, no_progress
from graphpriv.methods.estimator import Estimator
from graphpriv.privacy.hooks import AuditHook, noise_scale_of
from graphpriv.privacy.units import Accounting
from graphpriv.synthesis.deep_pagerank import check_gradient_bound
from graphpriv.synthesis.generation import assemble_graph, score_counts
from graphpriv.synthesis.privdpr import train_embeddings

__all__ = ["PrivDPR", "PrivDPRConfig", "check_gradient_bound", "generate_pairs"]


class PrivDPRConfig(MethodConfig):
    """PrivDPR's hyperparameters (the paper's defaults) and the synthesis protocol's (``test_ratio``,
    ``evaluate``, ``attacks``: read by :mod:`graphpriv.evaluation.synthesis` only)."""

    epsilon: float = Field(3.2, gt=0, description="node-level epsilon (bounded: replace one node)")
    delta: float = Field(1e-5, gt=0, lt=1)
    accounting: Accounting = Accounting.RIGOROUS
    private: bool = Field(True, description="False: DPR, no noise and no guarantee")
    s_grad: float = Field(5.0, gt=0, description="preset sensitivity S_grad of a step's summed gradient")
    epochs: int = Field(5, ge=1)
    batch_nodes: int = Field(16, ge=1, description="b, walk starts per step")
    num_walks: int = Field(2, ge=1, description="R_wn")
    walk_length: int = Field(16, ge=1, description="R_wl")
    r: int = Field(128, ge=1, description="embedding width of V")
    d: int = Field(64, ge=1, description="hidden width of f")
    s: float = Field(8.0, description="weight normalisation W / (s ||W||_2), s > 1")
    lr: float = Field(1e-3, gt=0)
    adam_eps: float = Field(1e-8, gt=0, description="Adam's epsilon (V's true gradients are ~1e-14)")
    gamma: float = Field(0.85, gt=0, lt=1, description="PageRank damping")
    samples_per_node: int = Field(50, ge=1, description="softmax draws per node for the score counts")
    temperature: float = Field(0.5, gt=0)
    edge_count: Literal["model", "public", "input"] = "input"
    num_edges: int | None = Field(None, ge=1, description="the public edge count (edge_count = public)")
    test_ratio: float = Field(0.2, gt=0, lt=1, description="real edges held out for link prediction")
    evaluate: bool = Field(True, description="structural errors, LP AUC and (labels) NC micro-F1")
    attacks: str = Field("none", description="link-inference attacks on the synthetic graph: 'none', 'all' or ids")

    @model_validator(mode="after")
    def _check(self) -> PrivDPRConfig:
        if self.s <= 1:
            raise ConfigError(f"'s' must be > 1 (got {self.s}): W / (s ||W||_2) must shrink the gradient")
        if self.attacks.strip() != "none":
            resolve_attacks(self.attacks)  # raises ConfigError with the known ids
        if self.edge_count == "public" and self.num_edges is None:
            raise ConfigError("edge_count = 'public' needs num_edges (a public number, not read from the graph)")
        return self


def _training_kwargs(config: PrivDPRConfig, *, private: bool, seed: int, gradient_bound: str = "paper") -> dict:
    """The keyword arguments of :func:`graphpriv.synthesis.privdpr.train_embeddings` for ``config``
    (epsilon None when ``private`` is False: ``dpr``) and the estimator's ``gradient_bound``."""
    return {"epsilon": config.epsilon if private else None, "delta": config.delta, "accounting": config.accounting,
            "s_grad": config.s_grad, "epochs": config.epochs, "batch_nodes": config.batch_nodes,
            "num_walks": config.num_walks, "walk_length": config.walk_length, "r": config.r, "d": config.d,
            "s": config.s, "lr": config.lr, "gamma": config.gamma, "adam_eps": config.adam_eps, "seed": seed,
            "gradient_bound": gradient_bound}


def generate_pairs(V: torch.Tensor, config: PrivDPRConfig, *, seed: int, input_edges: int | None = None,
                   num_edges: int | None = None) -> tuple[np.ndarray, int, int]:
    """Graph generation from V (post-processing: no privacy spent), with ``seed``'s draws.

    Args:
        V: ``[N, r]`` released embeddings. config: ``samples_per_node``, ``temperature``,
            ``edge_count``, ``num_edges``. seed: the generation's seed (the score counts draw from
            ``torch.Generator().manual_seed(seed + 7919)``, the assembly from numpy
            ``default_rng([seed, 173])``). input_edges: the fitted graph's |E|, read only when
            ``edge_count = 'input'`` (the paper's generation, outside the guarantee).
        num_edges: a target edge count (>= 1) that replaces the one ``edge_count`` gives.

    Returns:
        ``(pairs, target, model_edges)``: the synthetic graph's undirected edges ``[2, E']`` (u < v,
        E' = min(target, pairs with a non-zero score)), the target edge count used, and the model's
        own count.

    Raises:
        ConfigError: ``edge_count = 'input'`` without ``input_edges`` (and no ``num_edges``).

    Source: Zhang et al., "PrivDPR: Synthetic Graph Publishing with Deep PageRank under
    Differential Privacy" (KDD 2025), Algorithm 2 lines 13-18 (:mod:`graphpriv.synthesis.generation`).
    """
    if num_edges is None and config.edge_count == "input" and input_edges is None:
        raise ConfigError("edge_count = 'input' needs the training graph's edge count (input_edges)")
    counts, model_edges = score_counts(V, samples_per_node=config.samples_per_node, temperature=config.temperature,
                                       generator=torch.Generator().manual_seed(seed + 7919))
    if num_edges is not None:
        target = num_edges
    else:
        target = {"model": model_edges, "public": config.num_edges, "input": input_edges}[config.edge_count]
    pairs = assemble_graph(counts, max(1, int(target)), rng=np.random.default_rng([seed, 173]))
    return pairs, int(target), int(model_edges)


def _plain(value: Any) -> Any:
    """JSON for numpy scalars and arrays in ``info_``."""
    return value.tolist() if isinstance(value, (np.ndarray, np.generic)) else str(value)


class PrivDPR(Estimator):
    """PrivDPR: node embeddings V of a deep PageRank trained with noise, and graphs generated from V.

    ``fit`` runs Algorithm 2 lines 1-12 on the given graph: b walk starts per step, R_wn walks of
    length R_wl each, the pair loss of the deep PageRank f(V) with weight-normalised layers (depth
    chosen so that a step's summed V-gradient is bounded by S_grad / T, Eq. 13), and Gaussian noise
    on that gradient before Adam's step (``private``); W is trained too but never released.
    ``generate`` is lines 13-18: score counts from softmax(v_i . v_j / temperature), then NetGAN's
    assembly to the target edge count. Source: Zhang, Hu, Ye, Xu, "PrivDPR: Synthetic Graph
    Publishing with Deep PageRank under Differential Privacy" (KDD 2025), Sec. 4 and Algorithm 2.

    Privacy (``private=True``): node-level (epsilon, delta)-DP of V, bounded relation: neighbouring
    graphs differ by replacing one node and its edges (N is public); sensitivity 2 S_grad / T per
    step (replace-one doubles the paper's S_grad / T), the T Gaussian steps composed by the RDP
    accountant (``accounting='rigorous'``) or by the paper's sequential composition of (eps/T,
    delta/T) steps (``'paper'``). Generation is post-processing of V, except that
    ``edge_count='input'`` reads the fitted graph's |E|, which the report's notes state is treated
    as public. ``private=False`` (DPR) adds no noise: ``privacy_report_`` is None.

    ``gradient_bound='sigmoid'`` (method id ``privdpr-tight``) computes Eq. 13's depth with graphpriv's
    tighter bound, 1/(4s) per layer instead of Theorem 4.2's 1/s (sigmoid' <= 1/4): the same S_grad /
    T per step, the same noise, a shallower network (docs/privdpr.md, "A tighter bound").

    Args:
        gradient_bound: ``paper`` (default, Theorem 4.2) or ``sigmoid``; a constructor argument
            beside the hyperparameters, as DPAR's ``appr`` (it picks the variant).
        random_state: seed of the training's draws (walks, initial weights, noise) and the default
            seed of :meth:`generate`.
        **params: the fields of :class:`PrivDPRConfig` (``test_ratio``, ``evaluate`` and
            ``attacks`` are protocol settings, not read here).

    Attributes:
        embeddings_: V, ``[N, r]`` float32 tensor (the released model).
        num_nodes_: N. input_edges_: the fitted graph's |E| when ``edge_count='input'``, else None.
        info_: facts of the training (depth, iterations T, batch pairs B, noise multiplier and
            std, the edge-count source, losses, the mean true gradient norm and its bound, ...).
        privacy_report_: the node-level :class:`~graphpriv.privacy.report.PrivacyReport` (phase
            ``training``), None for DPR.
        ledger_: the fit's :class:`~graphpriv.privacy.accountant.Ledger` (what
            :meth:`~graphpriv.methods.estimator.Estimator.epsilon_at` composes at another delta);
            None for DPR and for an estimator read by :meth:`load` (a file keeps the report only).
        released_: the last graph :meth:`generate` returned, a
            :class:`~graphpriv.data.release.PublishedGraph` (not set before the first ``generate``).
        generation_info_: ``seed``, ``target_edges``, ``model_edges`` and ``synthetic_edges`` of
            that generation.

    Raises:
        ConfigError: an unknown hyperparameter or an invalid value (s <= 1, an unknown attack,
            ``edge_count='public'`` without ``num_edges``; at construction).
    """

    config_cls: ClassVar[type[MethodConfig]] = PrivDPRConfig
    variant_param = "gradient_bound"

    def __init__(self, gradient_bound: str = "paper", random_state: int | None = None, **params: Any) -> None:
        super().__init__(random_state=random_state, **params)
        self.gradient_bound = check_gradient_bound(gradient_bound)

    def _check_variant(self, value: Any, config: PrivDPRConfig) -> str:
        return check_gradient_bound(value)

    def fit(self, data: Data, progress: Progress = no_progress, *, audit_hook: AuditHook | None = None) -> PrivDPR:
        """Train V on the graph of ``data``; returns ``self``.

        Args:
            data: PyG ``Data`` with ``edge_index [2, E]`` (either or both directions; self-loops
                and duplicates are dropped), ``num_nodes`` N (at least ``batch_nodes``); features
                and labels are checked when present but not read (the model sees structure only).
            progress: called ``progress(epoch, epochs, loss=...)`` after every epoch.
            audit_hook: for privacy audits only (:mod:`graphpriv.audit.privdpr`; white box: what it
                reads is not part of the release). ``noise_scale`` multiplies the noise std of
                V's gradient while the ledger still claims the calibrated guarantee (a deliberate
                fault); ``canaries``, a :class:`graphpriv.synthesis.privdpr.GradientCanary`,
                gets extra rows of V after the N node rows (no walk visits them, so their true
                gradient is 0): each step it adds its own contribution to their part of the
                summed gradient, then observes that part with the step's noise, and it goes
                through V's Adam step; ``embeddings_`` keeps the N node rows only. None (default)
                or ``AuditHook()`` is the fit a user gets.

        Returns:
            ``self``, fitted (``embeddings_``, ``info_``, ``privacy_report_``, ``ledger_``).

        Raises:
            DatasetError: not a valid graph (no edges, ids out of range, non-finite features, ...;
                see :func:`~graphpriv.data.validation.check_data`).
            ConfigError: fewer nodes than ``batch_nodes`` (T = 0), a depth over 64 layers,
                ``edge_count='public'`` with ``num_edges`` above the N(N-1)/2 node pairs, or an
                ``audit_hook`` that is not an :class:`AuditHook` or whose canaries are not a
                ``GradientCanary``.
        """
        config = self._config
        _check_audit_hook(audit_hook)
        data = check_data(data, method=type(self).__name__)
        n = int(data.num_nodes)
        pairs = undirected_pairs(data.edge_index)
        if config.edge_count == "public" and config.num_edges > _max_pairs(n):
            raise ConfigError(f"num_edges={config.num_edges} is above the {_max_pairs(n)} node pairs of a graph "
                              f"with {n} nodes; lower num_edges")
        private = bool(config.private)
        trained = train_embeddings(to_csr(pairs, n), **_training_kwargs(config, private=private, seed=self.random_state,
                                                                      gradient_bound=self.gradient_bound),
                                   progress=progress, canary=None if audit_hook is None else audit_hook.canaries,
                                   noise_scale=noise_scale_of(audit_hook))
        notes: list[str] = []
        input_edges = None
        if config.edge_count == "input":
            input_edges = int(pairs.shape[1])
            notes.append(f"edge count: the training graph's |E| = {input_edges} was read and treated as public "
                         "(the paper's generation); it is not covered by the guarantee")
        info = {"depth": trained.depth, "iterations": trained.iterations, "batch_pairs": trained.batch_pairs,
                "noise_multiplier": trained.noise_multiplier, "noise_std": trained.noise_std,
                "edge_count_source": config.edge_count, **trained.info}
        report = None
        if trained.ledger is not None:
            if config.accounting == "paper":
                notes.append(f"paper accounting: T = {trained.iterations} Gaussian steps of (eps/T, delta/T) each, "
                             f"sequential composition; the RDP accountant gives eps = "
                             f"{trained.info['rdp_epsilon_of_this_noise']:.4g} for the same noise")
            notes.append("bounded node-level DP (replace one node and its edges; N public); sensitivity "
                         "2 S_grad / T per step (replace-one doubles the paper's S_grad / T)")
            if self.gradient_bound == "sigmoid":
                notes.append(f"depth L = {trained.depth} from Eq. 13 with graphpriv's tighter per-layer bound "
                             "1/(4s) (sigmoid' <= 1/4) instead of Theorem 4.2's 1/s; the same S_grad / T per step")
            report = trained.ledger.report(target_epsilon=config.epsilon, notes=notes)
        elif notes:
            info["notes"] = notes
        self.embeddings_ = trained.V.detach()
        self.num_nodes_, self.input_edges_, self.info_ = n, input_edges, info
        self.ledger_ = trained.ledger
        self.__dict__.pop("released_", None)
        self.__dict__.pop("generation_info_", None)
        return self._fitted(report)

    def generate(self, num_edges: int | None = None, seed: int | None = None) -> Data:
        """A synthetic graph generated from ``embeddings_`` (post-processing: no privacy spent).

        Args:
            num_edges: the target |E'| in [1, N(N-1)/2]; default: what ``edge_count`` gives (the
                model's count of pairs with v_i . v_j > 0, the public ``num_edges``, or the fitted
                graph's |E| for ``'input'``). The graph has fewer edges only when fewer pairs were
                drawn (``samples_per_node`` per node).
            seed: the generation's seed in [0, 2^32 - 1]; default ``random_state`` (the draws of a
                ``privdpr`` run with that seed). The same seed gives the same graph.

        Returns:
            PyG ``Data`` with ``edge_index [2, 2|E'|]`` int64 (every undirected edge in both
            directions, no self-loop) and ``num_nodes`` N (the fitted graph's node ids); it is
            also kept as ``released_``.

        Raises:
            NotFittedError: before ``fit``. ConfigError: ``num_edges`` not an integer in
                [1, N(N-1)/2], or a bad ``seed``.
        """
        self._check_fitted()
        n = self.num_nodes_
        if num_edges is not None:
            if isinstance(num_edges, bool) or not isinstance(num_edges, (int, np.integer)):
                raise ConfigError(f"num_edges must be an integer (got {type(num_edges).__name__} {num_edges!r})")
            if not 1 <= num_edges <= _max_pairs(n):
                raise ConfigError(f"num_edges must be in [1, {_max_pairs(n)}] (the node pairs of {n} nodes); "
                                  f"got {num_edges}")
            num_edges = int(num_edges)
        seed = self.random_state if seed is None else check_seed(seed)
        pairs, target, model_edges = generate_pairs(self.embeddings_, self._config, seed=seed,
                                                    input_edges=self.input_edges_, num_edges=num_edges)
        self.released_ = PublishedGraph(pairs, n)
        self.generation_info_ = {"seed": seed, "target_edges": target, "model_edges": model_edges,
                                 "synthetic_edges": self.released_.num_edges}
        return self.released_.to_data()

    # -- files --------------------------------------------------------------------------------------

    def _get_state(self) -> dict[str, Any]:
        state: dict[str, Any] = {"V": self.embeddings_.clone(), "num_nodes": self.num_nodes_,
                                 "input_edges": self.input_edges_, "info": json.dumps(self.info_, default=_plain)}
        if "released_" in self.__dict__:
            state["released"] = torch.from_numpy(self.released_.pairs.copy())
            state["generation"] = json.dumps(self.generation_info_)
        return state

    def _set_state(self, state: dict[str, Any]) -> None:
        V = state["V"]
        if not isinstance(V, torch.Tensor) or V.ndim != 2 or V.shape[0] != int(state["num_nodes"]):
            raise ValueError("V must be a [N, r] tensor")
        self.embeddings_ = V.to(torch.float32)
        self.num_nodes_ = int(state["num_nodes"])
        self.input_edges_ = None if state["input_edges"] is None else int(state["input_edges"])
        self.info_ = json.loads(state["info"])
        self.ledger_ = None  # a file keeps the privacy report, not the ledger
        if "released" in state:
            self.released_ = PublishedGraph(state["released"].numpy(), self.num_nodes_)
            self.generation_info_ = json.loads(state["generation"])


def _check_audit_hook(audit_hook: AuditHook | None) -> None:
    """Raise :class:`ConfigError` unless ``audit_hook`` is None or an :class:`AuditHook` whose
    canaries are None or a :class:`graphpriv.synthesis.privdpr.GradientCanary` (``rows``, ``add``,
    ``observe``)."""
    if audit_hook is None:
        return
    if not isinstance(audit_hook, AuditHook):
        raise ConfigError(f"audit_hook must be a graphpriv.privacy.hooks.AuditHook or None (got "
                          f"{type(audit_hook).__name__})")
    canaries = audit_hook.canaries
    if canaries is None:
        return
    rows = getattr(canaries, "rows", None)
    if (isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 0
            or not callable(getattr(canaries, "add", None)) or not callable(getattr(canaries, "observe", None))):
        raise ConfigError("PrivDPR's audit canaries must be a graphpriv.synthesis.privdpr.GradientCanary (an "
                          f"integer 'rows' >= 0, 'add' and 'observe'; got {type(canaries).__name__})")


def _max_pairs(num_nodes: int) -> int:
    """N(N-1)/2, the node pairs of an undirected simple graph."""
    return num_nodes * (num_nodes - 1) // 2
