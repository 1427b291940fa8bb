"""Path-subgraph extraction: graphpriv's compiled extractor vs networkx ``all_simple_paths``.

Extracts the path subgraphs of every training link (projected edges + capped negatives) of a
dataset and times a networkx reference (the DPLP reference code's approach) on a random sample of
the same links, in the same process; prints per-link times, their ratio and peak memory.

    python benchmarks/bench_path_extraction.py --dataset yeast --theta 40 --k 4
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc

import numpy as np

from graphpriv.data import load, to_csr, undirected_pairs
from graphpriv.linkpred.examples import training_links
from graphpriv.linkpred.paths import path_subgraph_edges
from graphpriv.linkpred.projection import project_degree
from graphpriv.testing.graphs import to_networkx
from graphpriv.testing.references import path_subgraph_edges_nx


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="yeast")
    parser.add_argument("--theta", type=int, default=40)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--sample", type=int, default=200, help="links timed with networkx")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    data = load(args.dataset)
    rng = np.random.default_rng(args.seed)
    pairs = project_degree(undirected_pairs(data.edge_index), data.num_nodes, theta=args.theta, rng=rng)
    links, _ = training_links(pairs, data.num_nodes, lam=1.0, theta=args.theta, rng=rng)
    adj = to_csr(pairs, data.num_nodes)
    path_subgraph_edges(adj, links[:, :2], k=args.k)  # compile (numba cache) outside the timing

    tracemalloc.start()
    t0 = time.perf_counter()
    ptr, edges = path_subgraph_edges(adj, links, k=args.k)
    ours = time.perf_counter() - t0
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    graph = to_networkx(pairs, data.num_nodes)
    sample = rng.choice(links.shape[1], size=min(args.sample, links.shape[1]), replace=False)
    t0 = time.perf_counter()
    for i in sample:
        u, v = links[:, i]
        ref = path_subgraph_edges_nx(graph, int(u), int(v), args.k)
        got = set(map(tuple, edges[:, ptr[i]:ptr[i + 1]].T.tolist()))
        if got != ref:
            raise SystemExit(f"MISMATCH on link {(u, v)}: extractor and networkx disagree")
    reference = time.perf_counter() - t0

    per_ours = ours / links.shape[1]
    per_ref = reference / sample.size
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"dataset={args.dataset} theta={args.theta} k={args.k} links={links.shape[1]} "
          f"subgraph_edges={edges.shape[1]}")
    print(f"graphpriv  all links: {ours:.2f} s  ({per_ours * 1e6:.1f} us/link)")
    print(f"networkx   {sample.size} links: {reference:.2f} s  ({per_ref * 1e6:.1f} us/link), "
          f"all links extrapolated: {per_ref * links.shape[1]:.1f} s")
    print(f"speed ratio (networkx / graphpriv, per link): {per_ref / per_ours:.0f}x")
    print(f"edge sets identical on the {sample.size} sampled links: yes")
    print(f"peak memory: traced Python allocations {traced_peak / 2**20:.1f} MiB, process RSS {peak_rss:.0f} MiB")


if __name__ == "__main__":
    main()
