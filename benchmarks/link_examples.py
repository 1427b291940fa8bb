"""What the subgraph benchmarks share (not a benchmark itself): the seed-0 link split's training
graph with SEAL's training examples, and the former build of a batch's normalised adjacency that
the benchmarks time graphpriv's against."""

from __future__ import annotations

import warnings

import numpy as np
import torch

from graphpriv.data import load
from graphpriv.data.splits import link_split
from graphpriv.linkpred.examples import uniform_training_links
from graphpriv.nn.subgraph_gnn import SparseBatch


def training_examples(dataset: str) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """``(N, train_edges [2, E], links [2, 2E], labels [2E])``: the dataset's seed-0 link split, its
    training edges and as many uniform non-edges (``rng`` seed 0), SEAL's training examples."""
    split = link_split(load(dataset), seed=0)
    n, edges = split.num_nodes, split.train_edge_index
    links, labels = uniform_training_links(edges, n, rng=np.random.default_rng(0))
    return n, edges, links, labels


def coalesced_adjacency(batch: SparseBatch) -> torch.Tensor:
    """The former build of the batch's D^-1/2 (A + I) D^-1/2: a COO list of every directed edge and
    self-loop, coalesced (a sort per batch), to CSR."""
    dis = (batch.degree + 1).clamp(min=1).pow(-0.5)
    loops = torch.arange(batch.z.numel())
    index = torch.cat([torch.stack([batch.dst, batch.src]), loops.repeat(2, 1)], dim=1)
    values = torch.cat([dis[batch.dst] * dis[batch.src], dis * dis])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_coo_tensor(index, values, (batch.z.numel(),) * 2).coalesce().to_sparse_csr()
