"""SAGE's and GIN's neighbour sums on a sparse batch of subgraphs: one symmetric CSR product with the
batch's A (SAGE) or A + I (GIN) against the gather-and-scatter of every directed edge's message
that they replaced.

    GRAPHPRIV_DATA=MIRROR python benchmarks/bench_subgraph_sage_gin.py \
        [--dataset pb] [--k 4] [--batch 128] [--width 32] [--repeats 20] [--threads 1]

A batch of ``--batch`` path subgraphs (radius ``--k``) of training links of the dataset's seed-0
link split (the edges and as many uniform non-edges), collated as
:func:`graphpriv.linkpred.subgraphs.collate_sparse` does. Timed, forward + backward of a
``[T, width]`` x, mean over ``--repeats``:

- reference, in the same process: ``index_add_`` of ``x[src]`` into ``dst`` (SAGE: A x; GIN:
  x + A x), the layers' former code;
- graphpriv: :func:`graphpriv.nn.subgraph_gnn.symmetric_product` with
  :attr:`~graphpriv.nn.subgraph_gnn.SparseBatch.adjacency` (SAGE) or
  :attr:`~graphpriv.nn.subgraph_gnn.SparseBatch.loop_adjacency` (GIN), each built once per batch
  (its build time printed apart).

Prints both times and their ratio, the build times, the largest difference of the outputs and of
the gradients relative to the largest reference value, and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import torch
from link_examples import training_examples

from graphpriv.data.graph import to_csr
from graphpriv.linkpred.subgraphs import Extractor, collate_sparse, extract_subgraphs
from graphpriv.nn.subgraph_gnn import symmetric_product


def _time(fn, x: torch.Tensor, repeats: int) -> tuple[float, torch.Tensor]:
    x.grad = None
    fn().pow(2).sum().backward()
    grad = x.grad.clone()
    start = time.perf_counter()
    for _ in range(repeats):
        fn().sum().backward()
    return (time.perf_counter() - start) / repeats, grad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="pb")
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    n, edges, links, labels = training_examples(args.dataset)
    take = np.random.default_rng(0).choice(links.shape[1], args.batch, replace=False)
    subgraphs = extract_subgraphs(to_csr(edges, n), links[:, take], labels[take], extractor=Extractor.PATH, k=args.k)
    (batch,), _ = collate_sparse(subgraphs, np.arange(args.batch), max_label=1000)
    src, dst = batch.src, batch.dst
    x = torch.randn(batch.z.numel(), args.width, requires_grad=True)
    print(f"{args.dataset}, {args.k}-path subgraphs, batch {args.batch}: {batch.z.numel()} nodes, {src.numel()} "
          f"directed edges, width {args.width}, {args.threads} thread(s)")
    for name, attribute, loops in (("SAGE: A x", "adjacency", False), ("GIN: (A + I) x", "loop_adjacency", True)):
        fresh = [collate_sparse(subgraphs, np.arange(args.batch), max_label=1000)[0][0] for _ in range(3)]
        start = time.perf_counter()
        for other in fresh:
            _ = getattr(other, attribute)
        build = (time.perf_counter() - start) / len(fresh)
        matrix = getattr(batch, attribute)

        def gather(loops=loops) -> torch.Tensor:
            total = torch.zeros_like(x).index_add_(0, dst, x[src])
            return x + total if loops else total

        def product(matrix=matrix) -> torch.Tensor:
            return symmetric_product(matrix, x)

        reference, grad_reference = _time(gather, x, args.repeats)
        ours, grad_ours = _time(product, x, args.repeats)
        with torch.no_grad():
            want = gather()
            diff = float((want - product()).abs().max() / want.abs().max())
        grad_diff = float((grad_reference - grad_ours).abs().max() / grad_reference.abs().max())
        print(f"  {name}: reference (gather + scatter) {1000 * reference:.2f} ms, graphpriv (symmetric CSR product) "
              f"{1000 * ours:.2f} ms (forward + backward): {reference / ours:.2f}x; CSR build once per batch "
              f"{1000 * build:.2f} ms; max |difference| / max |reference| outputs {diff:.1e}, "
              f"gradients {grad_diff:.1e}")
    print(f"  peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
