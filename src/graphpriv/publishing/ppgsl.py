"""PPGSL: privacy-preserving graph structure learning against sensitive link inference.

Source: Wu, Yang, Han, Wang, Wu, "Learning-based Privacy-Preserving Graph Publishing Against
Sensitive Link Inference Attacks" (IEEE TKDE 2025), Sec. III (Eq. 5-11, Algorithm 1).

Not differential privacy: the guarantee is empirical (attack AUC on the sensitive links near 0.5).

- Graph learner H_theta: full-graph parameterization (FGP, Eq. 6: A' = clamp((theta + theta^T)/2,
  0, 1), theta in R^{N x N}) or sparse (one parameter per candidate pair: the edges E plus
  k |E| uniformly sampled non-edges, never from E_s; A' = clamp(theta, 0, 1) on the candidates).
  theta starts at the original entries (1 on E, 0 elsewhere).
- Surrogate attacker: 2-layer GCN [128, 64] on (A', X) with edge weights A', head
  sigmoid(tau cos(z_i, z_j)) (or inner product, or an MLP on [z_i || z_j]); trained by Eq. 5:
  cross-entropy to the soft weight w'_ij on the positive-weight pairs of A' and to 0 on as many
  uniformly drawn pairs outside them.
- Learner loss (Eq. 9): L_priv (Eq. 7, cross-entropy of the surrogate on E_s against 0) +
  alpha ||A - A'||_F^2 (Eq. 8, both triangles; for the sparse learner over the parameterized
  entries, the others being equal to A by construction).
- Protocol: SITP (Eq. 10-11): every mu learner steps re-initialise the surrogate and train it for
  N1 epochs with theta fixed; then one Adam step on theta with the surrogate fixed. ADV: the same
  schedule without re-initialisation (the surrogate keeps its weights across updates).
- Output: A'' ~ Bernoulli(A') on the upper triangle (Sec. III-B.5).

graphpriv's decision (docs/ppgsl.md): the head's temperature tau defaults to 5; with the paper's tau = 1,
sigmoid(cos) lies in [0.27, 0.73] and the targets 0 and 1 of Eq. 5 are unreachable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import GCNConv
from torch_geometric.nn.conv.gcn_conv import gcn_norm

from graphpriv.data.graph import pair_codes
from graphpriv.data.splits import sample_non_edges
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.nn.gae import seeded
from graphpriv.nn.heap import retained_heap
from graphpriv.nn.sparse_features import sparse_features
from graphpriv.nn.weighted_gcn import NormalizedAdjacency, SymmetricGraph, gcn_propagate

__all__ = ["PPGSLOutput", "PPGSLSettings", "SurrogateAttacker", "fgp_bytes", "ppgsl"]


@dataclass(frozen=True)
class PPGSLSettings:
    """PPGSL hyperparameters (defaults: the paper's Sec. V-A.6 and App. C, Eq. 8 as written; tau,
    alpha and the surrogate's learning rate, which the paper leaves open or sets otherwise, are
    graphpriv's: docs/ppgsl.md "Decisions"). The estimator's config
    (:class:`graphpriv.methods.ppgsl.PPGSLConfig`) defaults to the normalised utility term instead.

    Attributes:
        alpha: utility weight (Eq. 9), >= 0. utility_normalisation: ``none`` (Eq. 8 as written:
            a sum over entries, so alpha's useful scale shrinks as 1 / |E|) or ``edges`` (L_util
            divided by ||A||_F^2 = 2 |E|: L_priv is a mean over E_s, and with both terms means one
            alpha is one trade-off on every graph). parameterization: ``sparse`` or ``fgp``.
        k: non-edge candidates per edge (sparse), >= 0. mu: surrogate update interval, >= 1.
        protocol: ``sitp`` or ``adv``. head: ``cos``, ``inner`` or ``mlp``. tau: temperature of
            the cos head. learner_steps: N2. surrogate_epochs: N1. learner_lr: eta_2 (Adam).
        surrogate_lr: eta_1 (Adam). hidden: encoder widths. fgp_max_bytes: FGP refuses graphs
            whose N x N parameters and optimizer state would exceed this.
    """

    alpha: float = 0.005
    utility_normalisation: str = "none"
    parameterization: str = "sparse"
    k: int = 1
    mu: int = 50
    protocol: str = "sitp"
    head: str = "cos"
    tau: float = 5.0
    learner_steps: int = 500
    surrogate_epochs: int = 100
    learner_lr: float = 0.5
    surrogate_lr: float = 0.01
    hidden: tuple[int, int] = (128, 64)
    fgp_max_bytes: int = 8 << 30

    def __post_init__(self) -> None:
        if not (self.alpha >= 0 and math.isfinite(self.alpha)):
            raise ConfigError(f"'alpha' must be a finite number >= 0 (got {self.alpha})")
        if self.k < 0:
            raise ConfigError(f"'k' must be >= 0 (got {self.k})")
        if self.mu < 1:
            raise ConfigError(f"'mu' must be >= 1 (got {self.mu})")
        if self.utility_normalisation not in ("edges", "none"):
            raise ConfigError(f"'utility_normalisation' must be 'edges' or 'none' (got {self.utility_normalisation!r})")
        if self.parameterization not in ("sparse", "fgp"):
            raise ConfigError(f"'parameterization' must be 'sparse' or 'fgp' (got {self.parameterization!r})")
        if self.protocol not in ("sitp", "adv"):
            raise ConfigError(f"'protocol' must be 'sitp' or 'adv' (got {self.protocol!r})")
        if self.head not in ("cos", "inner", "mlp"):
            raise ConfigError(f"'head' must be 'cos', 'inner' or 'mlp' (got {self.head!r})")
        if self.tau <= 0 or self.learner_steps < 0 or self.surrogate_epochs < 1:
            raise ConfigError("tau must be > 0, learner_steps >= 0 and surrogate_epochs >= 1")


@dataclass
class PPGSLOutput:
    """What :func:`ppgsl` returns.

    Attributes:
        published: ``[2, E'']`` int64 pairs (u < v) of the Bernoulli-sampled graph A''.
        weights: ``(pairs [2, P], w [P])`` of the learned A' (entries > 0 only).
        history: per learner step ``{"step", "priv", "util", "loss"}`` (every step) and
            ``surrogate_loss`` after each surrogate update.
        num_parameters: size of theta.
    """

    published: np.ndarray
    weights: tuple[np.ndarray, np.ndarray]
    history: list[dict[str, float]] = field(default_factory=list)
    num_parameters: int = 0


def fgp_bytes(num_nodes: int) -> int:
    """Memory the FGP learner needs: theta, its gradient, Adam's two moments and the dense A'
    and (theta + theta^T)/2 temporaries, six float32 N x N matrices."""
    return 6 * 4 * num_nodes * num_nodes


class SurrogateAttacker(nn.Module):
    """The surrogate f_phi + delta_varphi of PPGSL Sec. III-A: 2-layer GCN and a link head.

    Args:
        in_channels: feature width F, or None: identity features, i.e. the first layer's weight
            is a free ``[N, hidden[0]]`` matrix (an embedding; needs ``num_nodes``).
        hidden: encoder widths (128, 64). head: ``cos`` (tau cos), ``inner`` (z_i . z_j) or ``mlp``
            (2-layer MLP on [z_i || z_j]). tau: temperature of ``cos``. num_nodes: N.

    The layers are PyG ``GCNConv`` modules (their weights and biases); the normalised propagation
    D^-1/2 (A' + I) D^-1/2 is applied according to the form of the adjacency given to ``encode``.

    Shapes:
        encode(x [N, F] | None, adj) -> z [N, hidden[1]], with adj one of: (edge_index [2, 2P],
        edge_weight [2P]) (PyG message passing, differentiable in the weights);
        (:class:`~graphpriv.nn.weighted_gcn.SymmetricGraph`, pair weights [P]) (CSR products,
        differentiable in the weights, the learner's form); a
        :class:`~graphpriv.nn.weighted_gcn.NormalizedAdjacency` (fixed graph, surrogate training);
        a dense ``[N, N]`` tensor (FGP). logits(z, pairs [2, Q]) -> [Q] (sigmoid gives the link
        probability).
    """

    def __init__(self, in_channels: int | None, *, hidden: tuple[int, int] = (128, 64), head: str = "cos",
                 tau: float = 5.0, num_nodes: int | None = None) -> None:
        super().__init__()
        self.embedding = nn.Embedding(num_nodes, hidden[0]) if in_channels is None else None
        self.conv1 = GCNConv(hidden[0] if in_channels is None else in_channels, hidden[0])
        self.conv2 = GCNConv(hidden[0], hidden[1])
        self.head, self.tau = head, tau
        self.mlp = nn.Sequential(nn.Linear(2 * hidden[1], hidden[1]), nn.ReLU(), nn.Linear(hidden[1], 1)) \
            if head == "mlp" else None

    def first_linear(self, x: Tensor | None) -> Tensor:
        """X W_1, ``[N, hidden[0]]`` (W_1 itself for identity features)."""
        return self.embedding.weight if self.embedding is not None else self.conv1.lin(x)  # x dense or CSR

    def encode(self, x: Tensor | None, adj, *, xw1: Tensor | None = None) -> Tensor:
        """z = GCN(A', X); ``xw1`` (optional) is a precomputed :meth:`first_linear` (the learner
        step, where the surrogate is fixed)."""
        h = self.first_linear(x) if xw1 is None else xw1
        h = F.relu(_propagate(self.conv1, h, adj) + self.conv1.bias)
        return _propagate(self.conv2, self.conv2.lin(h), adj) + self.conv2.bias

    def logits(self, z: Tensor, pairs: Tensor) -> Tensor:
        if self.head == "cos":  # normalise once per node, not once per pair (and index_select's
            z = F.normalize(z, dim=-1)  # backward is an index_add, much faster than indexing's)
        a, b = z.index_select(0, pairs[0]), z.index_select(0, pairs[1])
        if self.head == "cos":
            return self.tau * (a * b).sum(-1)
        if self.head == "inner":
            return (a * b).sum(-1)
        return self.mlp(torch.cat([a, b], dim=-1)).squeeze(-1)


def _propagate(conv: GCNConv, h: Tensor, adj) -> Tensor:
    """D^-1/2 (A' + I) D^-1/2 h for the forms of A' that :meth:`SurrogateAttacker.encode` takes."""
    if isinstance(adj, NormalizedAdjacency):
        return adj(h)
    if isinstance(adj, Tensor):  # dense [N, N] (FGP), as PyG's DenseGCNConv normalises it
        a = adj + torch.eye(adj.size(0), dtype=adj.dtype)
        dis = a.sum(-1).clamp(min=1.0).rsqrt().unsqueeze(-1)
        return dis * (a @ (dis * h))
    if isinstance(adj[0], SymmetricGraph):
        return gcn_propagate(h, *adj)
    edge_index, edge_weight = adj
    edge_index, norm = gcn_norm(edge_index, edge_weight, h.size(0), add_self_loops=True)
    return conv.propagate(edge_index, x=h, edge_weight=norm)


class _Learner(nn.Module):
    """H_theta: sparse (one parameter per candidate pair) or FGP (N x N)."""

    def __init__(self, pairs: np.ndarray, num_nodes: int, candidates: np.ndarray | None) -> None:
        super().__init__()
        self.num_nodes = num_nodes
        self.num_edges = int(pairs.shape[1])  # |E| of the input: ||A||_F^2 = 2 |E|
        self.fgp = candidates is None
        if self.fgp:
            a = torch.zeros(num_nodes, num_nodes)
            a[pairs[0], pairs[1]] = 1.0
            a[pairs[1], pairs[0]] = 1.0
            self.register_buffer("target", a)
            self.theta = nn.Parameter(a.clone())
        else:
            self.register_buffer("cand", torch.from_numpy(candidates))
            self.graph = SymmetricGraph(self.cand, num_nodes)
            target = torch.zeros(candidates.shape[1])
            target[: pairs.shape[1]] = 1.0  # candidates = [edges, sampled non-edges]
            self.register_buffer("target", target)
            self.theta = nn.Parameter(target.clone())

    def dense(self) -> Tensor:
        """FGP's A' = clamp((theta + theta^T)/2, 0, 1) with a zero diagonal, ``[N, N]``."""
        sym = torch.clamp((self.theta + self.theta.T) / 2, 0.0, 1.0)
        return sym * (1.0 - torch.eye(self.num_nodes))

    def adjacency(self):
        """A' for message passing, differentiable in theta: the dense matrix (FGP), or every
        candidate pair in both directions with its weight, zeros included (sparse) -- a zero-weight
        edge changes nothing in the forward pass, but its gradient lets the learner add it."""
        if self.fgp:
            return self.dense()
        return self.graph, torch.clamp(self.theta, 0.0, 1.0)

    def weights(self) -> tuple[Tensor, Tensor]:
        """(pairs [2, P] with u < v, w [P] in (0, 1]) of A' (positive entries only)."""
        if self.fgp:
            upper = torch.triu(self.dense(), diagonal=1)
            idx = (upper > 0).nonzero().T
            return idx, upper[idx[0], idx[1]]
        w = torch.clamp(self.theta, 0.0, 1.0)
        keep = w > 0
        return self.cand[:, keep], w[keep]

    def utility_loss(self, normalisation: str = "none") -> Tensor:
        """||A - A'||_F^2 (Eq. 8), both triangles; ``normalisation="edges"`` divides it by
        ||A||_F^2 = 2 |E| (the share of the input's adjacency changed)."""
        if self.fgp:
            sym = torch.clamp((self.theta + self.theta.T) / 2, 0.0, 1.0)
            off = 1.0 - torch.eye(self.num_nodes)
            loss = (((self.target - sym) * off) ** 2).sum()
        else:
            loss = 2.0 * ((self.target - torch.clamp(self.theta, 0.0, 1.0)) ** 2).sum()
        return loss / (2 * max(self.num_edges, 1)) if normalisation == "edges" else loss


def _fixed(adj, pairs: Tensor, w: Tensor, num_nodes: int):
    """The surrogate's view of A' while theta is fixed: the dense matrix (FGP) or a
    :class:`NormalizedAdjacency` over the positive-weight pairs only (zero-weight candidates add
    nothing to the propagation, so leaving them out changes no output)."""
    return adj if isinstance(adj, Tensor) else NormalizedAdjacency(pairs, w, num_nodes)


def _non_pairs(codes: Tensor, num_nodes: int, count: int) -> Tensor:
    """``[2, count]`` uniform pairs u < v whose code u * N + v is not in the sorted ``codes``
    (rejection sampling with torch's generator, so ``seeded`` makes it reproducible)."""
    out = []
    need = count
    while need > 0:
        draw = need + need // 8 + 16  # collisions with A' are rare in sparse graphs
        u, v = torch.randint(num_nodes, (draw,)), torch.randint(num_nodes, (draw,))
        u, v = torch.minimum(u, v), torch.maximum(u, v)
        c = u * num_nodes + v
        ok = u != v
        if codes.numel():
            ok &= codes[torch.searchsorted(codes, c).clamp(max=codes.numel() - 1)] != c
        u, v = u[ok][:need], v[ok][:need]
        out.append(torch.stack([u, v]))
        need -= u.numel()
    return torch.cat(out, dim=1)


def _train_surrogate(model: SurrogateAttacker, optimizer: torch.optim.Optimizer, x: Tensor | None,
                     adj, pairs: Tensor, w: Tensor, num_nodes: int, epochs: int) -> float:
    """Eq. 5 with theta fixed: soft targets w on A's positive pairs (u < v), 0 on as many uniform
    pairs outside them (fresh each epoch)."""
    codes = torch.sort(pairs[0] * num_nodes + pairs[1]).values
    zeros = torch.zeros(pairs.size(1))
    loss = torch.tensor(0.0)
    for _ in range(epochs):
        model.train()
        optimizer.zero_grad()
        z = model.encode(x, adj)
        neg = _non_pairs(codes, num_nodes, pairs.size(1))
        loss = (F.binary_cross_entropy_with_logits(model.logits(z, pairs), w)
                + F.binary_cross_entropy_with_logits(model.logits(z, neg), zeros))
        loss.backward()
        optimizer.step()
    return float(loss.detach())


def _check_inputs(pairs: np.ndarray, num_nodes: int, sensitive: np.ndarray) -> None:
    if sensitive.size == 0:
        raise DatasetError("PPGSL needs sensitive links to protect; the sensitive set is empty")
    if pairs.size == 0:
        raise DatasetError("PPGSL needs a graph with edges; the input graph has none")
    for name, arr in (("graph", pairs), ("sensitive link", sensitive)):
        if arr.min() < 0 or arr.max() >= num_nodes:
            raise DatasetError(f"{name} ids must lie in [0, {num_nodes})")
    leaked = np.isin(pair_codes(sensitive, num_nodes), pair_codes(pairs, num_nodes))
    if leaked.any():
        u, v = sensitive[:, np.flatnonzero(leaked)[0]]
        raise DatasetError(f"{int(leaked.sum())} sensitive link(s) are still edges of the input graph (first: "
                           f"({u}, {v})); remove E_s from the graph before publishing")


def ppgsl(pairs: np.ndarray, num_nodes: int, sensitive: np.ndarray, x: np.ndarray | None, *,
          settings: PPGSLSettings, seed: int, progress=None) -> PPGSLOutput:
    """Learn a privacy-preserving graph and sample the published graph (PPGSL Algorithm 1).

    Args:
        pairs: ``[2, E]`` edges (u < v) of the graph to publish (sensitive links already removed).
        num_nodes: N. sensitive: ``[2, |E_s|]`` the hidden links to protect. x: ``[N, F]`` features
            or None. settings: :class:`PPGSLSettings`. seed: candidates, initialisation, sampling.
        progress: optional ``progress(done, total, **info)``.

    Returns:
        :class:`PPGSLOutput`.

    Raises:
        DatasetError: no sensitive links, no edges, ids out of range, sensitive links that are
            still edges. ConfigError: FGP on a graph whose N x N state exceeds ``fgp_max_bytes``.
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(2, -1)
    sensitive = np.asarray(sensitive, dtype=np.int64).reshape(2, -1)
    _check_inputs(pairs, num_nodes, sensitive)
    s = settings
    rng = np.random.default_rng([seed, 53])
    if s.parameterization == "fgp":
        need = fgp_bytes(num_nodes)
        if need > s.fgp_max_bytes:
            raise ConfigError(
                f"FGP on {num_nodes:,} nodes needs about {need / 2**30:.1f} GiB for its N x N parameters and "
                f"optimizer state (limit fgp_max_bytes = {s.fgp_max_bytes / 2**30:.1f} GiB); use the sparse "
                "parameterization (parameterization=sparse, k=1)")
        learner = _Learner(pairs, num_nodes, None)
    else:
        count = s.k * pairs.shape[1]
        added = sample_non_edges(num_nodes, count, forbidden=np.concatenate([pairs, sensitive], axis=1), rng=rng) \
            if count else np.empty((2, 0), np.int64)
        learner = _Learner(pairs, num_nodes, np.concatenate([pairs, added], axis=1))
    x_t = None if x is None else sparse_features(torch.as_tensor(x, dtype=torch.float32))
    sens = torch.from_numpy(sensitive)
    with seeded(seed), retained_heap():  # torch's RNG, restored afterwards; big tensors reuse the heap
        out = _optimise(learner, x_t, sens, num_nodes, s, progress)
    with torch.no_grad():
        wp, w = learner.weights()
        keep = torch.rand(w.shape, generator=torch.Generator().manual_seed(seed)) < w
    out.published = wp[:, keep].numpy().astype(np.int64)
    out.weights = (wp.numpy().astype(np.int64), w.detach().numpy())
    out.num_parameters = int(learner.theta.numel())
    return out


def _new_surrogate(x: Tensor | None, num_nodes: int, s: PPGSLSettings) -> tuple[SurrogateAttacker, torch.optim.Optimizer]:
    model = SurrogateAttacker(None if x is None else x.size(1), hidden=s.hidden, head=s.head, tau=s.tau,
                              num_nodes=num_nodes)
    return model, torch.optim.Adam(model.parameters(), lr=s.surrogate_lr)


def _optimise(learner: _Learner, x: Tensor | None, sens: Tensor, num_nodes: int, s: PPGSLSettings,
              progress) -> PPGSLOutput:
    optimizer = torch.optim.Adam(learner.parameters(), lr=s.learner_lr)
    history: list[dict[str, float]] = []
    surrogate, sur_opt = _new_surrogate(x, num_nodes, s)
    zeros = torch.zeros(sens.size(1))
    for step in range(s.learner_steps):
        if step % s.mu == 0:
            if s.protocol == "sitp" and step > 0:
                surrogate, sur_opt = _new_surrogate(x, num_nodes, s)
            with torch.no_grad():
                wp, w = learner.weights()
                adj = _fixed(learner.adjacency(), wp, w, num_nodes)
            surrogate.requires_grad_(True)
            sur_loss = _train_surrogate(surrogate, sur_opt, x, adj, wp, w, num_nodes, s.surrogate_epochs)
            surrogate.requires_grad_(False)
            surrogate.eval()
            with torch.no_grad():
                xw1 = surrogate.first_linear(x)  # fixed until the next surrogate update
            history.append({"step": step, "surrogate_loss": sur_loss})
        optimizer.zero_grad()
        z = surrogate.encode(x, learner.adjacency(), xw1=xw1)
        priv = F.binary_cross_entropy_with_logits(surrogate.logits(z, sens), zeros)
        util = learner.utility_loss(s.utility_normalisation)
        loss = priv + s.alpha * util
        loss.backward()
        optimizer.step()
        history.append({"step": step, "priv": priv.item(), "util": util.item(), "loss": loss.item()})
        if progress is not None:
            progress(step + 1, s.learner_steps, priv=history[-1]["priv"], util=history[-1]["util"])
    return PPGSLOutput(np.empty((2, 0), np.int64), (np.empty((2, 0), np.int64), np.empty(0)), history)

