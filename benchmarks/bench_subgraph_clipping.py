"""DP-SGD's clipped gradient sum for DPLP's subgraph GNN: the sparse-batch sum
(:func:`graphpriv.linkpred.subgraph_clipping.subgraph_clipped_sum`) against the vmap reference over padded
batches (:func:`graphpriv.privacy.engine.clipped_gradient_sum`), in one process.

    GRAPHPRIV_DATA=MIRROR python benchmarks/bench_subgraph_clipping.py \
        [--dataset yeast] [--k 4] [--theta 8] [--batch 128] [--buckets 1] [--backbone gcn] [--repeats 5] \
        [--threads 1]

A batch of ``--batch`` k-path subgraphs (DPLP-PS's examples; ``--k``) of training links of the
dataset's seed-0 link split (the training edges and as many uniform non-edges) on the training
graph projected to degree ``--theta`` as DPLP-PS does (0: unprojected), the model DPLP-PS
trains (hidden 32, k layers, dropout 0.5, train mode), the batch cut into ``--buckets`` size buckets
as DPLP does. Timed, mean over ``--repeats`` of one clipped sum (C = 1), each path with the same
dropout draws. Prints both times, the ratio, the largest difference of the two sums, and the
process's peak resident memory after each path.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import torch
from link_examples import training_examples

from graphpriv.data.graph import to_csr
from graphpriv.linkpred.drnl import max_drnl_label
from graphpriv.linkpred.projection import project_degree
from graphpriv.linkpred.subgraph_clipping import subgraph_clipped_sum
from graphpriv.linkpred.subgraphs import Extractor, collate_dense, collate_sparse, extract_subgraphs
from graphpriv.nn.subgraph_gnn import SubgraphGNN, bce_loss
from graphpriv.privacy.engine import clipped_gradient_sum


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="yeast")
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--theta", type=int, default=8)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--buckets", type=int, default=1)
    parser.add_argument("--backbone", default="gcn")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    n, edges, links, labels = training_examples(args.dataset)
    take = np.random.default_rng(1).choice(links.shape[1], size=args.batch, replace=False)
    graph = project_degree(edges, n, theta=args.theta, rng=np.random.default_rng(2)) if args.theta else edges
    subgraphs = extract_subgraphs(to_csr(graph, n), links[:, take], labels[take], extractor=Extractor.PATH, k=args.k)
    cap = max_drnl_label(args.k)
    sizes = torch.from_numpy(subgraphs.num_nodes_per_subgraph)
    indices = torch.arange(args.batch)
    torch.manual_seed(0)
    model = SubgraphGNN(cap + 1, backbone=args.backbone, num_layers=args.k, dropout=0.5).train()
    fast = subgraph_clipped_sum(model, lambda i: collate_sparse(subgraphs, i, max_label=cap), 1.0, sizes=sizes,
                                buckets=args.buckets)

    def reference():
        return clipped_gradient_sum(model, bce_loss, lambda i: collate_dense(subgraphs, i, max_label=cap), indices,
                                    1.0, sizes=sizes, buckets=args.buckets)[0]

    def graphpriv():
        return fast(indices)[0]

    times, sums, peaks = {}, {}, {}
    for name, fn in (("reference (vmap, padded)", reference), ("graphpriv (sparse batch)", graphpriv)):
        torch.manual_seed(7)
        sums[name] = fn()  # warm-up, and the sum compared
        start = time.perf_counter()
        for _ in range(args.repeats):
            fn()
        times[name] = (time.perf_counter() - start) / args.repeats
        peaks[name] = _peak_mib()
    ref, new = (sums[name] for name in times)
    diff = max(float((ref[p] - new[p]).abs().max()) for p in ref)
    print(f"{args.dataset}, {args.k}-path subgraphs (theta {args.theta or 'none'}), batch {args.batch} in "
          f"{args.buckets} buckets: "
          f"{int(sizes.sum())} nodes (largest {int(sizes.max())}), {args.backbone}, {args.threads} thread(s)")
    for name, seconds in times.items():
        print(f"  {name}: {1000 * seconds:.1f} ms per clipped sum; peak resident memory so far {peaks[name]:.0f} MiB")
    t_ref, t_new = times.values()
    print(f"  ratio (reference / graphpriv): {t_ref / t_new:.2f}x; max |difference| of the sums {diff:.2e}")


if __name__ == "__main__":
    main()
