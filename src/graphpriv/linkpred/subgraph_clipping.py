"""Clipped per-subgraph gradient sums of a :class:`~graphpriv.nn.subgraph_gnn.SubgraphGNN` from one
sparse batch, without ``vmap``.

DP-SGD over subgraphs needs each subgraph's whole gradient, clipped. The reference path
(:func:`graphpriv.privacy.engine.clipped_gradient_sum`) runs the dense, padded forward once per
example under ``torch.func.vmap``: O(B n^2) per layer for a batch padded to its largest subgraph
n, and most of a DPLP-PS run (py-spy on Yeast, k = 4: 88% of the run in ``per_sample_gradients``).

Every trainable parameter of the four backbones sits in an affine map applied row by row, and
each row belongs to one subgraph: the DRNL embedding (a row per node), each ``nn.Linear`` of the
message-passing layers (a row per node, or per target node in the last GCN / SAGE / GIN layer), the
GCN layers' bias (added to those rows), DGCNN's readout (its first 1-D convolution, a
:class:`~graphpriv.nn.subgraph_gnn.RowConv1d`, a row per pooled node; its second, kernel 5 and
stride 1, a row per window of the pooled channels, the window's entries unfolded) and the head's two
linear maps (a row per subgraph). SortPooling only selects rows of the subgraph's own nodes (a
padding position, where a subgraph has fewer than ``sort_k`` nodes, is zeroed by ``torch.where``),
so the gradient it passes back stays in the subgraph. Subgraph b's gradient of such a map is the sum
over its rows r of ``g_r a_r^T`` (weight), ``g_r`` (bias),
or ``g_r`` scattered to the row's label (embedding), with ``a_r`` the row's input and ``g_r`` the
gradient of the summed loss at the row's output: one forward and one backward pass of the sparse
batch (:class:`~graphpriv.nn.subgraph_gnn.SparseBatch`, O(nodes + edges)) give them all. The
per-subgraph gradients of these maps are small (``hidden`` x ``hidden``), so they are formed by one
batched product over the rows padded per subgraph, their norms taken, and the clipped sum is one
product per map (Goodfellow,
"Efficient per-example gradient computations", arXiv:1510.01799; Opacus's hooks do the same for
``nn.Linear`` on ``[B, T, in]`` inputs and for ``nn.Conv1d`` through the unfolded windows).

It is the same sum as the reference, to float rounding (tested for every backbone, dropout
included): the batch is split into the same size buckets, and each bucket's sparse forward draws
the dense batch's dropout numbers (:class:`SubgraphGNN`'s sparse forward). Privacy is unchanged:
the clipping factors min(1, C / ||grad_b||) are the same numbers; an example whose norm is inf or
NaN contributes exactly 0 (its rows are zeroed before the products), as in the reference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn.dense import DenseGCNConv
from torch_geometric.nn.dense.linear import Linear as PygLinear

from graphpriv.nn.subgraph_gnn import RowConv1d, SparseBatch, SubgraphGNN
from graphpriv.privacy.engine import ClippedSum, bucketed_sum, norm_clip_factors

__all__ = ["sparse_clipped_sum", "subgraph_clipped_sum"]


@dataclass
class _Map:
    """One affine map: its weight (and bias) parameter names; ``embedding`` for a lookup table,
    ``windows`` for a 1-D convolution of stride 1 (its rows: the unfolded windows of its input)."""

    weight: str
    bias: str | None
    embedding: bool = False
    windows: bool = False


def _maps(model: SubgraphGNN) -> dict[nn.Module, _Map]:
    """Every module whose calls carry the model's trainable parameters, keyed by module.

    Raises:
        TypeError: a trainable parameter outside these maps, or a 1-D convolution with a stride,
            padding, dilation or groups (its windows would not be its input's unfolded ones).
    """
    owners = {m.lin: f"{name}.bias" for name, m in model.named_modules()
              if isinstance(m, DenseGCNConv) and m.bias is not None}
    maps: dict[nn.Module, _Map] = {}
    for name, module in model.named_modules():
        bias = f"{name}.bias" if getattr(module, "bias", None) is not None else None
        if isinstance(module, nn.Embedding):
            maps[module] = _Map(f"{name}.weight", None, embedding=True)
        elif isinstance(module, (nn.Linear, PygLinear, RowConv1d)):  # a PyG dense GCN layer's bias sits on the layer
            maps[module] = _Map(f"{name}.weight", bias or owners.get(module))
        elif isinstance(module, nn.Conv1d):
            if (module.stride, module.padding, module.dilation, module.groups) != ((1,), (0,), (1,), 1):
                raise TypeError(f"subgraph_clipped_sum: {name} is a 1-D convolution with a stride, padding, dilation "
                                "or groups; only stride 1 without padding is covered")
            maps[module] = _Map(f"{name}.weight", bias, windows=True)
    covered = {m.weight for m in maps.values()} | {m.bias for m in maps.values() if m.bias}
    stray = [n for n, p in model.named_parameters() if p.requires_grad and n not in covered]
    if stray:
        raise TypeError(f"subgraph_clipped_sum: parameter {stray[0]} sits outside an embedding, linear or "
                        "convolution map")
    return maps


def _example_rows(spec: _Map, module: nn.Module, a: Tensor, g: Tensor) -> tuple[Tensor, Tensor, int]:
    """A per-example call's input and output gradient as rows ``[B, R, in]``, ``[B, R, out]``, and R:
    a :class:`RowConv1d`'s rows as they are, a stride-1 convolution's ``[B, C, L]`` input as its
    ``L - kernel + 1`` windows (``C * kernel`` entries each, the weight's flattened order)."""
    if spec.windows:
        a = a.unfold(2, module.kernel_size[0], 1).permute(0, 2, 1, 3).flatten(2)
        g = g.transpose(1, 2)
    return a, g, a.shape[1]


def sparse_clipped_sum(model: SubgraphGNN, batch: SparseBatch, y: Tensor, max_grad_norm: float, *,
                       maps: dict[nn.Module, _Map] | None = None) -> tuple[dict[str, Tensor], Tensor, Tensor]:
    """Sum over the B subgraphs of ``batch`` of their binary cross-entropy gradients, each clipped
    to ``max_grad_norm``.

    Neighbouring relation: add/remove one example (subgraph): each moves the sum by at most C; one
    whose gradient norm is inf or NaN contributes exactly 0.

    Args:
        model: a :class:`SubgraphGNN` of any backbone (train mode for dropout).
        batch: B subgraphs (:func:`graphpriv.linkpred.subgraphs.collate_sparse`). y: ``[B]`` float
            labels. max_grad_norm: C > 0. maps: the model's maps (found again when None).

    Returns:
        ``({name: summed clipped gradient} for the trainable parameters, per-example losses [B],
        per-example gradient norms before clipping [B])``.

    Raises:
        TypeError: a map applied twice in one forward (a shared layer), or a map applied to rows
            that are neither the batch's nodes, its target nodes, its subgraphs nor ``[B, R, *]``
            rows of its subgraphs.
    """
    maps = _maps(model) if maps is None else maps
    num = batch.num_subgraphs
    pairs = torch.arange(num).repeat_interleave(2)
    slots = max(batch.width, 1)  # (owner, position in the [B * slots, *] padded layout, slots per example)
    rows = {batch.z.numel(): (batch.owner, batch.owner * slots + batch.local, slots),
            2 * num: (pairs, torch.arange(2 * num), 2),
            num: (torch.arange(num), torch.arange(num), 1)}
    calls: list[tuple[nn.Module, Tensor, Tensor]] = []

    def keep(module: nn.Module, args: tuple[Tensor, ...], output: Tensor) -> None:
        if any(seen is module for seen, _, _ in calls):  # its calls' parts would need their cross terms
            raise TypeError("subgraph_clipped_sum: a map ran twice in one forward (a shared layer); its per-example "
                            "norm is not the sum of its calls' norms: use the vmap clipped sum "
                            "(graphpriv.privacy.engine.clipped_gradient_sum)")
        spec, shape = maps[module], args[0].shape
        if spec.embedding:  # labels [T]
            fits = len(shape) == 1 and shape[0] in rows
        elif spec.windows:  # [B, C, L]
            fits = len(shape) == 3 and shape[0] == num
        else:  # rows [T, 2B or B, *], or [B, R, *] rows of each subgraph
            fits = (len(shape) == 2 and shape[0] in rows) or (len(shape) == 3 and shape[0] == num)
        if not fits:
            raise TypeError(f"subgraph_clipped_sum: a map ran on input of shape {tuple(shape)}, neither the "
                            f"batch's {batch.z.numel()} nodes, its {2 * num} target nodes, its {num} subgraphs nor "
                            f"[{num}, R, *] rows of its subgraphs")
        calls.append((module, args[0].detach(), output))

    handles = [module.register_forward_hook(keep) for module in maps]
    try:
        losses = F.binary_cross_entropy_with_logits(model(batch), y, reduction="none")
    finally:
        for handle in handles:
            handle.remove()
    grads = torch.autograd.grad(losses.sum(), [out for _, _, out in calls])
    squared = torch.zeros(num, dtype=losses.dtype)
    parts = []
    for (module, a, _), g in zip(calls, grads):
        spec = maps[module]
        if a.dim() == 3:  # [B, R, *] rows per example: already laid out as the batched product needs
            padded_a, padded_g, width = _example_rows(spec, module, a, g)
            owner = torch.arange(num).repeat_interleave(width)
            a, g = padded_a.reshape(num * width, -1), padded_g.reshape(num * width, -1)
        elif spec.embedding:  # example b's gradient: its rows' g summed per label
            owner = rows[a.shape[0]][0]
            per = torch.zeros(num * module.num_embeddings, g.shape[1], dtype=g.dtype)
            per.index_add_(0, owner * module.num_embeddings + a, g)
            squared = squared + per.view(num, -1).pow(2).sum(1)
            parts.append((spec, a, g, owner))
            continue
        else:  # example b's rows padded to [width, *]
            owner, position, width = rows[a.shape[0]]
            padded_g = g.new_zeros(num * width, g.shape[1]).index_copy_(0, position, g).view(num, width, -1)
            padded_a = a.new_zeros(num * width, a.shape[1]).index_copy_(0, position, a).view(num, width, -1)
        squared = squared + (padded_g.transpose(1, 2) @ padded_a).pow(2).sum((1, 2))  # ||g_b^T a_b||^2
        if spec.bias is not None:
            squared = squared + padded_g.sum(1).pow(2).sum(1)
        parts.append((spec, a, g, owner))
    norms = squared.sqrt()
    factor, finite = norm_clip_factors(norms, max_grad_norm), torch.isfinite(norms)
    summed = {name: torch.zeros_like(p) for name, p in model.named_parameters() if p.requires_grad}
    for spec, a, g, owner in parts:
        keep_rows = finite[owner]
        scaled = torch.where(keep_rows.unsqueeze(1), g, 0.0) * factor[owner].unsqueeze(1)
        if spec.embedding:
            summed[spec.weight] = summed[spec.weight].index_add(0, a, scaled)
            continue
        weight = scaled.T @ torch.where(keep_rows.unsqueeze(1), a, 0.0)
        summed[spec.weight] = summed[spec.weight] + weight.view_as(summed[spec.weight])
        if spec.bias is not None:
            summed[spec.bias] = summed[spec.bias] + scaled.sum(0)
    return summed, losses.detach(), norms


def subgraph_clipped_sum(model: SubgraphGNN, collate: Callable[[Tensor], tuple[tuple[SparseBatch], Tensor]],
                         max_grad_norm: float, *, sizes: Tensor | None = None, buckets: int = 1) -> ClippedSum:
    """:func:`sparse_clipped_sum` as a :class:`graphpriv.privacy.engine.DPSGD` clipped sum, with the
    batch cut into the size buckets :func:`graphpriv.privacy.engine.clipped_gradient_sum` uses (so
    that each bucket draws the same dropout numbers as the reference's padded bucket).

    Neighbouring relation: add/remove one example (subgraph): each moves the sum by at most C.

    Args:
        model: a :class:`SubgraphGNN` of any backbone.
        collate: ``indices [B] -> ((SparseBatch,), y [B])``
            (:func:`graphpriv.linkpred.subgraphs.collate_sparse`). max_grad_norm: C > 0.
        sizes: ``[N]`` node count per example, and buckets: the count of size-sorted groups (as
            the reference; the sum is the same, the draws follow the grouping).

    Returns:
        ``indices -> ({name: summed clipped gradient}, per-example losses [B] in bucket order)``.

    Raises:
        TypeError: a trainable parameter outside the maps :func:`sparse_clipped_sum` covers, raised
            here, before any training.
    """
    maps = _maps(model)

    def bucket_sum(group: Tensor) -> tuple[dict[str, Tensor], Tensor]:
        (batch,), y = collate(group)
        summed, loss, _ = sparse_clipped_sum(model, batch, y, max_grad_norm, maps=maps)
        return summed, loss

    return lambda indices: bucketed_sum(indices, sizes, buckets, bucket_sum)
