"""Method ids -> (Config class, run function, estimator, defaults), named without importing them.

Each :class:`MethodSpec` names its config class, run function and estimator class by import path
(``"module:attribute"``); :func:`~graphpriv.lazy.resolve` imports one on first use (``spec.config_cls``,
``spec.run``, ``ESTIMATORS[method]``). Importing the registry, listing :data:`METHODS`, reading an
entry's id, defaults, description, unit or presets, therefore imports no method module (no torch,
PyG, dp-accounting, Opacus, numba): ``graphpriv run cn`` loads what common neighbours needs and
nothing of DPAR or DPLP. ``tests/experiments/test_startup.py`` resolves every path (none stale).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphpriv.errors import ConfigError, PrivacyError, describe_validation_error
from graphpriv.lazy import resolve
from graphpriv.methods import variants
from graphpriv.privacy.limits import MAX_EPSILON, delta_below

if TYPE_CHECKING:
    from graphpriv.methods.base import MethodConfig, RunFn
    from graphpriv.methods.estimator import Estimator

#: Method id -> :class:`~graphpriv.methods.dpar.DPARClassifier`'s ``appr`` (the audits read it here).
DPAR_APPR = variants.DPAR_APPR
PRIVDPR_BOUND = variants.PRIVDPR_BOUND
HEURISTIC = variants.HEURISTIC
GAE_PUBLISHER = variants.GAE_PUBLISHER
_RANK_VARIANTS = variants.RANK_VARIANTS


@dataclass(frozen=True)
class MethodSpec:
    """A runnable method: its id, config class, run function, estimator and default overrides.

    The config class, run function and estimator class are named by import path (``config_path``,
    ``run_path``, ``estimator_path``: ``"module:attribute"``) and imported on first use of
    :attr:`config_cls`, :attr:`run` or :attr:`estimator`. ``unit`` is the privacy unit whose count
    bounds delta (``"edge"``: the input's undirected edges, ``"node"``: its nodes; ``None``: no
    delta setting); ``publishes`` says whether a run releases a graph (``--out`` writes it);
    ``pure_dp``: the mechanism is pure epsilon-DP, its ``delta`` only the delta its report is stated
    at (the delta rule does not apply). ``private_twin``: for a method without differential
    privacy, the registry's private method of the same task (named when ``--epsilon`` is given to it).
    """

    id: str
    config_path: str
    run_path: str
    estimator_path: str
    defaults: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    unit: str | None = None
    publishes: bool = False
    pure_dp: bool = False
    private_twin: str | None = None

    @property
    def config_cls(self) -> type[MethodConfig]:
        """The method's config class (its module imported on first use)."""
        return resolve(self.config_path)

    @property
    def run(self) -> RunFn:
        """The method's run function, ``run(config, data, *, seed, method, progress) -> Result``."""
        return resolve(self.run_path)

    @property
    def estimator(self) -> type[Estimator]:
        """The estimator class the method's protocol fits (as :data:`ESTIMATORS` maps it)."""
        return resolve(self.estimator_path)


class _Resolved(Mapping):
    """A read-only mapping of method ids to import paths whose values are the objects they name,
    each imported on first lookup (:func:`~graphpriv.lazy.resolve`): ``ESTIMATORS["cn"]`` imports the heuristic
    only; iterating the keys imports nothing."""

    def __init__(self, paths: dict[str, str]) -> None:
        self._paths = paths

    def __getitem__(self, key: str) -> Any:
        return resolve(self._paths[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._paths!r})"


#: Import paths of the modules the specs name (one place, the entries below stay one line each).
_LINK, _NODE, _RANK = "graphpriv.evaluation.link", "graphpriv.evaluation.node", "graphpriv.evaluation.ranking"
_PUBLISH, _SYNTH = "graphpriv.evaluation.publishing", "graphpriv.evaluation.synthesis"
_DPLP, _LAPG, _HEUR = "graphpriv.methods.dplp_subgraph", "graphpriv.methods.lapgraph_sgnn", "graphpriv.methods.heuristic"
_DRANK, _PRIVDPR, _DPAR = "graphpriv.methods.dplp_rank", "graphpriv.methods.privdpr", "graphpriv.methods.dpar"
_MLP, _PPGSL, _PUB = "graphpriv.methods.mlp", "graphpriv.methods.ppgsl", "graphpriv.methods.publishing"
_GAP, _TRANSDUCTIVE = "graphpriv.methods.gap", "graphpriv.evaluation.transductive"
_GENERATE, _GAEL = "graphpriv.evaluation.generators", "graphpriv.methods.gae_link"
_HMIX = "graphpriv.methods.heuristic_mix"
#: :class:`graphpriv.linkpred.subgraphs.Extractor`'s values (a ``str`` enum; the config validates
#: the value into the member, so ``config.extractor is Extractor.PATH`` as before).
_PATH, _NEIGHBOURHOOD = "path", "neighbourhood"

