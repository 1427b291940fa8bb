"""Graph auto-encoder (Kipf & Welling, "Variational graph auto-encoders", NeurIPS BDL workshop 2016).

PyG's :class:`torch_geometric.nn.GAE` with the 2-layer GCN encoder of :mod:`graphpriv.nn.gcn`,
trained by its reconstruction loss (inner-product decoder, one uniformly sampled negative per
positive undirected edge per epoch). Used for the link-prediction utility of a published graph and by the
GAE+sim / GAE+ML attacks (Wu, Yang, Han, Wang, Wu, "Learning-based Privacy-Preserving Graph
Publishing Against Sensitive Link Inference Attacks", IEEE TKDE 2025, Sec. V-A.2 and V-A.3).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.nn import GAE
from torch_geometric.utils import negative_sampling

from graphpriv.nn.gcn import GCN, sparse_adjacency

__all__ = ["gae_embeddings", "seeded"]


@contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Seed torch and Python's ``random`` (PyG's negative sampling draws from it) inside the block,
    restoring both generators afterwards."""
    state = random.getstate()
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        random.seed(seed)
        try:
            yield
        finally:
            random.setstate(state)


def _recon_loss(model: GAE, z: Tensor, pos: Tensor, edge_index: Tensor, num_nodes: int) -> Tensor:
    """GAE reconstruction loss over each undirected edge once (the inner-product decoder is
    symmetric, so this is PyG's ``recon_loss`` on both directions at half the cost), with as many
    negatives from PyG's ``negative_sampling`` (which avoids every edge in either direction)."""
    neg = negative_sampling(edge_index, num_nodes=num_nodes, num_neg_samples=pos.size(1))
    pos_loss = -F.logsigmoid(model.decoder(z, pos, sigmoid=False)).mean()
    neg_loss = -F.logsigmoid(-model.decoder(z, neg, sigmoid=False)).mean()
    return pos_loss + neg_loss


def gae_embeddings(edge_index: Tensor, num_nodes: int, x: Tensor | None, *, hidden: int = 128,
                   out: int = 64, epochs: int = 200, lr: float = 0.001, seed: int = 0) -> Tensor:
    """Train a GAE on a graph and return its node embeddings.

    Args:
        edge_index: ``[2, 2|E|]`` both directions. num_nodes: N. x: ``[N, F]`` float features, or
            None for a learned input embedding (featureless graphs).
        hidden, out: Encoder widths (default [128, 64], the PPGSL surrogate's). epochs, lr: Adam
            (200, 0.001; PyG's example uses 0.01, which on noisy dense graphs such as EdgeRand
            releases collapses the encoder to constant embeddings, see docs/attacks.md).
        seed: Initialisation and negative-sampling seed (the global RNG is forked, not changed).

    Returns:
        ``[N, out]`` float embeddings (encoder in eval mode, no gradient).

    Raises:
        ValueError: a graph without edges (nothing to reconstruct).
    """
    if edge_index.numel() == 0:
        raise ValueError("the GAE needs at least one edge")
    pos = edge_index[:, edge_index[0] < edge_index[1]]
    adj = sparse_adjacency(edge_index, num_nodes)
    with seeded(seed):
        model = GAE(GCN(None if x is None else x.size(1), hidden, out, num_nodes=num_nodes))
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        for _ in range(epochs):
            model.train()
            optimizer.zero_grad()
            z = model.encode(x, adj)
            loss = _recon_loss(model, z, pos, edge_index, num_nodes)
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            return model.encode(x, adj)
