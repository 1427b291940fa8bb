"""Subgraph GNN link predictors: DRNL embedding -> GNN layers -> readout -> logit.

Source: DPLP (Ran, Ye, Hu, Huang, Xu, Fu, "Differentially Private Graph Neural Networks for Link
Prediction"), Sec. IV and VII-A ("hidden 32, ReLU, dropout"; Table III backbones); SEAL's
labelling trick (Zhang & Chen, NeurIPS 2018); DGCNN (Zhang, Cui, Neumann, Chen, AAAI 2018).
Batches are dense and padded
(:func:`graphpriv.linkpred.subgraphs.collate_dense`) so that the forward runs on one example at a
time under ``torch.func.vmap`` for per-subgraph DP-SGD; layers are PyG's dense convolutions.
"""

from __future__ import annotations

import enum

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

    Shapes:
        - input: ``z [B, n]`` long, ``adj [B, n, n]`` float with self-loops, ``mask [B, n]`` bool.
        - output: logits ``[B]``.
    """

    def __init__(self, num_labels: int, *, backbone: Backbone | str = Backbone.GCN, hidden: int = 32,
                 num_layers: int = 2, dropout: float = 0.5, sort_k: int = 10) -> None:
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
            self.conv1 = nn.Conv1d(1, 16, kernel_size=total, stride=total)
            self.conv2 = nn.Conv1d(16, 32, kernel_size=5, stride=1)
            width = 32 * ((sort_k // 2) - 5 + 1)
            if width <= 0:
                raise ValueError(f"'sort_k' must be >= 10 for DGCNN (got {sort_k})")
            self.lin1 = nn.Linear(width, hidden)
        else:
            self.convs = nn.ModuleList(_conv(self.backbone, hidden, hidden) for _ in range(num_layers))
            self.lin1 = nn.Linear(hidden, hidden)
        self.lin2 = nn.Linear(hidden, 1)

    def forward(self, z: Tensor, adj: Tensor, mask: Tensor) -> Tensor:
        """Logit of "(node 0, node 1) is an edge" for each subgraph, ``[B]``."""
        x = self.embedding(z) * mask.unsqueeze(-1)
        if self.backbone is Backbone.DGCNN:
            out = self._sort_pool_readout(x, adj, mask)
        else:
            for conv in self.convs:
                x = dropout(F.relu(_propagate(conv, x, adj, mask)), self.dropout, self.training)
            out = x[:, 0] * x[:, 1]
        out = dropout(F.relu(self.lin1(out)), self.dropout, self.training)
        return self.lin2(out).squeeze(-1)

    def _sort_pool_readout(self, x: Tensor, adj: Tensor, mask: Tensor) -> Tensor:
        layers = []
        for conv in self.convs:
            x = torch.tanh(conv(x, adj, mask, add_loop=False))
            layers.append(x)
        h = torch.cat(layers, dim=-1)  # [B, n, total]
        n = h.size(1)
        if n < self.sort_k:  # pad so that top-k always exists; padding rows are masked out
            h = F.pad(h, (0, 0, 0, self.sort_k - n))
            mask = F.pad(mask, (0, self.sort_k - n))
        score = h[..., -1].masked_fill(~mask, float("-inf"))
        top = torch.topk(score, self.sort_k, dim=1).indices  # [B, k]
        pooled = torch.gather(h, 1, top.unsqueeze(-1).expand(-1, -1, h.size(-1)))
        pooled = pooled * torch.gather(mask, 1, top).unsqueeze(-1)
        out = F.relu(self.conv1(pooled.reshape(pooled.size(0), 1, -1)))
        out = F.max_pool1d(out, 2, 2)
        out = F.relu(self.conv2(out))
        return out.flatten(1)


def bce_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Mean binary cross-entropy with logits (``[B]``, ``[B]`` -> scalar)."""
    return F.binary_cross_entropy_with_logits(logits, targets)


@torch.no_grad()
def predict(model: nn.Module, batches) -> Tensor:
    """Concatenated sigmoid scores of ``model`` over an iterable of collated input tuples."""
    model.eval()
    return torch.cat([torch.sigmoid(model(*inputs)) for inputs in batches])
