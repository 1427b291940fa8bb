"""Probe: how much of a synthetic graph's community NMI (PGB's CD_NMI query) is chance?

Usage: python scripts/nmi_chance.py [--dataset cora] [--epsilon 1] [--seed 0]
           [--methods dp-1k tmf privgraph lapgraph-synthesis edgerand-synthesis] [--permutations 5]

PGB scores community structure by the NMI of the Louvain partitions of the input and the synthetic
graph. NMI is biased upwards by the number of clusters: two unrelated partitions into many small
parts have a clearly positive NMI. A generator whose graph has many isolated nodes (each its own
Louvain community) or many small components therefore scores well with no community structure at
all. This probe separates the two for one cell of the synthesis leaderboard:

- the run's synthetic graph, released as the leaderboard's run releases it (``graphpriv run``'s
  code path with the evaluation and attacks off; the same split, seed and release), and its
  ``community_nmi`` as the protocol computes it (the leaderboard's value for that run);
- the NMI with the synthetic partition's labels permuted over the nodes (the same cluster sizes, no
  relation to the input's): the chance level, mean and range over ``--permutations`` permutations;
- the adjusted mutual information (scikit-learn's ``adjusted_mutual_info_score``: 0 at chance, 1 for
  equal partitions), and each partition's number of communities.

A generator's NMI tells about structure only where it clears its own chance level.
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.metrics import adjusted_mutual_info_score, normalized_mutual_info_score

from graphpriv.data import load
from graphpriv.data.graph import to_csr
from graphpriv.data.splits import link_split
from graphpriv.experiments.runner import run_method
from graphpriv.metrics.graph_queries import compare_queries, graph_queries

OFF = {"edgerand-synthesis": {"utility": False}, "lapgraph-synthesis": {"utility": False}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="cora")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", nargs="+",
                        default=["dp-1k", "tmf", "privgraph", "lapgraph-synthesis", "edgerand-synthesis"])
    parser.add_argument("--test-ratio", type=float, default=0.2, help="the protocol's held-out share (its default)")
    parser.add_argument("--permutations", type=int, default=5)
    args = parser.parse_args()
    data = load(args.dataset)
    split = link_split(data, val_ratio=0.0, test_ratio=args.test_ratio, seed=args.seed)
    original = graph_queries(to_csr(split.train_edge_index, data.num_nodes), random_state=args.seed)
    truth = np.asarray(original.communities)
    rng = np.random.default_rng(args.seed)
    print(f"{args.dataset}, seed {args.seed}, epsilon {args.epsilon:g}: the input (80%) graph has "
          f"{len(set(truth.tolist()))} Louvain communities")
    print("| method | NMI (the protocol's) | NMI, labels permuted (chance) | AMI | communities | edges |")
    print("|---|---|---|---|---|---|")
    for method in args.methods:
        overrides = {"epsilon": args.epsilon, "attacks": "none", **OFF.get(method, {"evaluate": False})}
        release = run_method(method, data, seed=args.seed, overrides=overrides).release
        generated = graph_queries(to_csr(release.pairs, release.num_nodes), random_state=args.seed)
        labels = np.asarray(generated.communities)
        nmi = compare_queries(original, generated)["community_nmi"]
        chance = [normalized_mutual_info_score(truth, labels[rng.permutation(labels.size)])
                  for _ in range(args.permutations)]
        print(f"| {method} | {nmi:.4f} | {np.mean(chance):.4f} ({min(chance):.4f}-{max(chance):.4f}) | "
              f"{adjusted_mutual_info_score(truth, labels):.4f} | {len(set(labels.tolist()))} | {release.num_edges} |")


if __name__ == "__main__":
    main()
