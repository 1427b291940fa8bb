"""DPLP-PS's evaluation subgraphs: their per-set caches by compiled kernels against the numpy route,
and a leaderboard cell run twice in one process, the second time with the split's sets kept.

    GRAPHPRIV_DATA=MIRROR python benchmarks/bench_evaluation_sets.py \
        [--dataset facebook] [--k 4] [--backbone gcn] [--epochs 1] [--threads 1]

1. The test pairs of the dataset's seed-0 link split (10% of the edges and as many non-edges),
   extracted as path subgraphs of radius ``--k`` from the training graph: each node's degree and
   sorted row of A + I in its own subgraph, by numpy (the reference, in the same process:
   :func:`graphpriv.testing.references.local_degrees_numpy` and ``local_adjacency_rows_numpy``,
   the former code) and by :mod:`graphpriv.linkpred.local_rows`; the outputs are compared.
2. The link-prediction leaderboard's cell (``dplp-ps``, epsilon 4, seed 0, ``--k``, ``--backbone``,
   ``--epochs``) run twice by :func:`graphpriv.experiments.sweep.execute_run`, as a table's worker
   runs it: the first run extracts its validation and test subgraphs, the second finds them kept
   (:func:`graphpriv.linkpred.evaluation_sets.evaluation_subgraphs`). Their metrics must be equal.

Prints the times, their ratios, whether the outputs are equal, and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import numpy as np
import torch

from graphpriv.data import load
from graphpriv.data.graph import to_csr
from graphpriv.data.splits import link_split
from graphpriv.experiments.sweep import execute_run, make_run
from graphpriv.linkpred.local_rows import local_adjacency_rows, local_degrees
from graphpriv.linkpred.subgraphs import Extractor, extract_subgraphs
from graphpriv.testing.references import local_adjacency_rows_numpy, local_degrees_numpy


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="facebook")
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--backbone", default="gcn", choices=["gcn", "sage", "gin", "dgcnn"])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    split = link_split(load(args.dataset), val_ratio=0.05, test_ratio=0.1, seed=0)
    adj = to_csr(split.train_edge_index, split.num_nodes)
    links = np.concatenate([split.test_pos, split.test_neg], axis=1)
    test_set = extract_subgraphs(adj, links, np.zeros(links.shape[1]), extractor=Extractor.PATH, k=args.k)
    small = extract_subgraphs(adj, links[:, :4], np.zeros(4), extractor=Extractor.PATH, k=args.k)
    local_adjacency_rows(small.node_ptr, small.edge_ptr, small.local_edges, small.degrees)  # compile outside
    parts = (test_set.node_ptr, test_set.edge_ptr, test_set.local_edges)
    ref_degrees, ref_deg_s = _timed(lambda: local_degrees_numpy(*parts))
    degrees, deg_s = _timed(lambda: local_degrees(*parts))
    (ref_ptr, ref_col), ref_rows_s = _timed(lambda: local_adjacency_rows_numpy(*parts))
    (row_ptr, col), rows_s = _timed(lambda: local_adjacency_rows(*parts, degrees))
    equal = (np.array_equal(ref_degrees, degrees) and np.array_equal(ref_ptr, row_ptr)
             and np.array_equal(ref_col, col))
    print(f"{args.dataset}, k = {args.k}: {links.shape[1]:,} test subgraphs, {test_set.edges.shape[1]:,} edges, "
          f"{test_set.nodes.size:,} nodes")
    print("| per-set cache | numpy (s) | kernel (s) | ratio |")
    print("|---|---|---|---|")
    print(f"| degrees | {ref_deg_s:.2f} | {deg_s:.2f} | {ref_deg_s / deg_s:.2f}x |")
    print(f"| rows of A + I | {ref_rows_s:.2f} | {rows_s:.2f} | {ref_rows_s / rows_s:.2f}x |")
    print(f"equal: {equal}")
    del test_set, small, ref_degrees, degrees, ref_ptr, ref_col, row_ptr, col

    run = make_run("dplp-ps", args.dataset, 0, {"epsilon": 4.0, "k": args.k, "backbone": args.backbone,
                                                 "epochs": args.epochs})
    results = []
    for _ in range(2):
        (status, payload), seconds = _timed(lambda: execute_run(run, threads=args.threads))
        if status != "ok":
            raise SystemExit(f"the cell failed: {payload['message']}")
        result = json.loads(payload)
        results.append((seconds, result["metrics"], result["timings"]))
    (cold, cold_metrics, cold_timings), (warm, warm_metrics, warm_timings) = results
    print(f"\ncell: dplp-ps, epsilon 4, seed 0, k = {args.k}, {args.backbone}, {args.epochs} epoch(s)")
    print("| run | total (s) | extraction (s) | training (s) | evaluation (s) | test AUC |")
    print("|---|---|---|---|---|---|")
    for name, seconds, metrics, timings in (("first (sets extracted)", cold, cold_metrics, cold_timings),
                                            ("second (sets kept)", warm, warm_metrics, warm_timings)):
        print(f"| {name} | {seconds:.1f} | {timings['extraction']:.1f} | {timings['training']:.1f} | "
              f"{timings['evaluation']:.1f} | {100 * metrics['test_auc']:.4f} |")
    print(f"ratio: {cold / warm:.2f}x; metrics equal: {cold_metrics == warm_metrics}")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")


if __name__ == "__main__":
    main()
