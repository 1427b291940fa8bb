"""Clipped per-example gradient sums for DPAR's decoupled model without per-example gradients.

DPAR and dp-mlp train :class:`graphpriv.nn.decoupled.DecoupledModel` over
:func:`graphpriv.nn.decoupled.feature_mlp` (``Linear -> ReLU -> Dropout -> Linear``) with DP-SGD:
each example (a row of Pi) is K feature vectors ``x[b, k]`` with weights ``w[b, k]``. One batched
backward pass gives every layer's output gradient ``g[b, k]`` and input ``a[b, k]``; example b's
gradient of a linear layer is ``sum_k g[b, k] a[b, k]^T`` (weight) and ``sum_k g[b, k]`` (bias), so

    ||grad_b||^2 = sum_{k, k'} (g_bk . g_bk') (a_bk . a_bk') + ||sum_k g_bk||^2      (per layer)

comes from two K x K Gram matrices per example (Opacus's norm sampler for ``nn.Linear``,
``opacus.grad_sample.linear.compute_linear_norm_sample``), and the clipped sum
``sum_b c_b grad_b = sum_{b, k} c_b g_bk a_bk^T`` from one product: no ``[B, out, in]`` tensor.
This is "ghost clipping" (Goodfellow, arXiv:1510.01799; Li, Tramèr, Liang, Hashimoto, ICLR 2022,
Sec. 4 for inputs with a sequence dimension) and gives the same sum as the vectorized per-example
path :func:`graphpriv.privacy.engine.clipped_gradient_sum` (tested to float rounding), dropout
masks included: ``vmap(randomness="different")`` draws the batch's masks as one batched call does.
Privacy is unchanged: the clipping factors min(1, C / ||grad_b||) are the same numbers.

Any input, extreme or non-finite, keeps the bound: a non-finite per-example gradient contributes
zero; its example is dropped from the sum, which is within the add/remove relation's sensitivity C.
The test is on the ghost norm, so float overflow counts too (float32 features of 1e30 give Gram
products of 1e60 = inf although the forward pass is finite), and the example's inputs, activations
and output gradients are zeroed (``torch.where``) before the products, so 0 x inf = NaN cannot
arise. Padding slots (weight 0) read no features: they are zeroed before the forward pass, so
padding that points at a real node with huge or non-finite features (``padded_rows`` pads with
node 0) drops no example; for finite inputs this changes nothing (their output gradients are 0).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from opacus.grad_sample.linear import compute_linear_norm_sample
from torch import Tensor, nn

from graphpriv.privacy.engine import ClippedSum, drop_nonfinite, norm_clip_factors

__all__ = ["decoupled_clipped_sum", "ghost_clipped_sum", "linear_clipped_sum"]


def _layers(model: nn.Module) -> tuple[nn.Linear, nn.Dropout, nn.Linear]:
    """The two linear layers and the dropout of the model's ``mlp`` (checked by structure, so that
    privacy/ needs nothing of nn/: any module whose ``mlp`` is Linear -> ReLU -> Dropout -> Linear
    and whose forward is the weighted sum of ``mlp`` over the K slots, as DecoupledModel's)."""
    mlp = getattr(model, "mlp", None)
    kinds = (nn.Linear, nn.ReLU, nn.Dropout, nn.Linear)
    if (not isinstance(mlp, nn.Sequential) or len(mlp) != 4
            or not all(isinstance(m, k) for m, k in zip(mlp, kinds))):
        raise TypeError("decoupled_clipped_sum needs DecoupledModel(feature_mlp(...)): "
                        "Linear -> ReLU -> Dropout -> Linear")
    return mlp[0], mlp[2], mlp[3]


def _squared_norms(layer: nn.Linear, g: Tensor, a: Tensor) -> Tensor:
    """``[B]`` squared norms of the layer's per-example gradient (weight and bias), by Opacus's
    ghost norm sampler for ``nn.Linear`` (the K x K Gram matrices for ``[B, K, *]`` inputs)."""
    norms = compute_linear_norm_sample(layer, [a], g)
    return sum(n.pow(2) for n in norms.values())