_METHODS = [
    MethodSpec("dplp-ps", f"{_DPLP}:DPLPConfig", f"{_LINK}:run_dplp", f"{_DPLP}:DPLPLinkPredictor",
               {"extractor": _PATH, "private": True},
               "DPLP with path subgraphs: edge-level DP-SGD on a subgraph GCN (Ran et al.)", unit="edge"),
    MethodSpec("dplp-ns", f"{_DPLP}:DPLPConfig", f"{_LINK}:run_dplp", f"{_DPLP}:DPLPLinkPredictor",
               {"extractor": _NEIGHBOURHOOD, "private": True, "h": 1},
               "DPLP with h-hop neighbourhood subgraphs (Ran et al.)", unit="edge"),
    MethodSpec("seal", f"{_DPLP}:SEALDGCNNConfig", f"{_LINK}:run_seal", f"{_DPLP}:SEALLinkPredictor", {},
               "SEAL with its own DGCNN and settings (h = 2, SortPooling, Adam 1e-4), no DP (Zhang & Chen 2018)",
               unit="edge", private_twin="dplp-ns"),
    MethodSpec("seal-gcn", f"{_DPLP}:SEALConfig", f"{_LINK}:run_seal", f"{_DPLP}:SEALGCNLinkPredictor",
               {"extractor": _NEIGHBOURHOOD, "private": False, "project": False, "h": 1,
                "optimizer": "adam", "lr": 0.001, "dropout": 0.5},
               "the private models' subgraph GCN on SEAL's 1-hop enclosing subgraphs, no DP", unit="edge",
               private_twin="dplp-ns"),
    MethodSpec("lapgraph-sgnn", f"{_LAPG}:LapGraphConfig", f"{_LINK}:run_lapgraph_sgnn",
               f"{_LAPG}:LapGraphLinkPredictor",
               {"extractor": _NEIGHBOURHOOD, "h": 1, "optimizer": "adam", "lr": 0.001},
               "LapGraph-perturbed training graph (edge-level DP), then the non-private SGNN", unit="edge", pure_dp=True),
    MethodSpec("cn", f"{_HEUR}:CommonNeighboursConfig", f"{_LINK}:run_cn", f"{_HEUR}:CommonNeighbours", {},
               "common neighbours on the training graph, no DP (the ceiling of k = 2 path models)",
               private_twin="dplp-ps"),
    MethodSpec("gae", f"{_GAEL}:GAELinkConfig", f"{_LINK}:run_gae_link", f"{_GAEL}:GAELinkPredictor", {},
               "GAE inner products on the training graph, no DP (features when the graph has them)",
               private_twin="lapgraph-gae"),
    MethodSpec("edgerand-gae", f"{_GAEL}:GAELinkConfig", f"{_LINK}:run_gae_link", f"{_GAEL}:GAELinkPredictor", {},
               "EdgeRand release of the training graph (edge-level DP), then a GAE on it", unit="edge", pure_dp=True),
    MethodSpec("lapgraph-gae", f"{_GAEL}:GAELinkConfig", f"{_LINK}:run_gae_link", f"{_GAEL}:GAELinkPredictor", {},
               "LapGraph release of the training graph (edge-level DP), then a GAE on it", unit="edge", pure_dp=True),
    MethodSpec("aa", f"{_HEUR}:CommonNeighboursConfig", f"{_LINK}:run_cn", f"{_HEUR}:NeighbourhoodHeuristic", {},
               "Adamic-Adar on the training graph (common neighbours weighted by 1 / ln degree), no DP",
               private_twin="dplp-ps"),
    MethodSpec("ra", f"{_HEUR}:CommonNeighboursConfig", f"{_LINK}:run_cn", f"{_HEUR}:NeighbourhoodHeuristic", {},
               "resource allocation on the training graph (common neighbours weighted by 1 / degree), no DP",
               private_twin="dplp-ps"),
    MethodSpec("ra3", f"{_HEUR}:CommonNeighboursConfig", f"{_LINK}:run_cn", f"{_HEUR}:NeighbourhoodHeuristic", {},
               "resource allocation over simple length-3 paths on the training graph (1 / (deg x deg y) per path "
               "u-x-y-v), no DP", private_twin="dp-heuristic-mix"),
    MethodSpec("dp-heuristic-mix", f"{_HMIX}:HeuristicMixConfig", f"{_LINK}:run_heuristic_mix",
               f"{_HMIX}:HeuristicMixLinkPredictor", {},
               "w . (log1p RA, log1p RA3), the direction w chosen by the exponential mechanism (edge-level DP)",
               unit="edge", pure_dp=True),
    MethodSpec("dplp-rank", f"{_DRANK}:DPLPRankConfig", f"{_RANK}:run_rank", f"{_DRANK}:DPLPRanker", {},
               "rank: DPLP, a trained monotone UMNN transform + Gumbel top-K (protected-pair DP; De & Chakrabarti)"),
    MethodSpec("dplp-rank-lin", f"{_DRANK}:DPLPRankConfig", f"{_RANK}:run_rank", f"{_DRANK}:DPLPRanker", {},
               "rank: DPLP-Lin, the trained power transform nu_beta + Gumbel top-K (protected-pair DP)"),
    MethodSpec("rank-exponential", f"{_DRANK}:RankConfig", f"{_RANK}:run_rank", f"{_DRANK}:DPLPRanker", {},
               "rank: exponential mechanism on the raw score, K draws (protected-pair DP)"),
    MethodSpec("rank-laplace", f"{_DRANK}:RankConfig", f"{_RANK}:run_rank", f"{_DRANK}:DPLPRanker", {},
               "rank: one-shot Laplace noise on the scores, top-K (the paper's baseline and claim)"),
    MethodSpec("rank-staircase", f"{_DRANK}:RankConfig", f"{_RANK}:run_rank", f"{_DRANK}:DPLPRanker", {},
               "rank: one-shot staircase noise on the scores, top-K (the paper's baseline and claim)"),
    MethodSpec("rank-nonprivate", f"{_DRANK}:RankConfig", f"{_RANK}:run_rank", f"{_DRANK}:DPLPRanker", {},
               "rank: sort by the base score, no noise (no DP)", private_twin="dplp-rank"),
    MethodSpec("privdpr", f"{_PRIVDPR}:PrivDPRConfig", f"{_SYNTH}:run_privdpr", f"{_PRIVDPR}:PrivDPR", {},
               "synthesize: PrivDPR, deep PageRank with noise on V's gradient, graph from V V^T (node-level DP)",
               unit="node", publishes=True),
    MethodSpec("privdpr-tight", f"{_PRIVDPR}:PrivDPRConfig", f"{_SYNTH}:run_privdpr", f"{_PRIVDPR}:PrivDPR", {},
               "synthesize: PrivDPR with graphpriv's tighter bound (sigmoid' <= 1/4 per layer, so Eq. 13's network is "
               "shallower for the same S_grad; node-level DP)", unit="node", publishes=True),
    MethodSpec("dpr", f"{_PRIVDPR}:PrivDPRConfig", f"{_SYNTH}:run_privdpr", f"{_PRIVDPR}:PrivDPR", {"private": False},
               "synthesize: DPR, PrivDPR without noise (no DP)", unit="node", publishes=True, private_twin="privdpr"),
    MethodSpec("dpar-em0", f"{_DPAR}:DPARConfig", f"{_NODE}:run_dpar", f"{_DPAR}:DPARClassifier", {},
               "classify: DPAR, DP-APPR rows by the exponential mechanism (1/K values) + DP-SGD (node-level DP)",
               unit="node"),
    MethodSpec("dpar-em1", f"{_DPAR}:DPARConfig", f"{_NODE}:run_dpar", f"{_DPAR}:DPARClassifier", {},
               "classify: DPAR, DP-APPR rows by the exponential mechanism with Laplace values + DP-SGD (node-level DP)",
               unit="node"),
    MethodSpec("dpar-gm", f"{_DPAR}:DPARConfig", f"{_NODE}:run_dpar", f"{_DPAR}:DPARClassifier", {},
               "classify: DPAR, DP-APPR rows by the Gaussian mechanism + DP-SGD (node-level DP)", unit="node"),
    MethodSpec("dpar-nodp", f"{_DPAR}:DPARConfig", f"{_NODE}:run_dpar", f"{_DPAR}:DPARClassifier",
               {"private": False, "node_rate": 1.0, "seeds": None},
               "classify: DPAR's model on exact top-K APPR rows of every training node, no noise (no DP)", unit="node",
               private_twin="dpar-gm"),
    MethodSpec("dp-mlp", f"{_MLP}:MLPConfig", f"{_NODE}:run_mlp", f"{_MLP}:MLPClassifier", {},
               "classify: 2-layer MLP on node features alone, DP-SGD (node-level DP; DPAR's 'Features' baseline)",
               unit="node"),
    MethodSpec("mlp", f"{_MLP}:MLPConfig", f"{_NODE}:run_mlp", f"{_MLP}:MLPClassifier", {"private": False},
               "classify: 2-layer MLP on node features alone, no DP", unit="node", private_twin="dp-mlp"),
    MethodSpec("gap-edp", f"{_GAP}:GAPConfig", f"{_TRANSDUCTIVE}:run_gap", f"{_GAP}:GAPClassifier", {},
               "classify: GAP, aggregation perturbation (edge-level DP, undirected edges; Sajadmanesh et al.)",
               unit="edge"),
    MethodSpec("gap-inf", f"{_GAP}:GAPConfig", f"{_TRANSDUCTIVE}:run_gap", f"{_GAP}:GAPClassifier", {"private": False},
               "classify: GAP's model without noise (no DP)", unit="edge", private_twin="gap-edp"),
    MethodSpec("gap-ndp", f"{_GAP}:GAPNodeConfig", f"{_TRANSDUCTIVE}:run_gap", f"{_GAP}:GAPNodeClassifier", {},
               "classify: GAP, degree bound D, DP-SGD modules and sqrt(D) hops (node-level DP over degree <= D)",
               unit="node"),
    MethodSpec("progap-ndp", "graphpriv.methods.progap:ProGAPNodeConfig", f"{_TRANSDUCTIVE}:run_gap",
               "graphpriv.methods.progap:ProGAPNodeClassifier", {},
               "classify: ProGAP, degree bound D, DP-SGD stages (node-level DP over degree <= D)", unit="node"),
    MethodSpec("progap-edp", "graphpriv.methods.progap:ProGAPConfig", f"{_TRANSDUCTIVE}:run_gap",
               "graphpriv.methods.progap:ProGAPClassifier", {},
               "classify: ProGAP, progressive stages with aggregation perturbation (edge-level DP; Sajadmanesh et al.)",
               unit="edge"),
    MethodSpec("progap-inf", "graphpriv.methods.progap:ProGAPConfig", f"{_TRANSDUCTIVE}:run_gap",
               "graphpriv.methods.progap:ProGAPClassifier", {"private": False},
               "classify: ProGAP's model without noise (no DP)", unit="edge", private_twin="progap-edp"),
    MethodSpec("sage-ndp", "graphpriv.methods.sage:SAGEConfig", f"{_TRANSDUCTIVE}:run_sage",
               "graphpriv.methods.sage:SAGEClassifier", {},
               "classify: SAGE-NDP, DP-SGD on a one-hop GNN, K = D + 1 examples per node (node-level DP over degree "
               "<= D; Daigavane et al.)", unit="node"),
    MethodSpec("dp-mlp-transductive", "graphpriv.methods.sage:SAGEConfig", f"{_TRANSDUCTIVE}:run_sage",
               "graphpriv.methods.sage:SAGEClassifier", {"max_degree": 0},
               "classify: 2-layer MLP on node features alone, DP-SGD, on GAP's transductive split (node-level DP)",
               unit="node"),
    MethodSpec("mlp-transductive", "graphpriv.methods.sage:SAGEConfig", f"{_TRANSDUCTIVE}:run_sage",
               "graphpriv.methods.sage:SAGEClassifier", {"max_degree": 0, "private": False},
               "classify: 2-layer MLP on node features alone, no DP, on GAP's transductive split", unit="node",
               private_twin="dp-mlp-transductive"),
    MethodSpec("gcn", "graphpriv.methods.gcn:GCNConfig", f"{_TRANSDUCTIVE}:run_gcn", "graphpriv.methods.gcn:GCNClassifier",
               {}, "classify: 2-layer GCN on the whole graph, no DP (Kipf & Welling; the ceiling)", unit="edge",
               private_twin="gap-edp"),
    MethodSpec("ppgsl", f"{_PPGSL}:PPGSLConfig", f"{_PUBLISH}:run_ppgsl", f"{_PPGSL}:PPGSL", {},
               "publish: PPGSL, graph structure learned against a surrogate attacker (no DP; Wu et al.)",
               publishes=True, private_twin="edgerand"),
    MethodSpec("random-perturb", f"{_PUB}:RandomPerturbConfig", f"{_PUBLISH}:run_random_perturb",
               f"{_PUB}:RandomPerturb", {},
               "publish: remove a fraction of edges, add as many random ones (no DP; PPGSL baseline)", publishes=True,
               private_twin="edgerand"),
    MethodSpec("dice", f"{_PUB}:DiceConfig", f"{_PUBLISH}:run_dice", f"{_PUB}:DICE", {},
               "publish: delete edges at sensitive nodes, add edges elsewhere (no DP; PPGSL baseline)", publishes=True,
               private_twin="edgerand"),
    MethodSpec("edgerand", f"{_PUB}:EdgeRandConfig", f"{_PUBLISH}:run_edgerand", f"{_PUB}:EdgeRand", {},
               "publish: randomized response on every adjacency bit (edge-level DP; LinkTeller)",
               unit="edge", pure_dp=True, publishes=True),
    MethodSpec("lapgraph", f"{_PUB}:LapGraphPublishConfig", f"{_PUBLISH}:run_lapgraph", f"{_PUB}:LapGraph", {},
               "publish: Laplace adjacency, top noisy |E| kept (edge-level DP; LinkTeller)",
               unit="edge", pure_dp=True, publishes=True),
    MethodSpec("tmf", "graphpriv.methods.tmf:TmFConfig", f"{_GENERATE}:run_tmf", "graphpriv.methods.tmf:TmF", {},
               "synthesize: TmF, Laplace edge count and adjacency, the cells above a threshold released "
               "(edge-level DP; Nguyen et al.)", unit="edge", pure_dp=True, publishes=True),
    MethodSpec("dp-1k", "graphpriv.methods.dp_1k:DP1KConfig", f"{_GENERATE}:run_dp_1k", "graphpriv.methods.dp_1k:DP1K",
               {}, "synthesize: DP-1K, Laplace sorted degree sequence + constrained inference, Chung-Lu graphs "
               "(edge-level DP; Hay et al.)", unit="edge", pure_dp=True, publishes=True),
    MethodSpec("privgraph", "graphpriv.methods.privgraph:PrivGraphConfig", f"{_GENERATE}:run_privgraph",
               "graphpriv.methods.privgraph:PrivGraph", {},
               "synthesize: PrivGraph, noisy super-graph + Louvain, exponential-mechanism community adjustment, "
               "Laplace community counts and degrees, Chung-Lu graphs (edge-level DP; Yuan et al.)",
               unit="edge", pure_dp=True, publishes=True),
    MethodSpec("edgerand-synthesis", f"{_GENERATE}:EdgeRandSynthesisConfig", f"{_GENERATE}:run_edgerand_synthesis",
               f"{_PUB}:EdgeRand", {}, "synthesize: EdgeRand's release judged as a synthetic graph (PGB queries, "
               "LP AUC, attacks; edge-level DP)", unit="edge", pure_dp=True, publishes=True),
    MethodSpec("lapgraph-synthesis", f"{_GENERATE}:LapGraphSynthesisConfig", f"{_GENERATE}:run_lapgraph_synthesis",
               f"{_PUB}:LapGraph", {}, "synthesize: LapGraph's release judged as a synthetic graph (PGB queries, "
               "LP AUC, attacks; edge-level DP)", unit="edge", pure_dp=True, publishes=True),
]

