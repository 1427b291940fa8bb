"""DPLP-PS's per-epoch validation pass: batches kept from one epoch to the next against batches
collated afresh every epoch (the former code), on the validation pairs of a dataset's seed-0 link split.

    GRAPHPRIV_DATA=MIRROR python benchmarks/bench_validation_pass.py \
        [--dataset pb] [--k 4] [--backbone gcn] [--epochs 10] [--threads 1]

The validation pairs (5% of the edges and as many non-edges, the link protocol's split) are
extracted as path subgraphs of radius ``--k`` from the training graph, and an untrained model of
the configured backbone scores them ``--epochs`` times, its parameters moved between passes as
training would move them:

- reference, in the same process: each pass collates the set afresh
  (:func:`graphpriv.linkpred.subgraphs.collate_sparse`, ``eval_batch_size`` pairs a batch) and
  builds each batch's normalised A + I again;
- graphpriv: :class:`graphpriv.methods.dplp_subgraph._ValidationAUC`, which collates the set on the
  first pass and keeps its batches (sets of at most ``KEEP_VALIDATION_EDGES`` edges).

Prints the mean time of a pass each way (the kept one includes its first pass's collation), their
ratio, whether every pass's AUC is equal, the set's size, and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import torch
from sklearn.metrics import roc_auc_score

from graphpriv.data import load
from graphpriv.data.graph import to_csr
from graphpriv.data.splits import link_split
from graphpriv.experiments.registry import make_config
from graphpriv.linkpred.subgraphs import Extractor, extract_subgraphs
from graphpriv.methods import dplp_subgraph


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="pb")
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--backbone", default="gcn", choices=["gcn", "sage", "gin", "dgcnn"])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    split = link_split(load(args.dataset), val_ratio=0.05, test_ratio=0.1, seed=0)
    adj = to_csr(split.train_edge_index, split.num_nodes)
    links = np.concatenate([split.val_pos, split.val_neg], axis=1)
    labels = np.r_[np.ones(split.val_pos.shape[1]), np.zeros(split.val_neg.shape[1])]
    val_set = extract_subgraphs(adj, links, labels, extractor=Extractor.PATH, k=args.k)
    config = make_config("dplp-ps", {"k": args.k, "backbone": args.backbone})
    cap = dplp_subgraph.label_cap(config)
    torch.manual_seed(0)
    model = dplp_subgraph._build_model(config)
    kept = dplp_subgraph._ValidationAUC(model, val_set, config, cap)
    fresh_seconds = kept_seconds = 0.0
    equal = True
    for _ in range(args.epochs):
        start = time.perf_counter()
        fresh = roc_auc_score(val_set.labels, dplp_subgraph._scores(model, val_set, config, cap).numpy())
        fresh_seconds += time.perf_counter() - start
        start = time.perf_counter()
        equal &= kept() == fresh
        kept_seconds += time.perf_counter() - start
        with torch.no_grad():  # a step's worth of change, so that no pass can reuse a score
            for p in model.parameters():
                p.add_(0.01 * torch.randn_like(p))
    print(f"{args.dataset}, k = {args.k}, {args.backbone}: {len(val_set)} validation subgraphs, "
          f"{val_set.edges.shape[1]} edges (kept: {kept.keep}), {args.epochs} passes, {args.threads} thread(s)")
    print(f"fresh batches (reference) {fresh_seconds / args.epochs:.3f} s a pass")
    print(f"kept batches (graphpriv)  {kept_seconds / args.epochs:.3f} s a pass, "
          f"{fresh_seconds / kept_seconds:.2f}x faster")
    print(f"every pass's AUC equal: {equal}")
    print(f"peak resident memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")


if __name__ == "__main__":
    main()
