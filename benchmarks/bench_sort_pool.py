"""DGCNN's SortPooling on a sparse batch: each subgraph's top rows taken from the flat node rows
(graphpriv) against scattering every row into the dense ``[B, n, total]`` layout first and pooling
that (the former code, n the batch's largest subgraph), on the validation pairs of a dataset's
seed-0 link split.

    GRAPHPRIV_DATA=MIRROR python benchmarks/bench_sort_pool.py \
        [--dataset facebook] [--k 4] [--links 2000] [--passes 3] [--threads 1]

The first ``--links`` validation pairs (5% of the edges and as many non-edges, the link protocol's
split; positives and negatives alternated) are extracted as path subgraphs of radius ``--k`` from
the training graph and collated as DPLP-PS's evaluation does (``eval_batch_size`` pairs a batch,
kept). An untrained DGCNN of the registry's DPLP-PS configuration (sort_k 10) scores them ``--passes``
times each way, in the same process and alternated: graphpriv's forward, and the reference (the
same layers, then the dense layout and ``_dense_rows``). Prints the mean time of a pass each way,
their ratio, whether the logits are equal bit for bit, the set's size and the peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import torch

from graphpriv.data import load
from graphpriv.data.graph import to_csr
from graphpriv.data.splits import link_split
from graphpriv.experiments.registry import make_config
from graphpriv.linkpred.subgraphs import Extractor, extract_subgraphs
from graphpriv.methods import dplp_subgraph
from graphpriv.nn.subgraph_gnn import SparseBatch, SubgraphGNN, _aggregate


@torch.no_grad()
def reference_logits(model: SubgraphGNN, batch: SparseBatch) -> torch.Tensor:
    """The former sparse DGCNN forward: every node row scattered into the dense layout, then pooled."""
    x = model.embedding(batch.z)
    layers = []
    for conv in model.convs:
        x = torch.tanh(_aggregate(conv, x, batch, last=False))
        layers.append(x)
    h = torch.cat(layers, dim=-1)
    width = max(batch.width, model.sort_k)
    dense = h.new_zeros(batch.num_subgraphs, width, h.size(-1)).index_put((batch.owner, batch.local), h)
    mask = torch.zeros(batch.num_subgraphs, width, dtype=torch.bool)
    mask[batch.owner, batch.local] = True
    return model._head(model._readout(model._dense_rows(dense, mask)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="facebook")
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--links", type=int, default=2000)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    split = link_split(load(args.dataset), val_ratio=0.05, test_ratio=0.1, seed=0)
    adj = to_csr(split.train_edge_index, split.num_nodes)
    half = args.links // 2
    links = np.concatenate([split.val_pos[:, :half], split.val_neg[:, :half]], axis=1)
    labels = np.r_[np.ones(min(half, split.val_pos.shape[1])), np.zeros(min(half, split.val_neg.shape[1]))]
    val_set = extract_subgraphs(adj, links, labels, extractor=Extractor.PATH, k=args.k)
    config = make_config("dplp-ps", {"k": args.k, "backbone": "dgcnn"})
    cap = dplp_subgraph.label_cap(config)
    torch.manual_seed(0)
    model = dplp_subgraph._build_model(config).eval()
    batches = [inputs[0] for inputs in dplp_subgraph._eval_batches(val_set, config, cap)]
    for batch in batches:  # the kept batches' matrices, built once as the validation pass keeps them
        batch.gcn_adjacency  # noqa: B018
    ours = reference = 0.0
    equal = True
    for _ in range(args.passes):
        start = time.perf_counter()
        with torch.no_grad():
            got = [model(batch) for batch in batches]
        ours += time.perf_counter() - start
        start = time.perf_counter()
        want = [reference_logits(model, batch) for batch in batches]
        reference += time.perf_counter() - start
        equal &= all(torch.equal(a, b) for a, b in zip(got, want))
    width = max(batch.width for batch in batches)
    print(f"{args.dataset}, k = {args.k}, dgcnn (sort_k {model.sort_k}): {len(val_set)} validation subgraphs, "
          f"{val_set.edges.shape[1]} edges, {len(batches)} batches, largest subgraph {width} nodes, "
          f"{args.passes} passes, {args.threads} thread(s)")
    print(f"dense layout (reference) {reference / args.passes:.3f} s a pass")
    print(f"top rows (graphpriv)     {ours / args.passes:.3f} s a pass, {reference / ours:.2f}x faster")
    print(f"logits equal bit for bit: {equal}")
    print(f"peak resident memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")


if __name__ == "__main__":
    main()
