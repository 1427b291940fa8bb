"""Subgraph GNN link predictor: DRNL embedding -> GNN layers -> Hadamard readout -> MLP.

Source: DPLP (Ran et al.), Sec. IV and VII ("GCN, hidden 32, ReLU, dropout"); SEAL's labelling
trick (Zhang & Chen, 2018); specs/dplp-subgraph.md step 5. Batches are dense and padded
(:func:`graphpriv.linkpred.subgraphs.collate_dense`), so the forward runs one example at a time
under ``torch.func.vmap`` for per-subgraph DP-SGD.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn.dense import DenseGCNConv


class SubgraphGCN(nn.Module):
    """GCN over DRNL-labelled subgraphs, scoring the target pair (nodes 0 and 1).

    Args:
        num_labels: Size of the DRNL embedding table (labels 0..num_labels-1).
        hidden: Width of every layer (default 32).
        num_layers: Message-passing layers (k for path subgraphs, h for neighbourhood ones).
        dropout: Dropout probability (default 0.5).

    Shapes:
        - input: ``z [B, n]`` long, ``adj [B, n, n]`` float (self-loops included), ``mask [B, n]``.
        - output: logits ``[B]``.
    """

    def __init__(self, num_labels: int, *, hidden: int = 32, num_layers: int = 2,
                 dropout: float = 0.5) -> None:
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"'num_layers' must be >= 1 (got {num_layers})")
        self.embedding = nn.Embedding(num_labels, hidden)
        self.convs = nn.ModuleList(DenseGCNConv(hidden, hidden) for _ in range(num_layers))
        self.lin1 = nn.Linear(hidden, hidden)
        self.lin2 = nn.Linear(hidden, 1)
        self.dropout = dropout

    def forward(self, z: Tensor, adj: Tensor, mask: Tensor) -> Tensor:
        """Logit of "(node 0, node 1) is an edge" for each subgraph, ``[B]``."""
        x = self.embedding(z) * mask.unsqueeze(-1)
        for conv in self.convs:
            x = conv(x, adj, mask, add_loop=False)
            x = F.dropout(F.relu(x), p=self.dropout, training=self.training)
        pair = x[:, 0] * x[:, 1]
        out = F.dropout(F.relu(self.lin1(pair)), p=self.dropout, training=self.training)
        return self.lin2(out).squeeze(-1)


def bce_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Mean binary cross-entropy with logits (``[B]``, ``[B]`` -> scalar)."""
    return F.binary_cross_entropy_with_logits(logits, targets)


@torch.no_grad()
def predict(model: nn.Module, batches) -> Tensor:
    """Concatenated sigmoid scores of ``model`` over an iterable of collated input tuples."""
    model.eval()
    return torch.cat([torch.sigmoid(model(*inputs)) for inputs in batches])