def decoupled_clipped_sum(model: nn.Module, x: Tensor, w: Tensor, y: Tensor,
                          max_grad_norm: float) -> tuple[dict[str, Tensor], Tensor]:
    """Sum over examples of the cross-entropy gradient, each example's clipped to ``max_grad_norm``.

    Neighbouring relation: add/remove one example (row); each example moves the sum by at most C
    whatever its values: one whose gradient norm is inf or NaN contributes exactly 0 (module
    docstring), and slots of weight 0 are treated as absent (their features are never read).

    Args:
        model: ``DecoupledModel(feature_mlp(F, H, C, p))``, in train mode for dropout.
        x: ``[B, K, F]`` features of each example's rows. w: ``[B, K]`` their Pi weights (0 for
            padding). y: ``[B]`` labels (long). max_grad_norm: C > 0.

    Returns:
        ``({parameter name: summed clipped gradient}, per-example gradient norms before clipping
        [B], inf or NaN for a dropped example)``; the names are ``model.named_parameters()``'s.

    Raises:
        TypeError: another architecture (use :func:`graphpriv.privacy.engine.clipped_gradient_sum`).
    """
    lin1, drop, lin2 = _layers(model)
    present = w != 0
    if not bool(present.all()):  # padding reads no features (its gradient is 0)
        x = torch.where(present.unsqueeze(-1), x, 0.0)
    pre = F.linear(x, lin1.weight, lin1.bias)  # [B, K, H]
    act = F.dropout(torch.relu(pre), drop.p, drop.training)
    out = F.linear(act, lin2.weight, lin2.bias)  # [B, K, C]
    loss = F.cross_entropy((out * w.unsqueeze(-1)).sum(-2), y, reduction="sum")
    g_pre, g_out = torch.autograd.grad(loss, (pre, out))
    act = act.detach()
    norms = (_squared_norms(lin1, g_pre, x) + _squared_norms(lin2, g_out, act)).sqrt()
    factor = norm_clip_factors(norms, max_grad_norm).view(-1, 1, 1)
    finite = torch.isfinite(norms)  # the others are dropped: zeroed, not multiplied by 0
    g_pre, g_out = drop_nonfinite(g_pre, finite) * factor, drop_nonfinite(g_out, finite) * factor
    x, act = drop_nonfinite(x, finite), drop_nonfinite(act, finite)
    grads = {lin1.weight: torch.einsum("bkh,bkf->hf", g_pre, x), lin1.bias: g_pre.sum((0, 1)),
             lin2.weight: torch.einsum("bkc,bkh->ch", g_out, act), lin2.bias: g_out.sum((0, 1))}
    return {name: grads[p] for name, p in model.named_parameters()}, norms


def ghost_clipped_sum(model: nn.Module, collate: Callable[[Tensor], tuple[tuple[Tensor, Tensor], Tensor]],
                      max_grad_norm: float) -> ClippedSum:
    """:func:`decoupled_clipped_sum` as a :class:`graphpriv.privacy.engine.DPSGD` clipped sum.

    Neighbouring relation: add/remove one example (row): each moves the sum by at most C.

    Args:
        model: ``DecoupledModel(feature_mlp(...))`` (see :func:`decoupled_clipped_sum`).
        collate: ``rows [B] -> ((x [B, K, F], w [B, K]), y [B])``. max_grad_norm: C > 0.

    Returns:
        ``rows -> ({name: summed clipped gradient}, None)`` (no per-example losses: ghost clipping
        never forms them; ``DPSGD.step`` then returns NaN as its diagnostic loss).

    Source: Li, Tramèr, Liang, Hashimoto, "Large language models can be strong differentially
    private learners" (ICLR 2022), Sec. 4 (ghost clipping).
    """

    def clipped_sum(rows: Tensor) -> tuple[dict[str, Tensor], None]:
        (inputs, w), target = collate(rows)
        summed, _ = decoupled_clipped_sum(model, inputs, w, target, max_grad_norm)
        return summed, None

    return clipped_sum