METHODS: dict[str, MethodSpec] = {m.id: m for m in _METHODS}

#: Method id -> the estimator its protocol fits (the variant, e.g. DPAR's ``appr``, from
#: :func:`estimator_args`; the hyperparameters: the method's preset, then the overrides). A read-only
#: mapping: a lookup imports that estimator's module only.
ESTIMATORS: Mapping[str, type[Estimator]] = _Resolved({m.id: m.estimator_path for m in _METHODS})


@dataclass(frozen=True)
class Preset:
    """A named set of hyperparameters of a method: ``settings`` for every dataset, then
    ``per_dataset[dataset]`` over them (a paper's per-dataset choices). A front door applies a
    preset over the method's defaults and under the user's own settings."""

    description: str
    settings: dict[str, Any] = field(default_factory=dict)
    per_dataset: dict[str, dict[str, Any]] = field(default_factory=dict)

    def for_dataset(self, dataset: str) -> dict[str, Any]:
        """The preset's settings on ``dataset`` (its per-dataset ones over the common ones)."""
        return {**self.settings, **self.per_dataset.get(dataset, {})}


#: DPLP's per-dataset settings as the paper found best (Ran et al., "Differentially Private Graph Neural
#: Networks for Link Prediction", Sec. VII-B3: k per dataset); PolBlogs with the paper's batch 1024 and lr 0.1
#: (chosen on validation seeds 100-102, docs/reproduction.md).
_DPLP_PAPER = {"yeast": {"k": 4}, "usair": {"k": 2}, "celegans": {"k": 2},
               "pb": {"k": 2, "batch_size": 1024, "lr": 0.1}}
