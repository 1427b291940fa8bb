"""Path-subgraph extraction: graphpriv's compiled extractor vs its path-enumerating kernel and
networkx ``all_simple_paths``.

Training links (default): the path subgraphs of every training link (projected edges + capped
negatives) of a dataset. ``--evaluation``: those of held-out links on the unprojected graph, as
DPLP's validation and test scoring extract them (10% of the edges held out, as many uniform
non-edges, subgraphs taken from the other 90%). Times, in the same process, the depth-first path
enumeration (``graphpriv.linkpred.paths._path_subgraph_edges``: the kernel of every k before the
neighbour-count kernel took k <= 4, and still the kernel of k = 5, 6) on the same links and the
networkx reference (the DPLP reference code's approach) on a random sample; checks the edge sets
are equal; prints per-link times, the ratios and peak memory.

    python benchmarks/bench_path_extraction.py --dataset yeast --theta 40 --k 4
    python benchmarks/bench_path_extraction.py --dataset facebook --k 3 --evaluation --links 4000
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc

import numpy as np

from graphpriv.data import load, to_csr, undirected_pairs
from graphpriv.linkpred.examples import training_links
from graphpriv.linkpred.paths import _path_subgraph_edges, path_subgraph_edges
from graphpriv.linkpred.projection import project_degree
from graphpriv.testing.graphs import to_networkx
from graphpriv.testing.references import path_subgraph_edges_nx


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="yeast")
    parser.add_argument("--theta", type=int, default=40)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--sample", type=int, default=200, help="links timed with networkx (0: none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--evaluation", action="store_true",
                        help="held-out links on the unprojected graph (validation and test scoring)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each kernel (best kept)")
    parser.add_argument("--links", type=int, default=4000, help="--evaluation: links extracted (half edges)")
    args = parser.parse_args()

    data = load(args.dataset)
    rng = np.random.default_rng(args.seed)
    if args.evaluation:
        every = undirected_pairs(data.edge_index)
        held = rng.permutation(every.shape[1])
        cut = every.shape[1] // 10
        pairs, positives = every[:, held[cut:]], every[:, held[:cut][:args.links // 2]]
        present = set(map(tuple, every.T.tolist()))
        negatives = [(u, v) for u, v in rng.integers(0, data.num_nodes, size=(4 * positives.shape[1], 2)).tolist()
                     if u < v and (u, v) not in present][:positives.shape[1]]
        links = np.concatenate([positives, np.array(negatives, dtype=np.int64).T], axis=1)
        setting = "evaluation links, unprojected graph"
    else:
        pairs = project_degree(undirected_pairs(data.edge_index), data.num_nodes, theta=args.theta, rng=rng)
        links, _ = training_links(pairs, data.num_nodes, lam=1.0, theta=args.theta, rng=rng)
        setting = f"training links, theta={args.theta}"
    adj = to_csr(pairs, data.num_nodes)

    adj.sort_indices()  # the enumeration looks a path's last edge up in a sorted row

    def enumeration(some: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ptr, a, b = _path_subgraph_edges(adj.indptr.astype(np.int64), adj.indices.astype(np.int64),
                                         np.ascontiguousarray(some[0]), np.ascontiguousarray(some[1]), args.k)
        return ptr, np.stack([a, b])

    path_subgraph_edges(adj, links[:, :2], k=args.k)  # compile (numba cache) outside the timing
    enumeration(links[:, :2])  # and the enumeration's

    ours, enum_s = [], []
    for _ in range(args.repeats):  # alternated, best of each (the machine's other jobs add noise)
        t0 = time.perf_counter()
        ptr, edges = path_subgraph_edges(adj, links, k=args.k)
        ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        enum_ptr, enum_edges = enumeration(links)
        enum_s.append(time.perf_counter() - t0)
    ours, enum_s = min(ours), min(enum_s)
    if not (np.array_equal(enum_ptr, ptr) and np.array_equal(enum_edges, edges)):
        raise SystemExit("MISMATCH: the extractor and the path enumeration disagree")
    tracemalloc.start()
    path_subgraph_edges(adj, links, k=args.k)
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
    per_ref = reference / max(sample.size, 1)
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"dataset={args.dataset} {setting} k={args.k} links={links.shape[1]} "
          f"subgraph_edges={edges.shape[1]}")
    print(f"graphpriv  all links: {ours:.2f} s  ({per_ours * 1e6:.1f} us/link)")
    print(f"path enumeration, all links: {enum_s:.2f} s  ({enum_s / links.shape[1] * 1e6:.1f} us/link), "
          f"ratio enumeration / graphpriv {enum_s / ours:.2f}x, the same edge sets")
    if sample.size:
        print(f"networkx   {sample.size} links: {reference:.2f} s  ({per_ref * 1e6:.1f} us/link), "
              f"all links extrapolated: {per_ref * links.shape[1]:.1f} s")
        print(f"speed ratio (networkx / graphpriv, per link): {per_ref / per_ours:.0f}x")
        print(f"edge sets identical on the {sample.size} sampled links: yes")
    print(f"peak memory: traced Python allocations {traced_peak / 2**20:.1f} MiB, process RSS {peak_rss:.0f} MiB")


if __name__ == "__main__":
    main()
