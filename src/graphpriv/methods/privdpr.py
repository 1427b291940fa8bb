"""PrivDPR and DPR: node-level DP synthetic graphs from a deep PageRank (specs/privdpr.md).

Method ids: ``privdpr`` (noise on V's gradient; node-level (eps, delta)-DP, bounded relation) and
``dpr`` (the same without noise: no guarantee). Source: Zhang, Hu, Ye, Xu, "PrivDPR" (KDD 2025).

Flow of a run: 80/20 split of the real edges (:func:`graphpriv.data.splits.link_split`, the 20%
held out for link prediction); V trained on the 80% graph
(:func:`graphpriv.synthesis.privdpr.train_embeddings`); the synthetic graph generated from V
(:mod:`graphpriv.synthesis.generation`, post-processing); evaluation: the eight structural errors
against the 80% graph the generator saw, link-prediction AUC of a GAE trained on the synthetic graph
(structure only) on the held-out edges against as many non-edges, and, for graphs with labels,
node-classification micro-F1 of a logistic regression on that GAE's embeddings (90/10 nodes).

The target edge count (``edge_count``): ``model`` (default) counts pairs with sigmoid(v_i . v_j) >
0.5, a function of V only; ``public`` takes ``num_edges`` from the caller; ``input`` reads the
training graph's |E| and *says so* (the paper's behaviour; that count is private data and the
result's privacy notes state that it is treated as public).

Graphs are undirected: graphpriv's loaders symmetrise directed edge lists (p2p_gnutella08), so the
walks follow undirected edges and d_in = d_out = degree.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from pydantic import Field, model_validator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score, roc_auc_score
from sklearn.model_selection import train_test_split
from torch_geometric.data import Data

from graphpriv.attacks.graph import PublishedGraph
from graphpriv.attacks.suite import attack_auc, make_attack, resolve_attacks
from graphpriv.data.graph import to_csr
from graphpriv.data.splits import link_split
from graphpriv.data.validation import IF_PRESENT, check_data, check_seed
from graphpriv.errors import ConfigError
from graphpriv.methods.base import MethodConfig, Progress, Result, Timer, no_progress
from graphpriv.metrics.graph_stats import graph_stats, structural_errors
from graphpriv.nn.gae import gae_embeddings
from graphpriv.synthesis.generation import assemble_graph, score_counts
from graphpriv.synthesis.privdpr import train_embeddings

__all__ = ["PrivDPRConfig", "generate", "run", "training_kwargs"]


class PrivDPRConfig(MethodConfig):
    """PrivDPR's hyperparameters (spec defaults) and the evaluation's."""

    epsilon: float = Field(3.2, gt=0, description="node-level epsilon (bounded: replace one node)")
    delta: float = Field(1e-5, gt=0, lt=1)
    accounting: Literal["rigorous", "paper"] = "rigorous"
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
    edge_count: Literal["model", "public", "input"] = "model"
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


def run(config: PrivDPRConfig, data: Data, *, seed: int, method: str = "privdpr",
        progress: Progress = no_progress) -> Result:
    """One PrivDPR (or DPR) run: split, train V, generate, evaluate.

    Returns:
        :class:`Result` with metrics ``lp_auc``, ``nc_f1`` (labelled graphs), the structural errors
        ``err_tc``, ``err_wc``, ``err_cc``, ``err_rede``, ``err_cpl``, ``err_diameter``,
        ``err_lcc`` and ``ks``; with ``attacks``, ``attack_auc_<id>`` for each attack (training edges
        against non-edges, inferred from the synthetic graph); the diagnostics ``gradient_norm`` (mean norm of a step's true summed
        V-gradient) and ``signal_to_noise`` (that over the noise's expected norm, private runs); the
        privacy report (None for ``dpr``); the synthetic graph as the
        release (``graphpriv run privdpr ... --out FILE`` writes it).

    Raises:
        ConfigError: bad settings (s <= 1, depth over 64, ...). DatasetError: too few edges.
    """
    data = check_data(data, needs_labels=IF_PRESENT, method=method)
    seed = check_seed(seed)
    private = config.private and method != "dpr"
    timer = Timer()
    n = int(data.num_nodes)
    with timer.phase("split"):
        split = link_split(data, val_ratio=0.0, test_ratio=config.test_ratio, seed=seed)
        adj = to_csr(split.train_edge_index, n)
    with timer.phase("training"):
        trained = train_embeddings(adj, **training_kwargs(config, private=private, seed=seed), progress=progress)
    notes: list[str] = []
    with timer.phase("generation"):
        pairs, target, model_edges = generate(trained.V, config, seed=seed,
                                              input_edges=int(split.train_edge_index.shape[1]))
        if config.edge_count == "input":
            notes.append(f"edge count: the training graph's |E| = {target} was read and treated as public "
                         "(the paper's generation); it is not covered by the guarantee")
    release = PublishedGraph(pairs, n)
    info = {"depth": trained.depth, "iterations": trained.iterations, "batch_pairs": trained.batch_pairs,
            "noise_multiplier": trained.noise_multiplier, "noise_std": trained.noise_std,
            "edge_count_source": config.edge_count, "target_edges": int(target), "model_edges": int(model_edges),
            "synthetic_edges": int(release.num_edges), **trained.info}
    # diagnostics of the mechanism: the true summed V-gradient per step against the noise's norm
    metrics: dict[str, float] = {"gradient_norm": float(trained.info["gradient_norm_mean"])}
    if trained.info.get("noise_norm"):
        metrics["signal_to_noise"] = metrics["gradient_norm"] / float(trained.info["noise_norm"])
    if config.evaluate:
        with timer.phase("evaluation"):
            metrics.update(_evaluate(adj, release, split, data, seed))
    if config.attacks.strip() != "none" and release.num_edges:
        with timer.phase("attacks"):
            metrics.update(_attack(config.attacks, release, split, seed))
    privacy = None
    if trained.ledger is not None:
        if config.accounting == "paper":
            notes.append(f"paper accounting: T = {trained.iterations} Gaussian steps of (eps/T, delta/T) each, "
                         f"sequential composition; the RDP accountant gives eps = "
                         f"{trained.info['rdp_epsilon_of_this_noise']:.4g} for the same noise")
        notes.append("bounded node-level DP (replace one node and its edges; N public); sensitivity "
                     "2 S_grad / T per step (replace-one doubles the paper's S_grad / T)")
        privacy = trained.ledger.report(target_epsilon=config.epsilon, notes=notes)
    elif notes:
        info["notes"] = notes
    return Result(method=method, dataset=str(getattr(data, "name", "graph")), seed=seed,
                  config=config.model_dump(mode="json"), metrics=metrics, privacy=privacy,
                  timings=timer.finish(), info=info).with_release(release)


def training_kwargs(config: PrivDPRConfig, *, private: bool, seed: int) -> dict:
    """The keyword arguments of :func:`graphpriv.synthesis.privdpr.train_embeddings` for ``config``
    (epsilon None when ``private`` is False: ``dpr``); shared by :func:`run` and the privacy audit."""
    return {"epsilon": config.epsilon if private else None, "delta": config.delta, "accounting": config.accounting,
            "s_grad": config.s_grad, "epochs": config.epochs, "batch_nodes": config.batch_nodes,
            "num_walks": config.num_walks, "walk_length": config.walk_length, "r": config.r, "d": config.d,
            "s": config.s, "lr": config.lr, "gamma": config.gamma, "adam_eps": config.adam_eps, "seed": seed}


def generate(V: torch.Tensor, config: PrivDPRConfig, *, seed: int, input_edges: int | None = None
             ) -> tuple[np.ndarray, int, int]:
    """A run's graph generation from V (post-processing: no privacy spent), with the run's seeds.

    Args:
        V: ``[N, r]`` released embeddings. config: samples_per_node, temperature, edge_count,
            num_edges. seed: the run's seed. input_edges: the training graph's |E|, read only when
            ``edge_count = 'input'`` (the paper's generation, outside the guarantee).

    Returns:
        ``(pairs, target, model_edges)``: the synthetic graph's undirected edges ``[2, E']`` (u < v),
        the target edge count used, and the model's own count.

    Raises:
        ConfigError: ``edge_count = 'input'`` without ``input_edges``.

    Source: papers/003, Algorithm 2 lines 13-18 (:mod:`graphpriv.synthesis.generation`).
    """
    if config.edge_count == "input" and input_edges is None:
        raise ConfigError("edge_count = 'input' needs the training graph's edge count (input_edges)")
    counts, model_edges = score_counts(V, samples_per_node=config.samples_per_node, temperature=config.temperature,
                                       generator=torch.Generator().manual_seed(seed + 7919))
    target = {"model": model_edges, "public": config.num_edges, "input": input_edges}[config.edge_count]
    pairs = assemble_graph(counts, max(1, int(target)), rng=np.random.default_rng([seed, 173]))
    return pairs, int(target), int(model_edges)


def _attack(attacks: str, release: PublishedGraph, split, seed: int) -> dict[str, float]:
    """Link inference from the synthetic graph: real edges the generator trained on (as many as
    there are held-out edges, drawn at random) against the LP split's non-edges; 0.5 = guessing."""
    rng = np.random.default_rng([seed, 181])
    train = split.train_edge_index
    positives = train[:, rng.choice(train.shape[1], min(train.shape[1], split.test_neg.shape[1]), replace=False)]
    return {f"attack_auc_{name}": attack_auc(make_attack(name, seed=seed), release, positives, split.test_neg)[0]
            for name in resolve_attacks(attacks)}


def _evaluate(adj, release: PublishedGraph, split, data: Data, seed: int) -> dict[str, float]:
    """Structural errors against the training graph, LP AUC, NC micro-F1 (labelled graphs)."""
    synthetic = to_csr(release.pairs, release.num_nodes)
    metrics = {}
    if release.num_edges:
        errors = structural_errors(graph_stats(adj), synthetic, original_adj=adj)
        metrics.update({("ks" if k == "ks" else f"err_{k}"): float(v) for k, v in errors.items()})
    edge_index = torch.from_numpy(np.concatenate([release.pairs, release.pairs[::-1]], axis=1))
    if release.num_edges == 0:
        return metrics
    z = gae_embeddings(edge_index, release.num_nodes, None, seed=seed).numpy().astype(np.float64)
    pairs = np.concatenate([split.test_pos, split.test_neg], axis=1)
    scores = np.einsum("pd,pd->p", z[pairs[0]], z[pairs[1]])
    labels = np.r_[np.ones(split.test_pos.shape[1]), np.zeros(split.test_neg.shape[1])]
    metrics["lp_auc"] = float(roc_auc_score(labels, scores))
    y = getattr(data, "y", None)
    if y is not None:
        y = np.asarray(y)
        known = np.flatnonzero(y >= 0)
        train, test = train_test_split(known, test_size=0.1, random_state=seed, stratify=None)
        clf = LogisticRegression(max_iter=1000).fit(z[train], y[train])
        metrics["nc_f1"] = float(f1_score(y[test], clf.predict(z[test]), average="micro"))
    return metrics