#: DPLP-NS uses h = floor((k + 1) / 2) hops where DPLP-PS uses k (the same paper, Sec. VII-A).
_DPLP_NS_PAPER = {d: {**{key: v for key, v in s.items() if key != "k"}, "h": (s["k"] + 1) // 2}
                  for d, s in _DPLP_PAPER.items()}
#: DPAR's variant that learns under rigorous accounting (docs/dpar.md): no node sampling (q' = 1),
#: every node in its own row only, 10% of the budget to DP-APPR. DPARConfig's defaults since they
#: were measured (grid dpar-defaults); the preset names them.
_DPAR_ONE_ROW = Preset("q' = 1, one row per node, 10% of the budget to DP-APPR (the defaults)",
                       {"node_rate": 1.0, "max_rows": 1, "appr_share": 0.1})
#: The DPAR paper's setting (Zhang et al., WWW 2024, Sec. 4): q' = 0.09 node sampling, a node in
#: every row it reaches, half of the budget to DP-APPR (dpar-nodp keeps its q' = 1, no sampling).
_DPAR_PAPER = Preset("the DPAR paper's q' = 0.09, rows uncapped, half of the budget to DP-APPR (Sec. 4)",
                     {"node_rate": 0.09, "max_rows": None, "appr_share": 0.5})
_DPAR_NODP_PAPER = Preset("the DPAR paper's rows uncapped (Sec. 4; no sampling, no noise)",
                          {"max_rows": None, "appr_share": 0.5})

#: Method id -> preset name -> :class:`Preset`.
PRESETS: dict[str, dict[str, Preset]] = {
    "dplp-ps": {"paper": Preset("the DPLP paper's per-dataset k (Sec. VII-B3)", per_dataset=_DPLP_PAPER)},
    "dplp-ns": {"paper": Preset("the DPLP paper's per-dataset h = floor((k + 1) / 2) (Sec. VII-A)",
                                per_dataset=_DPLP_NS_PAPER)},
    **{m: {"one-row": _DPAR_ONE_ROW, "paper": _DPAR_PAPER} for m in ("dpar-em0", "dpar-em1", "dpar-gm")},
    "dpar-nodp": {"one-row": _DPAR_ONE_ROW, "paper": _DPAR_NODP_PAPER},
    "ppgsl": {"paper": Preset("the paper's Eq. 8 as written (a sum over entries) and its alpha = 0.005 (Sec. V-A.6)",
                              {"utility_normalisation": "none", "alpha": 0.005})},
}


def preset_settings(method: str, preset: str | None, dataset: str) -> dict[str, Any]:
    """The settings preset ``preset`` of ``method`` gives on ``dataset`` (``{}`` for None).

    Raises:
        ConfigError: ``method`` has no preset of that name (the message lists its presets).
    """
    if preset is None:
        return {}
    known = PRESETS.get(method, {})
    if preset not in known:
        raise ConfigError(f"{method} has no preset {preset!r}; its presets: "
                          f"{', '.join(sorted(known)) or 'none'}")
    return known[preset].for_dataset(dataset)


def estimator_args(method: str) -> dict[str, Any]:
    """The constructor arguments that pick ``method``'s variant of its estimator, beside the config
    (DPAR's ``appr``, PrivDPR's ``gradient_bound``, the heuristics' ``heuristic``, the GAE link
    predictors' ``publisher``, the ranker's ``transform`` and ``noise``); ``{}`` for the others."""
    if method in DPAR_APPR:
        return {"appr": DPAR_APPR[method]}
    if method in HEURISTIC:
        return {"heuristic": HEURISTIC[method]}
    if method in GAE_PUBLISHER:
        return {"publisher": GAE_PUBLISHER[method]}
    if method in PRIVDPR_BOUND:
        return {"gradient_bound": PRIVDPR_BOUND[method]}
    if method in _RANK_VARIANTS:
        transform, noise = _RANK_VARIANTS[method]
        return {"transform": transform, "noise": noise}
    return {}


def make_estimator(method: str, overrides: dict[str, Any] | None = None, *, random_state: int = 0) -> Estimator:
    """The unfitted estimator a run of ``method`` fits: its class, its variant and its preset.

    Args:
        method: registry id. overrides: hyperparameters over the preset (as ``--set``).
        random_state: the estimator's seed (a run's ``--seed``).

    Returns:
        e.g. ``make_estimator("dpar-gm", {"epsilon": 4})`` is ``DPARClassifier(appr="gm", epsilon=4, ...)``.

    Raises:
        ConfigError: an unknown method, setting or value.
    """
    config = make_config(method, dict(overrides or {}))
    return ESTIMATORS[method](random_state=random_state, **estimator_args(method), **config.model_dump())


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
        config = spec.config_cls(**values)
    except ValueError as exc:  # pydantic.ValidationError: one line per invalid field, no URL
        raise ConfigError(f"invalid setting for {method}: {describe_validation_error(exc)}") from None
    epsilon = getattr(config, "epsilon", None)
    if isinstance(epsilon, (int, float)) and epsilon > MAX_EPSILON:
        raise ConfigError(f"epsilon={epsilon:g} is above graphpriv's maximum {MAX_EPSILON:g} (a bound of e^{MAX_EPSILON:g} "
                          "protects nothing); pass --epsilon 100 or less")
    return config


def is_private(method: str, config: MethodConfig) -> bool:
    """Whether a run of ``method`` with ``config`` spends privacy (and so takes an epsilon): a
    config with an ``epsilon``, not switched off by ``private=False``, of a method that is not the
    non-private member of a twin pair (``rank-nonprivate`` shares the rankers' config)."""
    spec = method_spec(method)
    if "epsilon" not in spec.config_cls.model_fields or getattr(config, "private", True) is False:
        return False
    return spec.private_twin is None or "private" in spec.config_cls.model_fields


def check_epsilon_applies(method: str, overrides: dict[str, Any], config: MethodConfig | None = None) -> None:
    """Refuse an epsilon given to a run that spends none.

    Args:
        method: registry id. overrides: the user's settings. config: the validated config
            (``None``: before validation, only the twin check, which needs no config).

    Raises:
        ConfigError: ``epsilon`` in ``overrides`` while ``method`` is not differentially private
            (the message names its private twin, e.g. ``mlp`` -> ``dp-mlp``), or while ``config``
            switches privacy off (``private=false``).
    """
    if "epsilon" not in overrides:
        return
    spec = method_spec(method)
    if spec.private_twin is not None and not overrides.get("private"):
        raise ConfigError(f"--epsilon was given but {method} is not differentially private: it spends no epsilon. Its "
                          f"private twin is {spec.private_twin}: graphpriv run {spec.private_twin} --epsilon "
                          f"{overrides['epsilon']}")
    if config is not None and not is_private(method, config):
        raise ConfigError(f"--epsilon was given but {method} runs without privacy (private=false), so no epsilon "
                          "would be spent; drop --epsilon, or use a private method or --set private=true")


def privacy_units(method: str, data) -> tuple[str, int] | None:
    """``(unit, count)`` of the privacy units of ``data`` under ``method`` (``None`` when the method
    has no delta): undirected edges for edge-level methods, nodes for node-level ones.

    ``data`` is a loaded graph (PyG ``Data``) or a registry dataset id, whose size the data
    registry states without loading it (``None`` for any other string: a graph file's size is
    known once it is loaded)."""
    unit = method_spec(method).unit
    if unit is None:
        return None
    if isinstance(data, str):
        from graphpriv.data.registry import REGISTRY

        if data not in REGISTRY:
            return None
        info = REGISTRY[data]
        return unit, int(info.num_edges if unit == "edge" else info.num_nodes)
    count = int(data.edge_index.size(1) // 2) if unit == "edge" else int(data.num_nodes)
    return unit, count


def takes_default_delta(method: str, config: MethodConfig) -> bool:
    """Whether :func:`apply_default_delta` may lower ``config``'s delta: a private run, not a pure-DP
    release (which only states its report at a delta), whose delta nobody gave (not the user, a
    preset nor the registry's defaults). Reads no data."""
    return (getattr(config, "delta", None) is not None and "delta" not in config.model_fields_set
            and is_private(method, config) and not method_spec(method).pure_dp)


def apply_default_delta(method: str, config: MethodConfig, data) -> tuple[MethodConfig, str | None]:
    """The one rule of the default delta: when a private run was given no delta (not by the user,
    a preset nor the registry's defaults), a method's default delta that is not below
    ``1 / count`` privacy units is lowered to :func:`~graphpriv.privacy.limits.delta_below`
    ``(count)``, the largest power of ten below it (e.g. DPAR's 1e-4 becomes 1e-5 on PubMed's
    19,717 nodes). A delta that was given is kept (and :func:`check_delta_rule` judges it); which
    configs the rule applies to is :func:`takes_default_delta`.

    Args:
        method: registry id. config: its validated config. data: a PyG ``Data`` or a registry id
            (see :func:`privacy_units`).

    Returns:
        ``(config, note)``: the config (a new one, validated again, when lowered) and one sentence
        saying what was lowered and why (``None`` when nothing was).
    """
    if not takes_default_delta(method, config):
        return config, None
    delta = config.delta
    units = privacy_units(method, data)
    if units is None or delta * units[1] < 1:
        return config, None
    unit, count = units
    lowered = delta_below(count)
    values = {name: getattr(config, name) for name in config.model_fields_set}
    note = (f"delta = {lowered:g}: the default rule (the largest power of ten below 1 / {count:,} {unit}s); "
            f"{method}'s default {delta:g} is not below it")
    return type(config)(**values, delta=lowered), note


def check_delta_rule(method: str, config: MethodConfig, data, *, allow_large_delta: bool = False) -> str | None:
    """Refuse delta >= 1 / (number of privacy units): such a delta allows a mechanism that
    publishes one unit's data outright with probability delta and still meets the bound.

    Args:
        method, config: the run. data: the input graph. allow_large_delta: keep such a delta (the
            papers' tables do), with a note. The rule does not apply to non-private settings and
            pure-DP mechanisms, whose delta is only the delta their report is stated at.

    Returns:
        ``None``, or, when ``allow_large_delta`` keeps a delta at or above the bound, one sentence
        saying so (a run records it as ``info["large_delta"]``).

    Raises:
        PrivacyError: ``config.delta`` at or above ``1 / count`` for a private run.
    """
    delta = getattr(config, "delta", None)
    units = privacy_units(method, data)
    if delta is None or units is None or method_spec(method).pure_dp or not is_private(method, config):
        return None
    unit, count = units
    if delta * count < 1:
        return None
    if allow_large_delta:
        return (f"delta = {delta:g} is at or above 1 / {count:,} {unit}s, kept by allow_large_delta: one {unit}'s "
                "data could be published outright with probability delta")
    raise PrivacyError(f"delta={delta:g} is at or above 1/{count} (one over the {count} {unit}s of the input): "
                       f"a mechanism could publish one {unit} outright and still be (eps, delta)-DP; pass "
                       f"--delta {delta_below(count):g} or smaller (the default rule: the largest power of ten "
                       f"below 1 / {count}), or --allow-large-delta to keep it")

