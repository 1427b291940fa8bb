"""Method ids -> (Config class, run function, defaults)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphpriv.errors import ConfigError
from graphpriv.linkpred.subgraphs import Extractor
from graphpriv.methods import (
    dpar,
    dplp_rank,
    dplp_subgraph,
    heuristic,
    lapgraph_sgnn,
    mlp,
    ppgsl,
    privdpr,
    publishing,
)
from graphpriv.methods.base import MethodConfig, RunFn


@dataclass(frozen=True)
class MethodSpec:
    """A runnable method: its id, config class, run function and default overrides."""

    id: str
    config_cls: type[MethodConfig]
    run: RunFn
    defaults: dict[str, Any] = field(default_factory=dict)
    description: str = ""


_METHODS = [
    MethodSpec("dplp-ps", dplp_subgraph.DPLPConfig, dplp_subgraph.run,
               {"extractor": Extractor.PATH, "private": True},
               "DPLP with path subgraphs: edge-level DP-SGD on a subgraph GCN (Ran et al.)"),
    MethodSpec("dplp-ns", dplp_subgraph.DPLPConfig, dplp_subgraph.run,
               {"extractor": Extractor.NEIGHBOURHOOD, "private": True, "h": 1},
               "DPLP with h-hop neighbourhood subgraphs (Ran et al.)"),
    MethodSpec("seal", dplp_subgraph.DPLPConfig, dplp_subgraph.run,
               {"extractor": Extractor.NEIGHBOURHOOD, "private": False, "project": False, "h": 1,
                "optimizer": "adam", "lr": 0.001, "dropout": 0.5},
               "SEAL: the same subgraph GCN on 1-hop enclosing subgraphs, no DP (Zhang & Chen 2018)"),
    MethodSpec("lapgraph-sgnn", lapgraph_sgnn.LapGraphConfig, lapgraph_sgnn.run,
               {"extractor": Extractor.NEIGHBOURHOOD, "h": 1, "optimizer": "adam", "lr": 0.001},
               "LapGraph-perturbed training graph (edge-level DP), then the non-private SGNN"),
    MethodSpec("cn", heuristic.CommonNeighboursConfig, heuristic.run, {},
               "common neighbours on the training graph, no DP (the ceiling of k = 2 path models)"),
    MethodSpec("dplp-rank", dplp_rank.DPLPRankConfig, dplp_rank.run, {},
               "rank: DPLP, a trained monotone UMNN transform + Gumbel top-K (protected-pair DP; De & Chakrabarti)"),
    MethodSpec("dplp-rank-lin", dplp_rank.DPLPRankConfig, dplp_rank.run, {},
               "rank: DPLP-Lin, the trained power transform nu_beta + Gumbel top-K (protected-pair DP)"),
    MethodSpec("rank-exponential", dplp_rank.RankConfig, dplp_rank.run, {},
               "rank: exponential mechanism on the raw score, K draws (protected-pair DP)"),
    MethodSpec("rank-laplace", dplp_rank.RankConfig, dplp_rank.run, {},
               "rank: one-shot Laplace noise on the scores, top-K (the paper's baseline and claim)"),
    MethodSpec("rank-staircase", dplp_rank.RankConfig, dplp_rank.run, {},
               "rank: one-shot staircase noise on the scores, top-K (the paper's baseline and claim)"),
    MethodSpec("rank-nonprivate", dplp_rank.RankConfig, dplp_rank.run, {},
               "rank: sort by the base score, no noise (no DP)"),
    MethodSpec("privdpr", privdpr.PrivDPRConfig, privdpr.run, {},
               "synthesize: PrivDPR, deep PageRank with noise on V's gradient, graph from V V^T (node-level DP)"),
    MethodSpec("dpr", privdpr.PrivDPRConfig, privdpr.run, {"private": False},
               "synthesize: DPR, PrivDPR without noise (no DP)"),
    MethodSpec("dpar-em0", dpar.DPARConfig, dpar.run, {},
               "classify: DPAR, DP-APPR rows by the exponential mechanism (1/K values) + DP-SGD (node-level DP)"),
    MethodSpec("dpar-em1", dpar.DPARConfig, dpar.run, {},
               "classify: DPAR, DP-APPR rows by the exponential mechanism with Laplace values + DP-SGD (node-level DP)"),
    MethodSpec("dpar-gm", dpar.DPARConfig, dpar.run, {},
               "classify: DPAR, DP-APPR rows by the Gaussian mechanism + DP-SGD (node-level DP)"),
    MethodSpec("dpar-nodp", dpar.DPARConfig, dpar.run, {"private": False, "node_rate": 1.0, "seeds": None},
               "classify: DPAR's model on exact top-K APPR rows of every training node, no noise (no DP)"),
    MethodSpec("dp-mlp", mlp.MLPConfig, mlp.run, {},
               "classify: 2-layer MLP on node features alone, DP-SGD (node-level DP; DPAR's 'Features' baseline)"),
    MethodSpec("mlp", mlp.MLPConfig, mlp.run, {"private": False},
               "classify: 2-layer MLP on node features alone, no DP"),
    MethodSpec("ppgsl", ppgsl.PPGSLConfig, ppgsl.run, {},
               "publish: PPGSL, graph structure learned against a surrogate attacker (no DP; Wu et al.)"),
    MethodSpec("random-perturb", publishing.RandomPerturbConfig, publishing.run_random_perturb, {},
               "publish: remove a fraction of edges, add as many random ones (no DP; PPGSL baseline)"),
    MethodSpec("dice", publishing.DiceConfig, publishing.run_dice, {},
               "publish: delete edges at sensitive nodes, add edges elsewhere (no DP; PPGSL baseline)"),
    MethodSpec("edgerand", publishing.EdgeRandConfig, publishing.run_edgerand, {},
               "publish: randomized response on every adjacency bit (edge-level DP; LinkTeller)"),
    MethodSpec("lapgraph", publishing.LapGraphPublishConfig, publishing.run_lapgraph, {},
               "publish: Laplace adjacency, top noisy |E| kept (edge-level DP; LinkTeller)"),
]

METHODS: dict[str, MethodSpec] = {m.id: m for m in _METHODS}


def method_spec(method: str) -> MethodSpec:
    """Registry entry of ``method``.

    Raises:
        ConfigError: unknown id (the message lists the known ones).
    """
    try:
        return METHODS[method]
    except KeyError:
        raise ConfigError(f"unknown method {method!r}; known methods: {', '.join(sorted(METHODS))}") from None


def make_config(method: str, overrides: dict[str, Any]) -> MethodConfig:
    """Validated config of ``method``: its defaults, then ``overrides``.

    Raises:
        ConfigError: an unknown key or an invalid value (pydantic's message, per field).
    """
    spec = method_spec(method)
    values = {**spec.defaults, **overrides}
    unknown = set(values) - set(spec.config_cls.model_fields)
    if unknown:
        raise ConfigError(f"unknown setting(s) for {method}: {', '.join(sorted(unknown))}; valid: "
                          f"{', '.join(sorted(spec.config_cls.model_fields))}")
    try:
        return spec.config_cls(**values)
    except ValueError as exc:  # pydantic.ValidationError
        raise ConfigError(f"invalid setting for {method}: {exc}") from None
