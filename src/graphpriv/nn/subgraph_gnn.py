"""Subgraph GNN link predictors: DRNL embedding -> GNN layers -> readout -> logit.

Source: DPLP (Ran, Ye, Hu, Huang, Xu, Fu, "Differentially Private Graph Neural Networks for Link
Prediction"), Sec. IV and VII-A ("hidden 32, ReLU, dropout"; Table III backbones); SEAL's
labelling trick (Zhang & Chen, NeurIPS 2018); DGCNN (Zhang, Cui, Neumann, Chen, AAAI 2018).
The model takes dense, padded batches
(:func:`graphpriv.linkpred.subgraphs.collate_dense`), on which the forward can run one example at a
time under ``torch.func.vmap`` (the reference per-subgraph DP-SGD sum,
:func:`graphpriv.privacy.engine.clipped_gradient_sum`; the SEAL attack's batches); layers are PyG's
dense convolutions.

DPLP's training (DP-SGD included: :mod:`graphpriv.linkpred.subgraph_clipping` takes the
per-subgraph clipped sum from it) and scoring use a
:class:`SparseBatch` (:func:`graphpriv.linkpred.subgraphs.collate_sparse`) instead: the subgraphs as one
disjoint union, the same layers' parameters applied by sparse aggregation, at a cost of O(nodes +
edges) instead of O(B n^2) for a batch padded to its largest subgraph n (1-hop subgraphs of PolBlogs
average 125 nodes but a batch of 128 pads to about 330). Only the rows the readout reads are
computed in the last layer (the two targets, for the GCN / SAGE / GIN readout). Dropout draws the
dense batch's random numbers (one ``[B, n, width]`` uniform tensor per layer) and uses those of the
rows it keeps, so the sparse forward is the dense one, with the same draws, up to floating-point
summation order.
"""

from __future__ import annotations

import enum
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn.dense import DenseGCNConv, DenseGINConv, DenseSAGEConv


class Backbone(str, enum.Enum):
    """Message-passing backbone: ``gcn`` (default), ``sage``, ``gin`` or ``dgcnn``."""

    GCN = "gcn"
    SAGE = "sage"
    GIN = "gin"
    DGCNN = "dgcnn"


def dropout(x: Tensor, p: float, training: bool) -> Tensor:
    """Inverted dropout from a uniform draw (``F.dropout``'s bernoulli_ is several times slower on
    CPU under ``vmap``); same distribution: each entry kept with probability 1 - p, scaled 1/(1-p)."""
    if not training or p == 0.0:
        return x
    return x * (torch.rand_like(x) >= p) / (1.0 - p)


def _conv(backbone: Backbone, width: int, out: int) -> nn.Module:
    if backbone is Backbone.SAGE:
        return DenseSAGEConv(width, out)
    if backbone is Backbone.GIN:
        return DenseGINConv(nn.Sequential(nn.Linear(width, out), nn.ReLU(), nn.Linear(out, out)))
    return DenseGCNConv(width, out)


def _propagate(conv: nn.Module, x: Tensor, adj: Tensor, mask: Tensor) -> Tensor:
    """One layer; ``adj`` carries self-loops on real nodes (GCN's A + I; GIN's (1 + 0) x + A x)."""
    if isinstance(conv, DenseSAGEConv):
        eye = torch.eye(adj.size(-1), dtype=adj.dtype)
        return conv(x, adj * (1 - eye), mask)
    return conv(x, adj, mask, add_loop=False)


class _SymmetricProduct(torch.autograd.Function):
    """``adjacency @ x`` for a constant symmetric sparse ``adjacency``, whose backward is
    ``adjacency @ grad`` (A^T = A): torch's own backward of a CSR product transposes the matrix on
    every call, 12x the cost of the product itself on DPLP's Yeast k = 4 batches
    (``benchmarks/bench_subgraph_gcn.py``)."""

    @staticmethod
    def forward(ctx, adjacency: Tensor, x: Tensor) -> Tensor:
        ctx.adjacency = adjacency
        return adjacency @ x

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[None, Tensor]:
        return None, ctx.adjacency @ grad


