"""DP-SGD where one example may be a whole subgraph (Abadi et al., CCS 2016; DPLP Alg. 2).

Per-example gradients come from ``torch.func`` (``vmap`` over ``grad`` of a ``functional_call``),
so a batch of padded subgraphs is processed in one vectorized call, not a Python loop.

Clipping holds for any input, including extreme or non-finite values: a non-finite per-example
gradient contributes zero; its example is dropped from the sum, which is within the add/remove
relation's sensitivity C (and replace-one's 2C). "Non-finite" is read off the example's gradient
norm, so it also covers float overflow: a float32 gradient whose squared norm passes 3.4e38
(entries of about 1e19) has an infinite norm although every entry is finite. The example is masked
out (``torch.where``, :func:`drop_nonfinite`) before any product, so 0 x inf = NaN cannot arise and
one record cannot turn the sum into NaN; a finite example is clipped to norm <= C exactly as before.

The one noisy step: :func:`noisy_gradient` adds calibrated Gaussian noise to a clipped gradient sum
(drawn by :func:`gaussian_noise`, graphpriv's one Gaussian draw for gradient noise) and spends the
step's event on the ledger. :class:`DPSGD` runs it after a pluggable clipped sum (the vmap
:func:`clipped_gradient_sum` by default; DPAR and dp-mlp pass ghost clipping,
:func:`graphpriv.privacy.ghost_clipping.ghost_clipped_sum`), and PrivDPR's noisy V update calls it
on its persistent gradient buffer (:func:`graphpriv.synthesis.privdpr.train_embeddings`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import torch
from dp_accounting import dp_event
from torch import Tensor, nn
from torch.func import functional_call, grad, vmap

from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.hooks import AuditHook, GradientCanaries, noise_scale_of
from graphpriv.privacy.mechanisms import gaussian_noise
from graphpriv.privacy.units import Accounting

LossFn = Callable[[Tensor, Tensor], Tensor]

#: ``indices [B] -> ({parameter name: summed clipped gradient}, per-example losses [B] or None)``:
#: the clipped sum a :class:`DPSGD` step adds its noise to (each example moving it by at most C).
ClippedSum = Callable[[Tensor], tuple[dict[str, Tensor], Tensor | None]]


def noisy_gradient(summed: Mapping[str, Tensor | None], params: Iterable[tuple[str, Tensor]], *, noise_std: float,
                   generator: torch.Generator, divisor: float = 1.0, out: Mapping[str, Tensor] | None = None,
                   ledger: Ledger | None = None, event: dp_event.DpEvent | None = None, phase: str = "training",
                   noise_multiplier: float | None = None) -> dict[str, Tensor]:
    """The one noisy step: a clipped gradient sum plus calibrated Gaussian noise, its event spent.

    For each ``(name, parameter)`` of ``params``, in that order, draws N(0, noise_std^2 I) of the
    parameter's shape and dtype from ``generator`` (:func:`gaussian_noise`) and returns
    ``(summed[name] + noise) / divisor``; then, with a ledger, spends ``event`` once under
    ``phase``. The caller calibrated ``noise_std`` (noise multiplier x the sum's sensitivity, times an
    audit's ``noise_scale``) and sets the result as the gradient.

    Privacy:
        Whatever ``event`` states: a Gaussian mechanism on a sum whose L2 sensitivity (under the
        event's neighbouring relation) is ``noise_std / noise_multiplier``.

    Args:
        summed: ``{name: clipped sum}``, each the parameter's shape (dense); with ``out`` an entry
            may also be a sparse COO tensor (only the rows a batch touched) or None (no signal).
        params: ``(name, parameter)`` pairs; the noise is drawn in this order.
        noise_std: the noise std, finite and >= 0. generator: the noise's randomness.
        divisor: the sum is divided by it (the expected batch size; 1.0: not divided).
        out: ``{name: buffer}`` of the parameters' shapes: the noise is drawn into each buffer in
            place (``normal_``), the sum added, the buffer returned (no allocation).
        ledger, event, phase, noise_multiplier: where the step is spent, and what (``event`` is
            required with a ledger; None: nothing is spent).

    Returns:
        ``{name: noisy gradient}`` (the ``out`` buffers when given).

    Raises:
        ValueError: a bad ``noise_std``; a ledger without an event.
        UnsupportedMechanismError: the ledger's accountant cannot analyse ``event``.

    References:
        Abadi et al., "Deep learning with differential privacy" (CCS 2016), Alg. 1, steps
        "Add noise" and "Descent".
    """
    if ledger is not None and event is None:
        raise ValueError("noisy_gradient with a ledger needs the step's event")
    noisy: dict[str, Tensor] = {}
    for name, param in params:
        if out is None:
            noise = gaussian_noise(param.shape, noise_std, generator=generator, dtype=param.dtype)
            noisy[name] = (summed[name] + noise) / divisor
            continue
        buffer = gaussian_noise(param.shape, noise_std, generator=generator, out=out[name])
        if summed.get(name) is not None:
            buffer.add_(summed[name])
        if divisor != 1:
            buffer.div_(divisor)
        noisy[name] = buffer
    if ledger is not None:
        ledger.spend(event, phase=phase, noise_multiplier=noise_multiplier)
    return noisy


def per_sample_gradients(
    model: nn.Module, loss_fn: LossFn, inputs: Sequence[Tensor], targets: Tensor
) -> tuple[dict[str, Tensor], Tensor]:
    """Gradient of each example's loss, vectorized with ``torch.func``.

    The model is called on one example at a time (a leading batch dimension of 1), so any layer
    that mixes examples (batch norm) cannot leak across them.

    Args:
        model: Module whose forward takes ``*inputs`` with a leading batch dim and returns ``[B]``.
        loss_fn: ``loss_fn(output [1], target [1]) -> scalar``.
        inputs: Tensors of shape ``[B, ...]``. targets: ``[B]``.

    Returns:
        ``({parameter name: gradient [B, *param.shape]}, per-example losses [B])`` for the
        trainable parameters.
    """
    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}
    buffers = {n: b.detach() for n, b in model.named_buffers()}

    def loss_one(p: dict[str, Tensor], *example: Tensor) -> tuple[Tensor, Tensor]:
        *xs, y = example
        out = functional_call(model, (p, buffers), tuple(x.unsqueeze(0) for x in xs))
        loss = loss_fn(out, y.unsqueeze(0))
        return loss, loss.detach()

    in_dims = (None,) + (0,) * (len(inputs) + 1)
    per_grad = vmap(grad(loss_one, has_aux=True), in_dims=in_dims, randomness="different")
    return per_grad(params, *inputs, targets)


def clip_per_sample(grads: dict[str, Tensor], max_grad_norm: float) -> tuple[dict[str, Tensor], Tensor]:
    """Scale each example's whole gradient to L2 norm at most ``max_grad_norm``; an example whose
    gradient norm is not finite becomes exactly 0 (module docstring).

    Args:
        grads: ``{name: [B, *param.shape]}`` per-example gradients. max_grad_norm: C > 0.

    Returns:
        ``(clipped grads, same shapes; norms before clipping [B])`` (the norms may be inf / NaN).
    """
    norms = per_sample_norms(grads)
    factor = norm_clip_factors(norms, max_grad_norm)
    finite = torch.isfinite(norms)
    clipped = {n: drop_nonfinite(g, finite) * factor.view(-1, *([1] * (g.dim() - 1))) for n, g in grads.items()}
    return clipped, norms


def per_sample_norms(grads: dict[str, Tensor]) -> Tensor:
    """L2 norm ``[B]`` of each example's whole gradient (all parameters)."""
    return torch.stack([torch.linalg.vector_norm(g.flatten(1), dim=1) for g in grads.values()]).norm(dim=0)


def clip_factors(grads: dict[str, Tensor], max_grad_norm: float) -> Tensor:
    """``[B]`` factors min(1, C / ||g_b||) that clip each example's gradient to ``max_grad_norm``
    (0 for a non-finite norm: see :func:`norm_clip_factors`)."""
    return norm_clip_factors(per_sample_norms(grads), max_grad_norm)


def norm_clip_factors(norms: Tensor, max_grad_norm: float) -> Tensor:
    """``[B]`` factors min(1, C / (||g_b|| + 1e-6)) from per-example gradient norms ``[B]``; 0
    where the norm is inf or NaN (a non-finite per-example gradient contributes zero; its example
    is dropped from the sum, which is within the add/remove relation's sensitivity C).

    The factor alone does not drop such an example (0 x inf = NaN): zero its gradient, or the
    tensors it is a product of, with :func:`drop_nonfinite` before multiplying.
    """
    factor = (max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
    return torch.where(torch.isfinite(norms), factor, 0.0)


def drop_nonfinite(t: Tensor, finite: Tensor) -> Tensor:
    """``t`` ``[B, ...]`` with every slice ``t[b]`` whose ``finite[b]`` ``[B]`` (bool) is False set to
    exactly 0, by ``torch.where`` (no product, so inf and NaN entries become 0 too); the other
    slices are returned unchanged, bit for bit (``t`` itself when every slice is finite: no copy)."""
    if bool(finite.all()):
        return t
    return torch.where(finite.view(-1, *([1] * (t.dim() - 1))), t, 0.0)


def clipped_gradient_sum(model: nn.Module, loss_fn: LossFn, collate, indices: Tensor, max_grad_norm: float, *,
                         sizes: Tensor | None = None, buckets: int = 1) -> tuple[dict[str, Tensor], Tensor]:
    """Sum over a batch of per-example gradients, each clipped to ``max_grad_norm``; an example
    whose gradient norm is inf or NaN contributes exactly 0 (masked out before the product), so
    the sum is finite whatever the inputs and each example moves it by at most C (add/remove).

    With ``sizes`` (a cost per example, e.g. its node count) the batch is sorted by size and cut
    into ``buckets`` equal-count groups that are padded separately: the result is the same sum
    (each example's gradient does not depend on its batch-mates), with less padding.

    Args:
        collate: ``indices -> (inputs, targets)``. indices: ``[B]``. sizes: ``[N]`` costs or None.

    Returns:
        ``({name: summed clipped gradient}, per-example losses [B] in bucket order)``.
    """
    def bucket_sum(group: Tensor) -> tuple[dict[str, Tensor], Tensor]:
        inputs, targets = collate(group)
        grads, loss = per_sample_gradients(model, loss_fn, inputs, targets)
        norms = per_sample_norms(grads)
        factor, finite = norm_clip_factors(norms, max_grad_norm), torch.isfinite(norms)
        # sum_b factor_b g_b as one product, no clipped copy
        return {name: (factor @ drop_nonfinite(g.flatten(1), finite)).view(g.shape[1:])
                for name, g in grads.items()}, loss

    return bucketed_sum(indices, sizes, buckets, bucket_sum)


def bucketed_sum(indices: Tensor, sizes: Tensor | None, buckets: int,
                 bucket_sum: Callable[[Tensor], tuple[dict[str, Tensor], Tensor]]) -> tuple[dict[str, Tensor], Tensor]:
    """``bucket_sum(group)`` added up over the :func:`size_buckets` of ``indices``: the one loop of
    every clipped sum that cuts its batch into size buckets (:func:`clipped_gradient_sum`,
    :func:`graphpriv.linkpred.subgraph_clipping.subgraph_clipped_sum`).

    Args:
        indices: ``[B]``. sizes, buckets: as :func:`size_buckets`. bucket_sum: ``group [b] ->
            ({name: summed clipped gradient}, per-example losses [b])``.

    Returns:
        ``({name: the buckets' sums added in bucket order}, per-example losses [B] in bucket order)``.
    """
    total: dict[str, Tensor] = {}
    losses = []
    for group in size_buckets(indices, sizes, buckets):
        summed, loss = bucket_sum(group)
        for name, part in summed.items():
            total[name] = total[name] + part if name in total else part
        losses.append(loss)
    return total, torch.cat(losses)


def size_buckets(indices: Tensor, sizes: Tensor | None, buckets: int) -> list[Tensor]:
    """``indices`` ``[B]`` sorted by ``sizes[indices]`` (stable) and cut into ``buckets`` groups of
    equal count (``[indices]`` itself when ``sizes`` is None, ``buckets`` <= 1 or B <= ``buckets``):
    the groups :func:`clipped_gradient_sum` pads separately, and which every clipped sum that must
    draw the same dropout numbers follows (:func:`bucketed_sum`)."""
    if sizes is None or buckets <= 1 or indices.numel() <= buckets:
        return [indices]
    return list(indices[torch.argsort(sizes[indices], stable=True)].tensor_split(buckets))


class DPSGD:
    """Noisy clipped-gradient descent with a sampler pinned to the accountant.

    Each :meth:`step`: (1) draw a batch with ``sampler``; (2) the batch's clipped gradient sum,
    ``clipped_sum(indices)`` (default: per-example gradients by vmap, each clipped to
    ``max_grad_norm``, an example whose gradient is not finite contributing 0, see
    :func:`clipped_gradient_sum`); (3) :func:`noisy_gradient`: add ``N(0, (z * sensitivity)^2 I)``
    with ``sensitivity = sampler.sensitivity(C, group_size)`` unless given, divide by the expected
    batch size, and ``ledger.spend(sampler.step_event(z, ...), phase)``; (4) optimizer step.

    Privacy: the sampler's step event (add/remove one example for ``PoissonSampler`` with K = 1; the
    multi-term group bounds otherwise), composed by the ledger under its relation.

    Args:
        model, optimizer: the module and any torch optimizer over its parameters.
        sampler: :class:`~graphpriv.privacy.sampling.WithoutReplacementSampler` or
            :class:`~graphpriv.privacy.sampling.PoissonSampler`.
        collate: ``indices [B] -> (inputs tuple, targets [B])`` (for the default clipped sum).
        loss_fn: per-example loss (see :func:`per_sample_gradients`; for the default clipped sum).
        noise_multiplier: z > 0. max_grad_norm: C > 0.
        group_size: examples one privacy unit can change (K; 1 for ordinary DP-SGD).
        ledger: where every step is spent. generator: noise randomness (usually separate from the
            sampler's; the same generator may serve both: the batch is drawn first).
        sizes, buckets: optional per-example costs and bucket count for
            :func:`clipped_gradient_sum` (same result, less padding).
        clipped_sum: a :data:`ClippedSum` replacing the vmap sum (e.g. ghost clipping,
            :func:`graphpriv.privacy.ghost_clipping.ghost_clipped_sum`); it must move by at most C
            per example, as the default does.
        sensitivity: the noisy sum's L2 sensitivity the noise is calibrated to (default: the
            sampler's, ``sampler.sensitivity(C, group_size)``; e.g. DPAR's paper accounting: r C).
        audit_hook: a privacy audit's :class:`~graphpriv.privacy.hooks.AuditHook` (None for a
            real fit): its ``noise_scale`` multiplies the noise std (the ledger is unchanged), and
            its ``canaries`` (:class:`~graphpriv.privacy.hooks.GradientCanaries`, already
            attached) are the population's examples from ``num_real`` on: sampled with the real
            ones, left out of the model's gradient, told each step's sample and noise std.
        num_real: N, the real examples (needed with canaries; the sampler covers N plus the extras).

    Attributes:
        noise_std: the calibrated std z * sensitivity (without the hook's ``noise_scale``).

    Raises:
        ValueError: noise_multiplier, max_grad_norm or sensitivity not > 0; canaries without
            ``num_real``; neither ``clipped_sum`` nor ``collate`` and ``loss_fn``.
    """

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, sampler, *,
                 collate: Callable[[Tensor], tuple[tuple[Tensor, ...], Tensor]] | None = None,
                 loss_fn: LossFn | None = None, noise_multiplier: float, max_grad_norm: float, group_size: int,
                 ledger: Ledger, generator: torch.Generator, accounting: Accounting = Accounting.RIGOROUS,
                 phase: str = "training", sizes: Tensor | None = None, buckets: int = 1,
                 audit_hook: AuditHook | None = None, num_real: int | None = None,
                 clipped_sum: ClippedSum | None = None, sensitivity: float | None = None) -> None:
        if not noise_multiplier > 0:
            raise ValueError(f"'noise_multiplier' must be > 0 (got {noise_multiplier})")
        if not max_grad_norm > 0:
            raise ValueError(f"'max_grad_norm' must be > 0 (got {max_grad_norm})")
        if sensitivity is not None and not sensitivity > 0:
            raise ValueError(f"'sensitivity' must be > 0 (got {sensitivity})")
        if clipped_sum is None and (collate is None or loss_fn is None):
            raise ValueError("DPSGD needs collate and loss_fn for its vmap clipped sum, or a clipped_sum")
        self.model, self.optimizer, self.sampler = model, optimizer, sampler
        self.collate, self.loss_fn = collate, loss_fn
        self.noise_multiplier, self.max_grad_norm = noise_multiplier, max_grad_norm
        self.group_size, self.ledger, self.generator = group_size, ledger, generator
        self.accounting, self.phase = Accounting(accounting), phase
        self.sizes, self.buckets = sizes, buckets
        self.clipped_sum: ClippedSum = self._vmap_sum if clipped_sum is None else clipped_sum
        if sensitivity is None:
            sensitivity = sampler.sensitivity(max_grad_norm, group_size)
        self.noise_std = noise_multiplier * sensitivity
        self._event = sampler.step_event(noise_multiplier, group_size=group_size, accounting=accounting)
        self.noise_scale = noise_scale_of(audit_hook)
        self.canaries: GradientCanaries | None = None if audit_hook is None else audit_hook.canaries
        if self.canaries is not None and num_real is None:
            raise ValueError("gradient canaries need num_real, the number of real examples before them")
        self.num_real = num_real

    def step(self) -> float:
        """One private step; returns the batch's mean loss (a diagnostic for the data holder only:
        it is computed on private data and is not part of the release)."""
        indices = self.sampler.sample()
        extra = None
        if self.canaries is not None:
            extra = indices[indices >= self.num_real] - self.num_real
            indices = indices[indices < self.num_real]
        summed, loss = self._clipped_sum(indices)
        std = self.noise_std * self.noise_scale  # noise_scale: 1 except in an audit's fault test
        trainable = [(name, p) for name, p in self.model.named_parameters() if p.requires_grad]
        noisy = noisy_gradient(summed, trainable, noise_std=std, generator=self.generator,
                               divisor=self.sampler.expected_batch_size, ledger=self.ledger, event=self._event,
                               phase=self.phase, noise_multiplier=self.noise_multiplier)
        for name, p in trainable:
            p.grad = noisy[name]
        self.optimizer.step()
        if extra is not None:
            self.canaries.step(extra, std)
        return loss

    def _clipped_sum(self, indices: Tensor) -> tuple[dict[str, Tensor], float]:
        if indices.numel() == 0:
            return {n: torch.zeros_like(p) for n, p in self.model.named_parameters()}, float("nan")
        summed, losses = self.clipped_sum(indices)
        return summed, float("nan") if losses is None else float(losses.mean())

    def _vmap_sum(self, indices: Tensor) -> tuple[dict[str, Tensor], Tensor]:
        """The default clipped sum: :func:`clipped_gradient_sum` over ``collate(indices)``."""
        return clipped_gradient_sum(self.model, self.loss_fn, self.collate, indices, self.max_grad_norm,
                                    sizes=self.sizes, buckets=self.buckets)
