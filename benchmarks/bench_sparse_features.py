"""Sparse node features in PPGSL's surrogate: the first layer's product with a CSR feature matrix
against the dense one, and PPGSL's learning with each, in the same process.

    GRAPHPRIV_DATA=MIRROR python benchmarks/bench_sparse_features.py \
        [--dataset cora] [--hidden 128] [--repeats 20] [--learner-steps 100] [--gae-epochs 200] [--threads 1]

Timed:

- the product ``X W^T``, forward and backward (the weight's gradient ``G^T X``), for the dataset's
  ``[N, F]`` features: ``F.linear`` on the dense matrix (the reference) and on
  :func:`~graphpriv.nn.sparse_features.sparse_features`' CSR one, mean over ``--repeats``;
- :func:`graphpriv.publishing.ppgsl.ppgsl` (paper settings but ``--learner-steps`` learner steps,
  so ``learner_steps / mu`` surrogate trainings of 100 epochs each) on the graph with 10% of its
  edges as the sensitive links, seed 0: with the features dense (the reference: the conversion
  switched off) and as graphpriv runs it;
- the GAE of the attacks and of the link-prediction utility (:mod:`graphpriv.nn.gae`, its training
  without the memo), ``--gae-epochs`` epochs on the whole graph with its features, dense and CSR.

Prints the times, the ratios reference / graphpriv, the largest difference of the products, of the
weight gradients, of PPGSL's learned edge probabilities and of the GAE embeddings (the same
computation; float summation order differs), and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import torch
import torch.nn.functional as F

import graphpriv.nn.gae as gae_module
import graphpriv.publishing.ppgsl as ppgsl_module
from graphpriv.data import load
from graphpriv.data.graph import undirected_pairs
from graphpriv.nn.sparse_features import sparse_features
from graphpriv.publishing.ppgsl import PPGSLSettings, ppgsl


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="cora")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--learner-steps", type=int, default=100)
    parser.add_argument("--gae-epochs", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    data = load(args.dataset)
    x = torch.as_tensor(data.x, dtype=torch.float32)
    xs = sparse_features(x)
    density = float(torch.count_nonzero(x)) / x.numel()
    weight = torch.randn(args.hidden, x.shape[1], requires_grad=True)
    grad = torch.randn(x.shape[0], args.hidden)
    times, outs = {}, []
    for name, features in (("reference (dense)", x), ("graphpriv (CSR)", xs)):
        weight.grad = None
        out = F.linear(features, weight)
        out.backward(grad)
        outs.append((out.detach(), weight.grad.clone()))
        start = time.perf_counter()
        for _ in range(args.repeats):
            F.linear(features, weight).backward(grad)
        times[name] = (time.perf_counter() - start) / args.repeats
    (a, ga), (b, gb) = outs

    pairs = undirected_pairs(data.edge_index)
    rng = np.random.default_rng(0)
    hide = rng.random(pairs.shape[1]) < 0.1
    settings = PPGSLSettings(learner_steps=args.learner_steps)
    runs = {}
    for name, convert in (("reference (dense)", lambda t: t), ("graphpriv (CSR)", sparse_features)):
        ppgsl_module.sparse_features = convert
        try:
            start = time.perf_counter()
            out = ppgsl(pairs[:, ~hide], data.num_nodes, pairs[:, hide], data.x.numpy(), settings=settings, seed=0)
            runs[name] = (time.perf_counter() - start, out.weights[1])
        finally:
            ppgsl_module.sparse_features = sparse_features
    (t_ref, w_ref), (t_ours, w_ours) = runs.values()

    edge_index = torch.as_tensor(data.edge_index)
    gae = {}
    for name, convert in (("reference (dense)", lambda t: t), ("graphpriv (CSR)", sparse_features)):
        gae_module.sparse_features = convert
        try:  # the training itself (gae_embeddings would answer the second call from its memo)
            start = time.perf_counter()
            z = gae_module._train(edge_index, data.num_nodes, x, hidden=128, out=64, epochs=args.gae_epochs, lr=0.001,
                                  seed=0, edges_per_epoch=gae_module.EDGES_PER_EPOCH,
                                  sample_above=gae_module.SAMPLE_ABOVE)  # gae_embeddings' defaults
            gae[name] = (time.perf_counter() - start, z)
        finally:
            gae_module.sparse_features = sparse_features
    (g_ref, z_ref), (g_ours, z_ours) = gae.values()

    print(f"{args.dataset}: features {tuple(x.shape)}, {100 * density:.2f}% non-zero ({'CSR' if xs is not x else 'kept dense'}); "
          f"hidden {args.hidden}; {args.threads} thread(s)")
    ref = times["reference (dense)"]
    for name, seconds in times.items():
        print(f"  X W^T forward + backward, {name}: {1000 * seconds:.2f} ms, ratio reference / it {ref / seconds:.2f}x")
    print(f"  max |difference|: products {float((a - b).abs().max()):.2e}, weight gradients {float((ga - gb).abs().max()):.2e}")
    print(f"  PPGSL, {args.learner_steps} learner steps ({-(-args.learner_steps // settings.mu)} surrogate trainings of "
          f"{settings.surrogate_epochs} epochs): reference (dense) {t_ref:.1f} s, graphpriv (CSR) {t_ours:.1f} s, "
          f"ratio {t_ref / t_ours:.2f}x; max |difference| of the learned edge probabilities "
          f"{float(np.abs(w_ref - w_ours).max()):.2e}")
    print(f"  GAE embeddings ({args.gae_epochs} epochs, hidden 128, out 64): reference (dense) {g_ref:.1f} s, "
          f"graphpriv (CSR) {g_ours:.1f} s, ratio {g_ref / g_ours:.2f}x; max |difference| of the embeddings "
          f"{float((z_ref - z_ours).abs().max()):.2e}")
    print(f"  peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