def symmetric_product(adjacency: Tensor, x: Tensor) -> Tensor:
    """``adjacency @ x`` (``[T, T]`` sparse, symmetric, constant; ``[T, F]`` -> ``[T, F]``), with the
    gradient for ``x`` taken as ``adjacency @ grad``. The caller guarantees the symmetry (a GCN
    normalisation of an undirected graph, :attr:`SparseBatch.gcn_adjacency`)."""
    return _SymmetricProduct.apply(adjacency, x)


@dataclass(frozen=True)
class SparseBatch:
    """B subgraphs as one graph (their disjoint union), without padding.

    Attributes:
        z: ``[T]`` long DRNL labels (clamped); subgraph b's nodes are ``ptr[b]:ptr[b+1]``, its
            target pair first. owner: ``[T]`` long, each node's subgraph. local: ``[T]`` long, its
            position in its subgraph. ptr: ``[B + 1]`` long.
        degree: ``[T]`` float, each node's neighbours in its subgraph (no self-loop).
        target_src, target_slot: ``[E_t]`` long, the directed edges into a target: their source
            node and the target's position in :attr:`targets` (``2 b + local``).
        width: n, the largest subgraph (what the dense batch is padded to; the dropout draws'
            width).
        load_edges: ``() -> (src [2M], dst [2M])`` long, every edge in both directions, built on
            first use of :attr:`src` / :attr:`dst` (the model's layers read the sparse matrices
            below instead; the edge list is for checks and references).
        load_adjacency: ``() -> (crow [T + 1], col [2M + T])`` long, the CSR pattern of A + I
            (each row's columns in increasing order), built on first use of
            :attr:`gcn_adjacency`, :attr:`adjacency` or :attr:`loop_adjacency`.
    """

    z: Tensor
    owner: Tensor
    local: Tensor
    ptr: Tensor
    degree: Tensor
    target_src: Tensor
    target_slot: Tensor
    width: int
    load_edges: Callable[[], tuple[Tensor, Tensor]]
    load_adjacency: Callable[[], tuple[Tensor, Tensor]]

    @property
    def num_subgraphs(self) -> int:
        """B."""
        return int(self.ptr.numel() - 1)

    @cached_property
    def targets(self) -> Tensor:
        """``[2B]`` long: the two targets of each subgraph, ``(u_0, v_0, u_1, v_1, ...)``."""
        return (self.ptr[:-1].unsqueeze(-1) + torch.arange(2)).reshape(-1)

    @cached_property
    def _edges(self) -> tuple[Tensor, Tensor]:
        return self.load_edges()

    @property
    def src(self) -> Tensor:
        """``[2M]`` long: the source of each directed edge."""
        return self._edges[0]

    @cached_property
    def _pattern(self) -> tuple[Tensor, Tensor]:
        """``(crow [T + 1], col [2M + T])`` of A + I: sorted rows and columns, built once per batch
        (no coalescing sort) and shared by the three matrices below."""
        return self.load_adjacency()

    def _pattern_rows(self) -> Tensor:
        """``[2M + T]`` long: the row of each entry of :attr:`_pattern` (not kept: a model builds one
        of the three matrices)."""
        return torch.repeat_interleave(torch.arange(self.z.numel()), self._pattern[0].diff())

    def _csr(self, values: Tensor) -> Tensor:
        crow, col = self._pattern
        with warnings.catch_warnings():  # "sparse CSR support is in beta": the product is all it is used for
            warnings.simplefilter("ignore", UserWarning)
            return torch.sparse_csr_tensor(crow, col, values, (self.z.numel(),) * 2)

    @cached_property
    def gcn_adjacency(self) -> Tensor:
        """``[T, T]`` sparse CSR D^-1/2 (A + I) D^-1/2 of the batch (D counting the self-loop), built
        once and shared by every GCN layer: one sparse product per layer instead of a gather and a
        scatter of every edge's message (``benchmarks/bench_subgraph_gcn.py``)."""
        dis = (self.degree + 1).clamp(min=1).pow(-0.5)
        return self._csr(dis[self._pattern_rows()] * dis[self._pattern[1]])

    @cached_property
    def loop_adjacency(self) -> Tensor:
        """``[T, T]`` sparse CSR A + I of the batch, unit values: GIN's ``(1 + 0) x + A x`` in one
        product (symmetric, so :func:`symmetric_product` applies)."""
        return self._csr(torch.ones(self._pattern[1].numel()))

    @cached_property
    def adjacency(self) -> Tensor:
        """``[T, T]`` sparse CSR A of the batch on the A + I pattern (the diagonal entries stored as
        0): SAGE's neighbour sum in one product (symmetric, so :func:`symmetric_product` applies)."""
        return self._csr((self._pattern[1] != self._pattern_rows()).to(torch.float32))

    @property
    def dst(self) -> Tensor:
        """``[2M]`` long: the destination of each directed edge."""
        return self._edges[1]