def linear_clipped_sum(model: nn.Module, collate: Callable[[Tensor], tuple[tuple[Tensor, ...], Tensor]],
                       max_grad_norm: float) -> ClippedSum:
    """Ghost clipping for a model whose trainable parameters all sit in ``nn.Linear`` layers, each
    applied once per forward pass to a ``[B, in]`` batch, one row per example (an MLP, GAP's
    modules, a ProGAP stage; no batch statistics): example b's gradient of such a layer is the outer
    product ``g_b a_b^T`` (and ``g_b``), so ``||grad_b||^2 = sum over layers of ||g_b||^2 ||a_b||^2
    (+ ||g_b||^2)`` and the clipped sum is ``(c * g)^T a``: one forward and one backward pass, no
    per-example gradient. The same sum as :func:`graphpriv.privacy.engine.clipped_gradient_sum` on
    the same batch to float rounding (tested), dropout included; an example with a non-finite norm
    contributes 0 (module docstring).

    Neighbouring relation: add/remove one example (row): each moves the sum by at most C.

    Args:
        model: called as ``model(*inputs) -> [B, C]`` logits (cross-entropy loss).
        collate: ``rows [B] -> (inputs tuple, y [B])``. max_grad_norm: C > 0.

    Returns:
        ``rows -> ({name: summed clipped gradient}, per-example losses [B])`` for the trainable
        parameters.

    Raises:
        TypeError: a trainable parameter outside an ``nn.Linear``; at call time, a layer applied
            more than once or to an input that is not ``[B, in]`` (one row per example), or a batch
            normalisation in training mode.

    Source: Goodfellow, "Efficient per-example gradient computations" (arXiv:1510.01799); Li,
    Tramèr, Liang, Hashimoto, ICLR 2022, Sec. 4.
    """
    layers = {name: m for name, m in model.named_modules() if isinstance(m, nn.Linear)
              and any(p.requires_grad for p in m.parameters(recurse=False))}
    owned = {id(p) for m in layers.values() for p in m.parameters(recurse=False)}
    stray = [name for name, p in model.named_parameters() if p.requires_grad and id(p) not in owned]
    if stray:
        raise TypeError(f"linear_clipped_sum needs every trainable parameter in an nn.Linear (got {stray[0]})")

    def clipped_sum(rows: Tensor) -> tuple[dict[str, Tensor], Tensor]:
        inputs, target = collate(rows)
        seen: dict[str, tuple[Tensor, Tensor]] = {}
        mixing = [name for name, m in model.named_modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)
                  and m.training]
        if mixing:
            raise TypeError(f"linear_clipped_sum: {mixing[0]} normalises over the batch in training mode, which mixes "
                            "examples; use no batch normalisation under DP-SGD")

        def keep(name: str):
            def hook(module: nn.Module, args: tuple[Tensor, ...], output: Tensor) -> None:
                a = args[0]
                if name in seen or a.dim() != 2 or a.shape[0] != target.shape[0]:
                    raise TypeError(f"linear_clipped_sum: layer {name} ran twice or on an input that is not one "
                                    f"row per example ([B = {target.shape[0]}, in], got {tuple(a.shape)})")
                seen[name] = (a.detach(), output)
            return hook

        handles = [layer.register_forward_hook(keep(name)) for name, layer in layers.items()]
        try:
            losses = F.cross_entropy(model(*inputs), target, reduction="none")
        finally:
            for handle in handles:
                handle.remove()
        names = list(seen)
        grads = torch.autograd.grad(losses.sum(), [seen[n][1] for n in names])
        squared = torch.zeros(losses.shape[0], dtype=losses.dtype)
        for name, g in zip(names, grads):
            layer, a = layers[name], seen[name][0]
            g2 = g.pow(2).sum(1)
            if layer.weight.requires_grad:
                squared = squared + g2 * a.pow(2).sum(1)
            if layer.bias is not None and layer.bias.requires_grad:
                squared = squared + g2
        norms = squared.sqrt()
        factor, finite = norm_clip_factors(norms, max_grad_norm), torch.isfinite(norms)
        summed = {name: torch.zeros_like(p) for name, p in model.named_parameters() if p.requires_grad}
        for name, g in zip(names, grads):  # a trainable layer the forward pass skipped keeps its zeros
            layer, a = layers[name], drop_nonfinite(seen[name][0], finite)
            scaled, prefix = drop_nonfinite(g, finite) * factor[:, None], f"{name}." if name else ""
            if layer.weight.requires_grad:
                summed[f"{prefix}weight"] = scaled.T @ a
            if layer.bias is not None and layer.bias.requires_grad:
                summed[f"{prefix}bias"] = scaled.sum(0)
        return summed, losses.detach()

    return clipped_sum
