"""GCN propagation over a symmetric weighted graph, differentiable in the edge weights.

PPGSL's learner needs d(loss)/d(edge weight) through a GCN (Wu et al., TKDE 2025, Eq. 9). PyG's
edge-wise ``GCNConv`` builds an ``[E, d]`` message tensor and scatters it forward and backward.
Here the normalised adjacency D^-1/2 (A_w + I) D^-1/2 is applied with a sparse CSR product, and
its backward is written out: since A_w is symmetric, the gradient in the features is the same
product, and the gradient in the normalised entries is the sampled product (grad @ h^T) at the
graph's entries (``torch.sparse.sampled_addmm``, never an ``[E, d]`` tensor). The degree
normalisation stays in autograd.
"""

from __future__ import annotations

import torch
from torch import Tensor

from graphpriv.nn.gcn import sparse_adjacency

__all__ = ["NormalizedAdjacency", "SymmetricGraph", "gcn_normalize", "gcn_propagate"]


class SymmetricGraph:
    """Fixed CSR structure of an undirected graph: each pair in both directions.

    Args:
        pairs: ``[2, P]`` long, u < v, distinct. num_nodes: N.

    Attributes:
        row, col: ``[2P]`` the directed entries in CSR order (sorted by row, then column).
        perm: ``[2P]`` index into ``cat([w, w])`` giving each CSR entry its pair's weight.
    """

    def __init__(self, pairs: Tensor, num_nodes: int) -> None:
        p = pairs.size(1)
        both = torch.cat([pairs, pairs.flip(0)], dim=1)
        order = torch.argsort(both[0] * num_nodes + both[1])
        self.row, self.col = both[0, order], both[1, order]
        self.perm = order
        self.num_nodes = num_nodes
        csr = sparse_adjacency(torch.stack([self.row, self.col]), num_nodes)
        self.crow, self.ccol = csr.crow_indices(), csr.col_indices()
        self.num_pairs = p

    def matrix(self, values: Tensor) -> Tensor:
        """CSR ``[N, N]`` with ``values`` in CSR order (no gradient)."""
        return torch.sparse_csr_tensor(self.crow, self.ccol, values, size=(self.num_nodes, self.num_nodes))


class _SymmetricSpMM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, values: Tensor, h: Tensor, graph: SymmetricGraph) -> Tensor:
        ctx.graph = graph
        ctx.save_for_backward(values, h)
        return graph.matrix(values) @ h

    @staticmethod
    def backward(ctx, grad: Tensor):
        values, h = ctx.saved_tensors
        graph = ctx.graph
        grad_values = grad_h = None
        if ctx.needs_input_grad[0]:  # (grad @ h^T) at the graph's entries, in CSR order
            grad_values = torch.sparse.sampled_addmm(graph.matrix(values.detach()), grad.contiguous(), h.T,
                                                     beta=0.0).values()
        if ctx.needs_input_grad[1]:
            grad_h = graph.matrix(values.detach()) @ grad  # symmetric: A^T = A
        return grad_values, grad_h, None


def gcn_normalize(graph: SymmetricGraph, weight: Tensor) -> tuple[Tensor, Tensor]:
    """Entries of D^-1/2 (A_w + I) D^-1/2 (Kipf & Welling, ICLR 2017, Eq. 2), differentiable in ``weight``.

    Args:
        graph: the structure. weight: ``[P]`` weight of each pair (order of ``graph``'s pairs).

    Returns:
        ``(values [2P] in CSR order, self_weight [N])``: the off-diagonal and diagonal entries.
    """
    w = torch.cat([weight, weight])[graph.perm]
    deg = torch.ones(graph.num_nodes, dtype=weight.dtype).index_add(0, graph.row, w)
    dis = deg.rsqrt()
    return dis[graph.row] * w * dis[graph.col], dis * dis


def gcn_propagate(h: Tensor, graph: SymmetricGraph, weight: Tensor) -> Tensor:
    """D^-1/2 (A_w + I) D^-1/2 h, differentiable in ``h`` and in the pair weights.

    Args:
        h: ``[N, d]`` node features (after the layer's linear map). graph: the structure.
        weight: ``[P]`` weight of each pair (in the order of the pairs given to ``graph``).

    Returns:
        ``[N, d]``; equals PyG ``GCNConv``'s propagation with ``edge_weight = cat([w, w])``
        (self-loops of weight 1, symmetric normalisation).
    """
    values, self_weight = gcn_normalize(graph, weight)
    return _SymmetricSpMM.apply(values, h, graph) + h * self_weight.unsqueeze(-1)


class NormalizedAdjacency:
    """A fixed D^-1/2 (A_w + I) D^-1/2 (no gradient in the weights), for training a GCN on a graph
    that does not change: the normalisation is computed once, each product is one CSR product
    forward and one backward (the matrix is symmetric, so no transpose is formed).

    Args:
        pairs: ``[2, P]`` long, u < v, distinct. weight: ``[P]`` pair weights. num_nodes: N.
    """

    def __init__(self, pairs: Tensor, weight: Tensor, num_nodes: int) -> None:
        self.graph = SymmetricGraph(pairs, num_nodes)
        values, self_weight = gcn_normalize(self.graph, weight.detach())
        self.values, self.self_weight = values, self_weight.unsqueeze(-1)
        self.num_nodes = num_nodes

    def __call__(self, h: Tensor) -> Tensor:
        """``[N, d] -> [N, d]``: the normalised propagation of ``h``."""
        return _SymmetricSpMM.apply(self.values, h, self.graph) + h * self.self_weight