def _aggregate(conv: nn.Module, x: Tensor, batch: SparseBatch, last: bool) -> Tensor:
    """One layer of ``conv`` (PyG's dense layer, its own parameters) on the sparse batch: every node,
    or (``last``) the two targets of each subgraph only, ``[T, F] -> [T or 2B, F']``. Self-loops as
    in the dense forward (GCN: D^-1/2 (A + I) D^-1/2 with D counting the loop; GIN: (A + I) x; SAGE:
    the mean over the neighbours, plus the root term).

    Every node: one sparse product per layer with a matrix of the batch's A + I pattern, built once
    per batch (GCN's normalised A + I, SAGE's A, GIN's A + I); the targets only: a gather and a
    scatter of the messages into the 2B targets (:attr:`SparseBatch.target_src`)."""
    if not last:
        if isinstance(conv, DenseSAGEConv):
            total = symmetric_product(batch.adjacency, x)
            out = conv.lin_rel(total / batch.degree.clamp(min=1).unsqueeze(-1)) + conv.lin_root(x)
            return F.normalize(out, p=2.0, dim=-1) if conv.normalize else out
        if isinstance(conv, DenseGINConv):
            return conv.nn(symmetric_product(batch.loop_adjacency, x))
        out = conv.lin(symmetric_product(batch.gcn_adjacency, x))
        return out if conv.bias is None else out + conv.bias
    rows, src, slot = batch.targets, batch.target_src, batch.target_slot
    x_rows = x[rows]
    if isinstance(conv, DenseSAGEConv):
        total = torch.zeros_like(x_rows).index_add_(0, slot, x[src])
        out = conv.lin_rel(total / batch.degree[rows].clamp(min=1).unsqueeze(-1)) + conv.lin_root(x_rows)
        return F.normalize(out, p=2.0, dim=-1) if conv.normalize else out
    if isinstance(conv, DenseGINConv):
        return conv.nn(x_rows + torch.zeros_like(x_rows).index_add_(0, slot, x[src]))
    dis = (batch.degree + 1).clamp(min=1).pow(-0.5)
    dis_rows = dis[rows]
    dst_dis = dis_rows[slot]
    weight = (dst_dis * dis[src]).unsqueeze(-1)
    agg = torch.zeros_like(x_rows).index_add_(0, slot, x[src] * weight) + x_rows * (dis_rows * dis_rows).unsqueeze(-1)
    out = conv.lin(agg)
    return out if conv.bias is None else out + conv.bias


