"""PrivDPR's exact spectral normalisation: :func:`graphpriv.synthesis.deep_pagerank.spectral_norm`
(one eigenpair of the Gram matrix by LAPACK ?syevr) against ``torch.linalg.matrix_norm(ord=2)`` (full
SVD, SVD backward), per matrix and inside a PrivDPR training run, in the same process.

    python benchmarks/bench_spectral_norm.py [--threads 1] [--nodes 2000] [--d 512] [--epochs 1]

Part 1 times value plus gradient for d x d matrices (and the r x d first layer, r = 128). Part 2
trains V with both on the same seeded graph (epsilon 3.2, rigorous) and prints the wall times,
their ratio, the peak RSS and the largest difference between the two V's (float rounding only).
"""

from __future__ import annotations

import argparse
import resource
import time
from unittest import mock

import torch


def _time(fn, w: torch.Tensor, repeats: int) -> float:
    fn(w).backward()  # warm-up
    start = time.perf_counter()
    for _ in range(repeats):
        w.grad = None
        fn(w).backward()
    return (time.perf_counter() - start) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--d", type=int, default=512)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    from graphpriv.data.graph import to_csr
    from graphpriv.synthesis.deep_pagerank import DeepPageRank, spectral_norm
    from graphpriv.synthesis.privdpr import train_embeddings
    from graphpriv.testing.graphs import random_graph

    def reference(w: torch.Tensor) -> torch.Tensor:
        return torch.linalg.matrix_norm(w, ord=2)

    print(f"## Spectral norm, value + gradient ({args.threads} thread(s))\n")
    print("| matrix | torch.linalg.matrix_norm (ms) | spectral_norm (ms) | speed-up |")
    print("|---|---|---|---|")
    gen = torch.Generator().manual_seed(0)
    for shape in [(64, 64), (128, 128), (256, 256), (512, 512), (128, 512)]:
        w = torch.randn(*shape, generator=gen, requires_grad=True)
        t_ref, t_ours = _time(reference, w, args.repeats), _time(spectral_norm, w, args.repeats)
        print(f"| {shape[0]} x {shape[1]} | {1e3 * t_ref:.2f} | {1e3 * t_ours:.2f} | {t_ref / t_ours:.1f}x |")

    adj = to_csr(random_graph(args.nodes, 10 / args.nodes, seed=0).edge_index.numpy(), args.nodes)
    kwargs = {"epsilon": 3.2, "accounting": "rigorous", "epochs": args.epochs, "d": args.d, "seed": 0}
    start = time.perf_counter()
    ours = train_embeddings(adj, **kwargs)
    t_ours = time.perf_counter() - start
    original = DeepPageRank.normalised
    with mock.patch.object(DeepPageRank, "normalised",
                           lambda self, w: w / (self.s * torch.linalg.matrix_norm(w, ord=2))):
        start = time.perf_counter()
        ref = train_embeddings(adj, **kwargs)
        t_ref = time.perf_counter() - start
    assert DeepPageRank.normalised is original
    diff = float((ours.V - ref.V).abs().max())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"\n## PrivDPR training, N = {args.nodes:,}, d = {args.d}, depth {ours.depth}, T = {ours.iterations}\n")
    print(f"matrix_norm (SVD): {t_ref:.1f} s; spectral_norm: {t_ours:.1f} s; speed-up {t_ref / t_ours:.2f}x; "
          f"max |V - V_ref| = {diff:.2e}; peak RSS {peak:.2f} GiB")


if __name__ == "__main__":
    main()
