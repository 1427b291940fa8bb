"""Node features that are mostly zeros (bag-of-words, one-hot attributes) as a sparse matrix.

The first layer of a GCN multiplies the ``[N, F]`` features by its weights in every forward pass,
and its weight gradient is ``X^T G`` in every backward pass. Cora's features are 1.3% non-zero: as
a CSR matrix both products cost the non-zeros, not N x F (6.6x less time for Cora's 1,433 bag-of-
words columns, forward and backward; PPGSL's learning and the GAE 2.2-4.2x faster:
``benchmarks/bench_sparse_features.py``). The layers take it as they are: ``F.linear`` (PyG's
``Linear``, and so ``GCNConv``) multiplies a CSR input sparsely, differentiable in the weights. The
result is the same product (float summation order differs).
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor

__all__ = ["sparse_features"]

MAX_DENSITY = 0.05


def sparse_features(x: Tensor, max_density: float = MAX_DENSITY) -> Tensor:
    """``x`` as a CSR tensor when at most ``max_density`` of its entries are non-zero, else ``x``.

    Args:
        x: ``[N, F]`` float features (dense). max_density: in [0, 1].

    Returns:
        ``[N, F]``: a ``torch.sparse_csr`` tensor of the same values, or ``x`` itself (dense, or
        already sparse, or empty).
    """
    if x.layout != torch.strided or x.dim() != 2 or x.numel() == 0:
        return x
    if float(torch.count_nonzero(x)) > max_density * x.numel():
        return x
    with warnings.catch_warnings():  # "sparse CSR support is in beta": the product is all it is used for
        warnings.simplefilter("ignore", UserWarning)
        return x.to_sparse_csr()

