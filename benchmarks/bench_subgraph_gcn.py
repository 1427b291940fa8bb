"""One GCN layer of the subgraph GNN on a sparse batch: the batch's normalised adjacency as one sparse
CSR product (with its symmetric backward) against the gather-and-scatter of every message it
replaced, and against torch's own backward of the CSR product.

    GRAPHPRIV_DATA=MIRROR python benchmarks/bench_subgraph_gcn.py \
        [--dataset celegans] [--hops 2] [--batch 32] [--width 32] [--repeats 50] [--threads 1]

A batch of ``--batch`` 2-hop enclosing subgraphs of training links of the dataset's seed-0 link split
(SEAL's examples: the edges and as many uniform non-edges), collated as
:func:`graphpriv.linkpred.subgraphs.collate_sparse` does. Timed, forward + backward of the
aggregation D^-1/2 (A + I) D^-1/2 x for a ``[T, width]`` x, mean over ``--repeats``:

- reference, in the same process: the gather-and-scatter (``x[src] * w`` then ``index_add_``), the
  layer's former code;
- CSR product, torch's backward: ``batch.gcn_adjacency @ x`` (torch transposes the CSR matrix in
  every backward);
- graphpriv: :func:`graphpriv.nn.subgraph_gnn.symmetric_product` (the same product; the backward
  is ``A @ grad``, A being symmetric). The CSR matrix is built once per batch (a layer of SEAL's
  DGCNN uses it four times, DPLP-PS's k layers k times): its build time, the mean over
  ``--repeats`` fresh batches, is printed apart, gathered from the set's presorted rows
  (:attr:`graphpriv.linkpred.subgraphs.SubgraphSet.adjacency_rows`, sorted once per set, timed
  apart) against the former build by coalescing a COO list (a sort per batch).

Prints the three times, the ratios against the reference, the build time, the maximum difference
of the outputs and of the gradients, and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import torch
from link_examples import coalesced_adjacency, training_examples

from graphpriv.data.graph import to_csr
from graphpriv.linkpred.subgraphs import Extractor, collate_sparse, extract_subgraphs
from graphpriv.nn.subgraph_gnn import symmetric_product


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="celegans")
    parser.add_argument("--hops", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--extractor", default="neighbourhood", choices=["neighbourhood", "path"],
                        help="SEAL's h-hop subgraphs, or DPLP-PS's k-path subgraphs (k = --hops)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    n, edges, links, labels = training_examples(args.dataset)
    take = np.arange(args.batch)
    extractor = Extractor.PATH if args.extractor == "path" else Extractor.NEIGHBOURHOOD
    subgraphs = extract_subgraphs(to_csr(edges, n), links[:, take], labels[take], extractor=extractor,
                                  k=args.hops, h=args.hops)
    (batch,), _ = collate_sparse(subgraphs, np.arange(args.batch), max_label=1000)
    src, dst = batch.src, batch.dst
    dis = (batch.degree + 1).clamp(min=1).pow(-0.5)
    x = torch.randn(batch.z.numel(), args.width, requires_grad=True)

    def gather() -> torch.Tensor:
        weight = (dis[dst] * dis[src]).unsqueeze(-1)
        return torch.zeros_like(x).index_add_(0, dst, x[src] * weight) + x * (dis * dis).unsqueeze(-1)

    t0 = time.perf_counter()
    _ = subgraphs.adjacency_rows  # each node's presorted row: once per set (per fit), not per batch
    presort = time.perf_counter() - t0
    adjacency = batch.gcn_adjacency  # warm-up
    former = coalesced_adjacency(batch)
    assert torch.equal(former.col_indices(), adjacency.col_indices()) and torch.equal(former.values(), adjacency.values())
    fresh = [collate_sparse(subgraphs, np.arange(args.batch), max_label=1000)[0][0] for _ in range(args.repeats)]
    t0 = time.perf_counter()
    for other in fresh:
        _ = other.gcn_adjacency
    build = (time.perf_counter() - t0) / args.repeats
    t0 = time.perf_counter()
    for other in fresh:
        coalesced_adjacency(other)
    build_former = (time.perf_counter() - t0) / args.repeats

    def product() -> torch.Tensor:
        return adjacency @ x

    def symmetric() -> torch.Tensor:
        return symmetric_product(adjacency, x)

    times, grads = {}, []
    for name, fn in (("reference (gather + scatter)", gather), ("CSR product, torch's backward", product),
                     ("graphpriv (CSR product, symmetric backward)", symmetric)):
        x.grad = None
        fn().pow(2).sum().backward()
        grads.append(x.grad.clone())
        fn().sum().backward()  # warm-up
        start = time.perf_counter()
        for _ in range(args.repeats):
            fn().sum().backward()
        times[name] = (time.perf_counter() - start) / args.repeats
    with torch.no_grad():
        diff = max(float((gather() - fn()).abs().max()) for fn in (product, symmetric))
    grad_diff = max(float((grads[0] - g).abs().max()) for g in grads[1:])
    ref = times["reference (gather + scatter)"]
    print(f"{args.dataset}, {args.hops}-{'path' if args.extractor == 'path' else 'hop'} subgraphs, batch {args.batch}: "
          f"{batch.z.numel()} nodes, {src.numel()} directed edges, width {args.width}, {args.threads} thread(s)")
    for name, seconds in times.items():
        print(f"  {name}: {1000 * seconds:.2f} ms (forward + backward), ratio reference / it {ref / seconds:.2f}x")
    print(f"  CSR build, once per batch: {1000 * build:.2f} ms from the set's presorted rows ({1000 * presort:.2f} ms "
          f"once per set, here the batch's {args.batch} subgraphs), against {1000 * build_former:.2f} ms by coalescing "
          f"(the former build, the same matrix): ratio {build_former / build:.2f}x per batch, "
          f"{build_former / (build + presort):.2f}x with the presort")
    print(f"  max |difference| outputs {diff:.2e}, gradients {grad_diff:.2e}")
    print(f"  peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