class RowConv1d(nn.Conv1d):
    """DGCNN's first 1-D convolution, whose kernel and stride are the width of a pooled row: a linear
    map of each row, computed as such. It is the same function, with the same parameters, as
    :class:`torch.nn.Conv1d` on the rows laid end to end, and avoids that layer's backward, several
    times slower on CPU for SEAL's ``sort_k`` of a few hundred.

    Args: as :class:`torch.nn.Conv1d`, with ``in_channels`` 1 and ``stride`` equal to
    ``kernel_size`` (the defaults otherwise).

    Shapes: ``[B, R, kernel_size]`` rows -> ``[B, R, out_channels]``.

    Raises:
        ValueError: another ``in_channels``, ``stride``, ``padding``, ``dilation`` or ``groups`` (the
            layer would not be a map of each row).
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if (self.in_channels, self.stride, self.padding, self.dilation, self.groups) != (
                1, self.kernel_size, (0,), (1,), 1):
            raise ValueError("RowConv1d is a map of each row: in_channels 1, stride = kernel_size, no padding, "
                             f"dilation or groups (got in_channels {self.in_channels}, stride {self.stride}, "
                             f"kernel_size {self.kernel_size}, padding {self.padding}, dilation {self.dilation}, "
                             f"groups {self.groups})")

    def forward(self, rows: Tensor) -> Tensor:
        """``[B, R, kernel_size] -> [B, R, out_channels]``: each row times the flattened kernel, plus the bias."""
        return F.linear(rows, self.weight.flatten(1), self.bias)


class SubgraphGNN(nn.Module):
    """Score the target pair (local nodes 0 and 1) of DRNL-labelled subgraphs.

    ``gcn``/``sage``/``gin``: message passing with ReLU and dropout, then the Hadamard product of
    the two target embeddings -> Linear-ReLU-Dropout-Linear. ``dgcnn``: tanh GCN layers whose
    outputs are concatenated (plus a 1-channel layer), SortPooling of the ``sort_k`` nodes with the
    largest last channel, two 1-D convolutions and an MLP (the whole subgraph is read out).

    Args:
        num_labels: Size of the DRNL embedding table. backbone: see :class:`Backbone`.
        hidden: Width (default 32). num_layers: Message-passing layers (k for path subgraphs,
            h for neighbourhood ones). dropout: Dropout probability. sort_k: SortPooling size.
            dense: DGCNN's dense layer after the 1-D convolutions (default ``hidden``; SEAL: 128).

    Shapes:
        - input: ``z [B, n]`` long, ``adj [B, n, n]`` float with self-loops, ``mask [B, n]`` bool
          (:func:`~graphpriv.linkpred.subgraphs.collate_dense`); or one :class:`SparseBatch` of the
          same B subgraphs (:func:`~graphpriv.linkpred.subgraphs.collate_sparse`).
        - output: logits ``[B]``.
    """

    def __init__(self, num_labels: int, *, backbone: Backbone | str = Backbone.GCN, hidden: int = 32,
                 num_layers: int = 2, dropout: float = 0.5, sort_k: int = 10, dense: int | None = None) -> None:
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"'num_layers' must be >= 1 (got {num_layers})")
        self.backbone = Backbone(backbone)
        self.dropout, self.sort_k = dropout, sort_k
        self.embedding = nn.Embedding(num_labels, hidden)
        if self.backbone is Backbone.DGCNN:
            self.convs = nn.ModuleList([DenseGCNConv(hidden, hidden) for _ in range(num_layers)]
                                       + [DenseGCNConv(hidden, 1)])
            total = hidden * num_layers + 1
            self.conv1 = RowConv1d(1, 16, kernel_size=total, stride=total)
            self.conv2 = nn.Conv1d(16, 32, kernel_size=5, stride=1)
            width = 32 * ((sort_k // 2) - 5 + 1)
            if width <= 0:
                raise ValueError(f"'sort_k' must be >= 10 for DGCNN (got {sort_k})")
            self.lin1 = nn.Linear(width, dense or hidden)
        else:
            self.convs = nn.ModuleList(_conv(self.backbone, hidden, hidden) for _ in range(num_layers))
            self.lin1 = nn.Linear(hidden, hidden)
        self.lin2 = nn.Linear(self.lin1.out_features, 1)

    def forward(self, z: Tensor | SparseBatch, adj: Tensor | None = None, mask: Tensor | None = None) -> Tensor:
        """Logit of "(node 0, node 1) is an edge" for each subgraph, ``[B]``: of the dense batch
        ``(z, adj, mask)``, or of the :class:`SparseBatch` ``z`` (the same function)."""
        if isinstance(z, SparseBatch):
            return self._forward_sparse(z)
        x = self.embedding(z) * mask.unsqueeze(-1)
        if self.backbone is Backbone.DGCNN:
            out = self._sort_pool_readout(x, adj, mask)
        else:
            for conv in self.convs:
                x = dropout(F.relu(_propagate(conv, x, adj, mask)), self.dropout, self.training)
            out = x[:, 0] * x[:, 1]
        return self._head(out)

    def _head(self, out: Tensor) -> Tensor:
        out = dropout(F.relu(self.lin1(out)), self.dropout, self.training)
        return self.lin2(out).squeeze(-1)

    def _forward_sparse(self, batch: SparseBatch) -> Tensor:
        x = self.embedding(batch.z)
        if self.backbone is Backbone.DGCNN:
            layers = []
            for conv in self.convs:
                x = torch.tanh(_aggregate(conv, x, batch, last=False))
                layers.append(x)
            return self._head(self._readout(self._sort_rows(layers, batch)))
        for i, conv in enumerate(self.convs):
            last = i == len(self.convs) - 1
            x = F.relu(_aggregate(conv, x, batch, last))
            if self.training and self.dropout > 0.0:  # the dense batch's draws, at the rows kept
                r = torch.rand(batch.num_subgraphs, batch.width, x.size(-1), dtype=x.dtype)
                r = r[:, :2].reshape(-1, x.size(-1)) if last else r[batch.owner, batch.local]
                x = x * (r >= self.dropout) / (1.0 - self.dropout)
        return self._head(x[0::2] * x[1::2])

    def _sort_pool_readout(self, x: Tensor, adj: Tensor, mask: Tensor) -> Tensor:
        layers = []
        for conv in self.convs:
            x = torch.tanh(conv(x, adj, mask, add_loop=False))
            layers.append(x)
        return self._readout(self._dense_rows(torch.cat(layers, dim=-1), mask))  # h: [B, n, total]

    def _dense_rows(self, h: Tensor, mask: Tensor) -> Tensor:
        """SortPooling of the dense batch's rows ``h [B, n, total]`` (rows outside ``mask [B, n]``
        are padding): each subgraph's ``sort_k`` rows of largest last channel, in decreasing order,
        zero rows below its size, ``[B, sort_k, total]``."""
        n = h.size(1)
        if n < self.sort_k:  # pad so that top-k always exists; padding rows are masked out
            h = F.pad(h, (0, 0, 0, self.sort_k - n))
            mask = F.pad(mask, (0, self.sort_k - n))
        score = h[..., -1].masked_fill(~mask, float("-inf"))
        top = torch.topk(score, self.sort_k, dim=1).indices  # [B, k]
        pooled = torch.gather(h, 1, top.unsqueeze(-1).expand(-1, -1, h.size(-1)))
        return pooled * torch.gather(mask, 1, top).unsqueeze(-1)

    def _sort_rows(self, layers: list[Tensor], batch: SparseBatch) -> Tensor:
        """SortPooling of the sparse batch's node rows, the concatenation of ``layers`` (each ``[T, *]``,
        ``total`` columns in all; the score is the last column): the rows :meth:`_dense_rows`
        takes from the dense layout, ``[B, sort_k, total]``, bit for bit (the same
        ``topk`` of the same padded score matrix, so ties fall the same way), without scattering
        every row into that layout (``[B, n, total]``, n the largest subgraph: most of an
        evaluation pass on SEAL's Facebook at k = 4; only the scores are laid out, ``[B, n]``) and
        without concatenating every node's row (only the ``B * sort_k`` rows taken are)."""
        last = layers[-1]
        width = max(batch.width, self.sort_k)
        score = last.new_full((batch.num_subgraphs, width), float("-inf")).index_put((batch.owner, batch.local),
                                                                                     last[:, -1])
        top = torch.topk(score, self.sort_k, dim=1).indices  # [B, k]
        valid = top < batch.ptr.diff().unsqueeze(1)  # a padding position: the subgraph is smaller than k
        rows = (batch.ptr[:-1].unsqueeze(1) + top).clamp(max=max(last.size(0) - 1, 0))
        taken = torch.cat([layer[rows] for layer in layers], dim=-1)
        # a padding position's row is the next subgraph's node: torch.where (not a product with the mask)
        # keeps its values, NaN or inf included, and its gradient out of this subgraph, which DP-SGD's
        # per-subgraph clipping relies on (graphpriv.linkpred.subgraph_clipping)
        return torch.where(valid.unsqueeze(-1), taken, taken.new_zeros(()))

    def _readout(self, pooled: Tensor) -> Tensor:
        """The two 1-D convolutions of the pooled rows ``[B, sort_k, total]``:
        ``[B, 32 * (sort_k // 2 - 4)]``."""
        out = F.relu(self.conv1(pooled)).transpose(1, 2)
        out = F.max_pool1d(out, 2, 2)  # [B, 16, sort_k // 2]
        return F.relu(self.conv2(out)).flatten(1)


def bce_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Mean binary cross-entropy with logits (``[B]``, ``[B]`` -> scalar)."""
    return F.binary_cross_entropy_with_logits(logits, targets)


@torch.no_grad()
def predict(model: nn.Module, batches) -> Tensor:
    """Concatenated sigmoid scores of ``model`` over an iterable of collated input tuples."""
    model.eval()
    return torch.cat([torch.sigmoid(model(*inputs)) for inputs in batches])
