"""Attack suite speed: the eight attacks on Cora end to end, and CN/AA/RA at scale.

1. ``--dataset cora``: every attack fit on the published input graph (G minus E_s and the LP test
   edges) and scored on E_s + as many non-edges; seconds per attack and the AUC.
2. ``--heuristics-dataset deezer_europe``: CN, AA and RA for ``--pairs`` (20,000) uniform pairs,
   vectorized on sparse rows, against networkx's per-pair generators on the same pairs in the same
   process (ratio printed); the target is under 5 s per heuristic.

    python benchmarks/bench_attacks.py
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc

import networkx as nx
import numpy as np

from graphpriv.attacks import ATTACKS, make_attack
from graphpriv.attacks.protocol import SensitiveLinkProtocol
from graphpriv.attacks.suite import attack_auc
from graphpriv.data import load
from graphpriv.linkpred.heuristics import (
    adamic_adar,
    common_neighbours,
    resource_allocation,
)
from graphpriv.testing.graphs import to_networkx


def bench_suite(dataset: str, seed: int) -> None:
    protocol = SensitiveLinkProtocol(load(dataset), seed=seed)
    graph = protocol.input_graph
    print(f"## all attacks on {dataset} (seed {seed}): {graph.num_nodes} nodes, {graph.num_edges} published "
          f"edges, {protocol.split.sensitive_pos.shape[1]} sensitive links + as many non-edges\n")
    print("| attack | seconds (fit + score) | attack AUC |\n|---|---|---|")
    total = 0.0
    for name in ATTACKS:
        auc, seconds = attack_auc(make_attack(name, seed=seed), graph, protocol.split.sensitive_pos,
                                  protocol.split.sensitive_neg)
        total += seconds
        print(f"| {name} | {seconds:.2f} | {auc:.4f} |")
    print(f"| **all eight** | {total:.1f} | |\n")


def bench_heuristics(dataset: str, num_pairs: int, reference_pairs: int, seed: int) -> None:
    data = load(dataset)
    protocol = SensitiveLinkProtocol(data, seed=seed)
    adj = protocol.input_graph.adjacency
    rng = np.random.default_rng(seed)
    pairs = rng.integers(0, data.num_nodes, size=(2, num_pairs))
    pairs = pairs[:, pairs[0] != pairs[1]]
    g = to_networkx(protocol.input_graph.pairs, data.num_nodes)
    sample = list(map(tuple, pairs[:, :reference_pairs].T.tolist()))
    refs = {
        "cn": lambda: [len(list(nx.common_neighbors(g, a, b))) for a, b in sample],
        "aa": lambda: [s for _, _, s in nx.adamic_adar_index(g, sample)],
        "ra": lambda: [s for _, _, s in nx.resource_allocation_index(g, sample)],
    }
    print(f"## CN / AA / RA on {dataset}: {data.num_nodes} nodes, {protocol.input_graph.num_edges} edges, "
          f"{pairs.shape[1]} pairs (networkx reference on {len(sample)} of them)\n")
    print("| heuristic | graphpriv, all pairs (s) | per pair (us) | networkx per pair (us) | speed-up | peak traced MiB |")
    print("|---|---|---|---|---|---|")
    for name, fn in (("cn", common_neighbours), ("aa", adamic_adar), ("ra", resource_allocation)):
        tracemalloc.start()
        t0 = time.perf_counter()
        scores = fn(adj, pairs)
        ours = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        t0 = time.perf_counter()
        ref = np.asarray(refs[name](), dtype=np.float64)
        theirs = (time.perf_counter() - t0) / len(sample)
        np.testing.assert_allclose(scores[:len(sample)], ref, rtol=1e-9)
        per = ours / pairs.shape[1]
        print(f"| {name} | {ours:.3f} | {1e6 * per:.2f} | {1e6 * theirs:.2f} | {theirs / per:.0f}x | {peak:.1f} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="cora")
    parser.add_argument("--heuristics-dataset", default="deezer_europe")
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--reference-pairs", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-suite", action="store_true")
    args = parser.parse_args()
    bench_heuristics(args.heuristics_dataset, args.pairs, args.reference_pairs, args.seed)
    if not args.skip_suite:
        bench_suite(args.dataset, args.seed)
    print(f"peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")


if __name__ == "__main__":
    main()
