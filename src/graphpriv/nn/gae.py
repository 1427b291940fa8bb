"""Graph auto-encoder (Kipf & Welling, "Variational graph auto-encoders", NeurIPS BDL workshop 2016).

PyG's :class:`torch_geometric.nn.GAE` with the 2-layer GCN encoder of :mod:`graphpriv.nn.gcn`,
trained by its reconstruction loss (inner-product decoder, one uniformly sampled negative per
positive undirected edge per epoch). Used for the link-prediction utility of a published graph and by the
GAE+sim / GAE+ML attacks (Wu, Yang, Han, Wang, Wu, "Learning-based Privacy-Preserving Graph
Publishing Against Sensitive Link Inference Attacks", IEEE TKDE 2025, Sec. V-A.2 and V-A.3).

On a graph with more than ``sample_above`` edges (a dense release, e.g. EdgeRand at a small
epsilon: 1.4M edges on Cora) each epoch's loss is taken on a fresh uniform sample of
``edges_per_epoch`` edges, with as many negatives drawn by a vectorised rejection over the sorted
pair codes (:func:`graphpriv.data.graph.sample_absent_pairs`): an unbiased estimate of the full
loss and of its gradient (minibatch training), at a cost per epoch that no longer grows with the
edge count, besides the encoder's sparse products. Graphs up to ``sample_above`` edges train as
before, on every edge with the negatives of PyG's ``negative_sampling``, drawn by
:class:`graphpriv.nn.negative_sampling.NegativeSampler` (the same draws, bit for bit, 4.4x
faster a draw on SEAL's Facebook graph: docs/benchmarks.md).

:func:`gae_embeddings` keeps its last few results (:data:`MEMO_SIZE`): the synthesis protocols
train a GAE on a synthetic graph for its link-prediction utility and the GAE+sim attack trains
the same GAE on the same graph with the same seed; the second call returns a copy of the first's
embeddings instead of training again (the training is deterministic for given inputs and seed,
so the values are those a second training gives).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.nn import GAE

from graphpriv.data.graph import pair_codes, sample_absent_pairs
from graphpriv.memo import Memo, array_digest
from graphpriv.nn.gcn import GCN, sparse_adjacency
from graphpriv.nn.negative_sampling import NegativeSampler
from graphpriv.nn.sparse_features import sparse_features

__all__ = ["EDGES_PER_EPOCH", "MEMO_MAX_VALUES", "MEMO_SIZE", "SAMPLE_ABOVE", "gae_embeddings", "seeded"]

#: Graphs with more edges than this train on sampled edges (2**17, 131,072; e.g. EdgeRand at epsilon 4
#: on Cora, about 70,000 edges, keeps full epochs; the committed tables above it: docs/benchmarks.md).
SAMPLE_ABOVE = 2**17
#: Positive edges per epoch on those graphs (2**15, and as many negatives).
EDGES_PER_EPOCH = 2**15
#: How many results :func:`gae_embeddings` keeps (least recently used dropped first), each of at
#: most ``MEMO_MAX_VALUES`` floats (N x out; 64 MiB of float32; larger results are not kept).
MEMO_SIZE = 4
MEMO_MAX_VALUES = 2**24

_MEMO = Memo(MEMO_SIZE)


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


def _recon_loss(model: GAE, z: Tensor, pos: Tensor, neg: Tensor) -> Tensor:
    """GAE reconstruction loss over each undirected positive pair once (the inner-product decoder is
    symmetric, so this is PyG's ``recon_loss`` on both directions at half the cost) and the
    negatives ``neg``; ``[N, d], [2, P], [2, Q] -> scalar``."""
    pos_loss = -F.logsigmoid(model.decoder(z, pos, sigmoid=False)).mean()
    neg_loss = -F.logsigmoid(-model.decoder(z, neg, sigmoid=False)).mean()
    return pos_loss + neg_loss


class _EpochPairs:
    """The positives and negatives of each epoch: every edge and as many negatives from PyG's
    ``negative_sampling`` (which avoids every edge in either direction; draws from Python's
    ``random``), or, above ``sample_above`` edges, ``per_epoch`` uniform distinct edges and as many
    uniform distinct non-edges (numpy Generator ``default_rng([seed, 31])``)."""

    def __init__(self, edge_index: Tensor, pos: Tensor, num_nodes: int, per_epoch: int | None,
                 sample_above: int, seed: int) -> None:
        self.edge_index, self.pos, self.num_nodes = edge_index, pos, num_nodes
        self.sampled = per_epoch is not None and pos.size(1) > sample_above
        if not self.sampled:
            self.negatives = NegativeSampler(edge_index, num_nodes)
        else:
            self.per_epoch = per_epoch
            self.pairs = pos.numpy()
            self.codes = np.sort(pair_codes(self.pairs, num_nodes))
            self.rng = np.random.default_rng([seed, 31])

    def draw(self) -> tuple[Tensor, Tensor]:
        """``(pos [2, P], neg [2, P])`` long for one epoch."""
        if not self.sampled:
            return self.pos, self.negatives.draw(self.pos.size(1))
        pos = self.pairs[:, self.rng.choice(self.pairs.shape[1], self.per_epoch, replace=False)]
        neg = sample_absent_pairs(self.codes, self.num_nodes, self.per_epoch, self.rng)
        return torch.from_numpy(pos), torch.from_numpy(neg)


def gae_embeddings(edge_index: Tensor, num_nodes: int, x: Tensor | None, *, hidden: int = 128,
                   out: int = 64, epochs: int = 200, lr: float = 0.001, seed: int = 0,
                   edges_per_epoch: int | None = EDGES_PER_EPOCH, sample_above: int = SAMPLE_ABOVE) -> Tensor:
    """Train a GAE on a graph and return its node embeddings.

    Args:
        edge_index: ``[2, 2|E|]`` both directions. num_nodes: N. x: ``[N, F]`` float features, or
            None for a learned input embedding (featureless graphs).
        hidden, out: Encoder widths (default [128, 64], the PPGSL surrogate's). epochs, lr: Adam
            (200, 0.001; PyG's example uses 0.01, which on noisy dense graphs such as EdgeRand
            releases collapses the encoder to constant embeddings, see docs/attacks.md).
        seed: Initialisation and negative-sampling seed (the global RNG is forked, not changed).
        edges_per_epoch, sample_above: With |E| above ``sample_above`` (:data:`SAMPLE_ABOVE`),
            each epoch's loss is on ``edges_per_epoch`` (:data:`EDGES_PER_EPOCH`) uniform distinct
            edges and as many uniform distinct non-edges; otherwise, or with ``edges_per_epoch=None``,
            on every edge with as many negatives from PyG's ``negative_sampling``.

    Returns:
        ``[N, out]`` float embeddings (encoder in eval mode, no gradient); a fresh tensor, also when
        the result comes from the memo (module docstring: the same inputs, settings, seed and
        torch thread count give the same embeddings, computed once).

    Raises:
        ValueError: a graph without edges (nothing to reconstruct); ``edges_per_epoch`` outside
            ``[1, sample_above]``.
    """
    if edge_index.numel() == 0:
        raise ValueError("the GAE needs at least one edge")
    if edges_per_epoch is not None and not 1 <= edges_per_epoch <= sample_above:
        raise ValueError(f"'edges_per_epoch' must be in [1, sample_above={sample_above}] (got {edges_per_epoch})")
    key = (array_digest(edge_index, x), int(num_nodes), hidden, out, epochs, lr, seed, edges_per_epoch, sample_above,
           torch.get_num_threads())
    z = _MEMO.get(key, lambda: _train(edge_index, num_nodes, x, hidden=hidden, out=out, epochs=epochs, lr=lr,
                                      seed=seed, edges_per_epoch=edges_per_epoch, sample_above=sample_above),
                  keep=lambda value: value.numel() <= MEMO_MAX_VALUES)
    return z.clone()  # the memo's own tensor never leaves


def _train(edge_index: Tensor, num_nodes: int, x: Tensor | None, *, hidden: int, out: int, epochs: int, lr: float,
           seed: int, edges_per_epoch: int | None, sample_above: int) -> Tensor:
    """:func:`gae_embeddings`' training, without the memo."""
    pos = edge_index[:, edge_index[0] < edge_index[1]]
    adj = sparse_adjacency(edge_index, num_nodes)
    x = None if x is None else sparse_features(x)  # bag-of-words: the first layer costs the non-zeros
    pairs = _EpochPairs(edge_index, pos, num_nodes, edges_per_epoch, sample_above, seed)
    with seeded(seed):
        model = GAE(GCN(None if x is None else x.size(1), hidden, out, num_nodes=num_nodes))
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        for _ in range(epochs):
            model.train()
            optimizer.zero_grad()
            z = model.encode(x, adj)
            loss = _recon_loss(model, z, *pairs.draw())
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            return model.encode(x, adj)
