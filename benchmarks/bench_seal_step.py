"""One training step of SEAL's DGCNN (non-private, sparse batches): graphpriv's step against the
former one, in the same process.

    GRAPHPRIV_DATA=MIRROR python benchmarks/bench_seal_step.py \
        [--dataset celegans] [--hops 2] [--batch 32] [--steps 30] [--threads 1]

The batches are SEAL's: ``--hops``-hop enclosing subgraphs of the seed-0 link split's training
edges and as many uniform non-edges, collated by :func:`graphpriv.linkpred.subgraphs.collate_sparse`,
SortPooling at the 60th percentile of their sizes (:func:`graphpriv.methods.dplp_subgraph.sort_pool_size`),
the model of :class:`graphpriv.methods.dplp_subgraph.SEALDGCNNConfig` (3 x 32 + 1 channels, dense
128), Adam at 1e-4. Timed: ``--steps`` steps of collate, forward, backward and Adam, each variant
from the same initial weights on the same batches:

- reference, in the same process: the former step, which built each batch's D^-1/2 (A + I) D^-1/2
  by coalescing a COO list of every directed edge and self-loop (a sort per batch), and ran the
  readout's first layer as ``nn.Conv1d`` (kernel = stride = 97) on the flattened sorted rows;
- graphpriv: the CSR matrix gathered from each node's presorted row
  (:attr:`graphpriv.linkpred.subgraphs.SubgraphSet.adjacency_rows`) and the first readout layer as
  the linear map of each row it is.

Prints the time per step of each, the ratio reference / graphpriv, the largest difference of the
logits at the initial weights and after the last step (the two compute the same function; float
summation order differs), and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import time
from functools import cached_property

import numpy as np
import torch
import torch.nn.functional as F
from link_examples import coalesced_adjacency, training_examples

from graphpriv.data.graph import to_csr
from graphpriv.linkpred.drnl import max_drnl_label
from graphpriv.linkpred.subgraphs import Extractor, collate_sparse, extract_subgraphs
from graphpriv.methods.dplp_subgraph import sort_pool_size
from graphpriv.nn.subgraph_gnn import SparseBatch, SubgraphGNN, bce_loss


def _conv1d_readout(self: SubgraphGNN, pooled: torch.Tensor) -> torch.Tensor:
    """The former readout: the sorted rows ``[B, sort_k, total]`` flattened through ``conv1`` as a Conv1d."""
    out = F.max_pool1d(F.relu(self.conv1(pooled.reshape(pooled.size(0), 1, -1))), 2, 2)
    return F.relu(self.conv2(out)).flatten(1)

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="celegans")
    parser.add_argument("--hops", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    n, edges, links, labels = training_examples(args.dataset)
    take = np.random.default_rng(1).permutation(links.shape[1])[:args.batch * args.steps]
    subgraphs = extract_subgraphs(to_csr(edges, n), links[:, take], labels[take],
                                  extractor=Extractor.NEIGHBOURHOOD, h=args.hops)
    sort_k = sort_pool_size(subgraphs.num_nodes_per_subgraph, 0.6)
    cap = max_drnl_label(4 * args.hops)
    batches = np.arange(len(subgraphs)).reshape(args.steps, args.batch)
    torch.manual_seed(0)
    initial = SubgraphGNN(cap + 1, backbone="dgcnn", hidden=32, num_layers=3, sort_k=sort_k, dense=128).state_dict()
    _ = subgraphs.adjacency_rows  # computed once per set (per fit), not per step: outside the timing

    def train() -> tuple[float, torch.Tensor, torch.Tensor]:
        scratch = SubgraphGNN(cap + 1, backbone="dgcnn", hidden=32, num_layers=3, sort_k=sort_k, dense=128)
        inputs, y = collate_sparse(subgraphs, batches[0], max_label=cap)
        bce_loss(scratch(*inputs), y).backward()  # warm-up: first-call costs stay out of the timing
        torch.manual_seed(1)
        model = SubgraphGNN(cap + 1, backbone="dgcnn", hidden=32, num_layers=3, sort_k=sort_k, dense=128)
        model.load_state_dict(initial)
        model.eval()
        with torch.no_grad():
            before = model(*collate_sparse(subgraphs, batches[0], max_label=cap)[0])
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
        model.train()
        start = time.perf_counter()
        for batch in batches:
            inputs, y = collate_sparse(subgraphs, batch, max_label=cap)
            optimizer.zero_grad()
            bce_loss(model(*inputs), y).backward()
            optimizer.step()
        seconds = (time.perf_counter() - start) / args.steps
        model.eval()
        with torch.no_grad():
            return seconds, before, model(*collate_sparse(subgraphs, batches[0], max_label=cap)[0])

    ours, before, logits = train()
    saved = SparseBatch.__dict__["gcn_adjacency"], SubgraphGNN._readout
    former = cached_property(coalesced_adjacency)
    former.__set_name__(SparseBatch, "gcn_adjacency")
    SparseBatch.gcn_adjacency, SubgraphGNN._readout = former, _conv1d_readout
    try:
        reference, ref_before, ref_logits = train()
    finally:
        SparseBatch.gcn_adjacency, SubgraphGNN._readout = saved
    nodes = subgraphs.num_nodes_per_subgraph
    print(f"{args.dataset}, {args.hops}-hop SEAL subgraphs, batch {args.batch}, {args.steps} steps: mean "
          f"{nodes.mean():.0f} nodes per subgraph (max {nodes.max()}), sort_k {sort_k}, {args.threads} thread(s)")
    print(f"  reference (coalesced A + I, Conv1d readout): {1000 * reference:.1f} ms per step")
    print(f"  graphpriv (gathered A + I, linear readout): {1000 * ours:.1f} ms per step, "
          f"ratio reference / graphpriv {reference / ours:.2f}x")
    print(f"  max |difference| of the logits: {float((before - ref_before).abs().max()):.2e} at the initial weights, "
          f"{float((logits - ref_logits).abs().max()):.2e} after {args.steps} steps (Adam turns rounding-level "
          f"differences of near-zero gradients into steps of size lr)")
    print(f"  peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
