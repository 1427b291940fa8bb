"""DPAR's decoupled model: an MLP on features, aggregated by the rows of a (DP) APPR matrix.

Source: Zhang, Lee, Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with Node-Level
Differential Privacy" (WWW 2024), Eq. 1 and Sec. 3 (after PPRGo, Bojchevski et al., KDD 2020): the
prediction for training node v is softmax(sum_u Pi[v, u] f_theta(x_u)); at inference ("Inference
Phase") the test graph propagates f_theta(X_test) for P steps, Theta <- (1 - alpha) D^-1 A Theta +
alpha H (self-loops added), with PyG's APPNP layer.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from torch import Tensor, nn
from torch_geometric.nn import APPNP
from torch_geometric.utils import add_remaining_self_loops, degree

__all__ = ["DecoupledModel", "feature_mlp", "padded_rows", "propagate"]


def feature_mlp(in_channels: int, hidden_channels: int, out_channels: int, dropout: float = 0.0) -> nn.Sequential:
    """f_theta: ``Linear(F, h) -> ReLU -> Dropout -> Linear(h, C)`` (the paper's 2-layer MLP, h = 32).
    No normalisation layer, so per-example gradients cannot mix examples."""
    return nn.Sequential(nn.Linear(in_channels, hidden_channels), nn.ReLU(), nn.Dropout(dropout),
                         nn.Linear(hidden_channels, out_channels))


class DecoupledModel(nn.Module):
    """logits_v = sum_k w[v, k] f_theta(x[v, k]).

    Args:
        mlp: f_theta, ``[*, F] -> [*, C]``.

    Shapes:
        forward(x ``[B, K, F]`` features of each row's nodes, w ``[B, K]`` their Pi weights, zero
        for padding) -> ``[B, C]`` logits.
    """

    def __init__(self, mlp: nn.Module) -> None:
        super().__init__()
        self.mlp = mlp

    def forward(self, x: Tensor, w: Tensor) -> Tensor:
        return (self.mlp(x) * w.unsqueeze(-1)).sum(-2)


def padded_rows(pi: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Each row's stored columns and values, padded to the longest row.

    Args:
        pi: ``[R, N]`` CSR.

    Returns:
        ``(index [R, K] int64, weight [R, K] float32)``; padding has index 0 and weight 0.
    """
    pi = sp.csr_matrix(pi)
    counts = np.diff(pi.indptr)
    k = max(1, int(counts.max()) if counts.size else 1)
    index = np.zeros((pi.shape[0], k), dtype=np.int64)
    weight = np.zeros((pi.shape[0], k), dtype=np.float32)
    rows = np.repeat(np.arange(pi.shape[0]), counts)
    slot = np.arange(pi.nnz) - np.repeat(pi.indptr[:-1], counts)
    index[rows, slot] = pi.indices
    weight[rows, slot] = pi.data
    return index, weight


def propagate(h: Tensor, edge_index: Tensor, num_nodes: int, *, alpha: float = 0.25, steps: int = 2) -> Tensor:
    """P steps of Theta <- (1 - alpha) D^-1 A Theta + alpha H, self-loops added (row-normalised A).

    Args:
        h: ``[N, C]`` predictions of the MLP. edge_index: ``[2, E]`` (both directions).

    Returns:
        ``[N, C]``.
    """
    edge_index, _ = add_remaining_self_loops(edge_index, num_nodes=num_nodes)
    deg = degree(edge_index[1], num_nodes, dtype=h.dtype)
    weight = 1.0 / deg[edge_index[1]]  # out[i] = sum_j A_ij / d_i x_j
    layer = APPNP(K=steps, alpha=alpha, cached=False, add_self_loops=False, normalize=False)
    return layer(h, edge_index, weight)

