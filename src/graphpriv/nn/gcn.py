"""Two-layer GCN encoder and node classifier (Kipf & Welling, ICLR 2017), built on PyG's GCNConv.

Used by the GAE (link-prediction utility, GAE attacks) and by the node-classification utility of
the sensitive-link protocol (:mod:`graphpriv.attacks.protocol`; Wu, Yang, Han, Wang, Wu,
"Learning-based Privacy-Preserving Graph Publishing Against Sensitive Link Inference Attacks",
IEEE TKDE 2025, Sec. V-A.3).
"""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import GCNConv
from torch_geometric.utils import to_torch_csr_tensor

from graphpriv.nn.sparse_features import sparse_features

__all__ = ["GCN", "sparse_adjacency", "train_node_classifier"]


def sparse_adjacency(edge_index: Tensor, num_nodes: int, edge_weight: Tensor | None = None) -> Tensor:
    """``[N, N]`` torch sparse CSR adjacency for GCNConv (sparse-dense products are several times
    faster than edge-wise scatter on CPU), weights as values when given (no gradient flows to
    them through GCN normalisation). torch's beta-state notices are silenced here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse (CSR tensor support|invariant checks)")
        return to_torch_csr_tensor(edge_index, edge_weight, size=(num_nodes, num_nodes))


class _SymmetricSpMM(torch.autograd.Function):
    """``adj @ h`` for a symmetric sparse CSR ``adj`` (GCNConv's normalised adjacency of an undirected
    graph), with ``adj @ grad`` as the gradient in ``h``: torch's own backward forms the transpose,
    a sort of every entry, at each step (on EdgeRand's 1.4M-edge release of Cora, 0.3 s of a 0.46 s
    GAE epoch). The same products as the transposed ones, bit for bit on one thread."""

    @staticmethod
    def forward(ctx, adj: Tensor, h: Tensor) -> Tensor:
        ctx.adj = adj
        return torch.sparse.mm(adj, h)

    @staticmethod
    def backward(ctx, grad: Tensor):
        return None, torch.sparse.mm(ctx.adj, grad)


class _UndirectedGCNConv(GCNConv):
    """PyG's GCNConv (same parameters, same forward) on an undirected graph given as a sparse CSR
    adjacency, whose products go through :class:`_SymmetricSpMM`."""

    def message_and_aggregate(self, adj_t: Tensor, x: Tensor) -> Tensor:
        if adj_t.layout == torch.sparse_csr and self.aggr == "add":
            return _SymmetricSpMM.apply(adj_t, x)
        return super().message_and_aggregate(adj_t, x)


class GCN(nn.Module):
    """``X -> ReLU(GCNConv) -> Dropout -> GCNConv`` on a fixed graph.

    Featureless graphs (``in_channels=None``) use a learned input embedding per node: since
    GCNConv(I) = Â I W = Â W, this is the identity-feature GCN with its first weight factorised.

    Args:
        in_channels: Feature width F, or None for featureless (needs ``num_nodes``).
        hidden_channels, out_channels: Layer widths. dropout: Dropout probability between layers.
        num_nodes: N (featureless only).

    Shapes:
        forward(x [N, F] or None, edge_index [2, 2|E|] both directions, or a sparse ``[N, N]``
        adjacency) -> [N, out_channels]. The graph must be undirected (symmetric): the sparse
        product's backward uses the adjacency as its own transpose, and the adjacency's values
        get no gradient (the graph is fixed).
    """

    def __init__(self, in_channels: int | None, hidden_channels: int, out_channels: int, *,
                 dropout: float = 0.0, num_nodes: int | None = None) -> None:
        super().__init__()
        if in_channels is None:
            if num_nodes is None:
                raise ValueError("a featureless GCN needs num_nodes")
            self.embedding = nn.Embedding(num_nodes, hidden_channels)
            in_channels = hidden_channels
        else:
            self.embedding = None
        self.conv1 = _UndirectedGCNConv(in_channels, hidden_channels, cached=True)
        self.conv2 = _UndirectedGCNConv(hidden_channels, out_channels, cached=True)
        self.dropout = dropout

    def forward(self, x: Tensor | None, edge_index: Tensor) -> Tensor:
        if self.embedding is not None:
            x = self.embedding.weight
        h = F.relu(self.conv1(x, edge_index))
        h = F.dropout(h, self.dropout, self.training)
        return self.conv2(h, edge_index)


def train_node_classifier(edge_index: Tensor, num_nodes: int, x: Tensor | None, y: Tensor,
                          train_mask: Tensor, *, hidden: int = 64, epochs: int = 200, lr: float = 0.01,
                          weight_decay: float = 5e-4, dropout: float = 0.5, seed: int = 0) -> Tensor:
    """Train a 2-layer GCN semi-supervised (cross-entropy on ``train_mask``); predict every node.

    Args:
        edge_index: ``[2, 2|E|]`` the (published) graph, both directions. num_nodes: N.
        x: ``[N, F]`` features or None (learned input embedding). y: ``[N]`` long labels.
        train_mask: ``[N]`` bool. hidden, epochs, lr, weight_decay, dropout: Kipf & Welling's
            setting (hidden 64 here). seed: Initialisation and dropout seed (global RNG is forked).

    Returns:
        ``[N]`` long predicted labels (last epoch).
    """
    adj = sparse_adjacency(edge_index, num_nodes)
    x = None if x is None else sparse_features(x)  # bag-of-words: the first layer costs the non-zeros
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = GCN(None if x is None else x.size(1), hidden, int(y.max()) + 1, dropout=dropout,
                    num_nodes=num_nodes)
        optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
        for _ in range(epochs):
            model.train()
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x, adj)[train_mask], y[train_mask])
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            return model(x, adj).argmax(dim=1)
