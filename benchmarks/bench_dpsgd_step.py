"""DP-SGD step with per-subgraph clipping: vectorized (torch.func) vs a loop over single examples.

Both compute the clipped per-example gradients of the same batch of padded path subgraphs; the
benchmark checks they agree and prints the time of each, their ratio and peak memory.

    python benchmarks/bench_dpsgd_step.py --dataset yeast --theta 8 --k 4 --batch 128
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import torch

from graphpriv.data import load, to_csr, undirected_pairs
from graphpriv.linkpred.drnl import max_drnl_label
from graphpriv.linkpred.examples import training_links
from graphpriv.linkpred.projection import project_degree
from graphpriv.linkpred.subgraphs import Extractor, collate_dense, extract_subgraphs
from graphpriv.nn.subgraph_gnn import SubgraphGNN, bce_loss
from graphpriv.privacy.engine import clipped_gradient_sum


def loop_clipped(model, inputs, y, c):
    out = {n: [] for n, _ in model.named_parameters()}
    for i in range(y.numel()):
        model.zero_grad()
        bce_loss(model(*(x[i:i + 1] for x in inputs)), y[i:i + 1]).backward()
        norm = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
        factor = min(1.0, c / (float(norm) + 1e-6))
        for n, p in model.named_parameters():
            out[n].append(p.grad * factor)
    return {n: torch.stack(v) for n, v in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="yeast")
    parser.add_argument("--theta", type=int, default=8)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--buckets", type=int, default=1, help="size buckets for the vectorized path")
    args = parser.parse_args()
    data = load(args.dataset)
    rng = np.random.default_rng(0)
    pairs = project_degree(undirected_pairs(data.edge_index), data.num_nodes, theta=args.theta, rng=rng)
    links, labels = training_links(pairs, data.num_nodes, lam=1.0, theta=args.theta, rng=rng)
    subgraphs = extract_subgraphs(to_csr(pairs, data.num_nodes), links, labels, extractor=Extractor.PATH, k=args.k)
    cap = max_drnl_label(args.k)
    torch.manual_seed(0)
    model = SubgraphGNN(cap + 1, num_layers=args.k, dropout=0.0)
    batch = torch.from_numpy(np.random.default_rng(1).choice(len(subgraphs), args.batch, replace=False))
    inputs, y = collate_dense(subgraphs, batch, max_label=cap)
    sizes = torch.from_numpy(subgraphs.num_nodes_per_subgraph)

    def collate(idx):
        return collate_dense(subgraphs, idx, max_label=cap)

    def vectorized():
        return clipped_gradient_sum(model, bce_loss, collate, batch, 1.0, sizes=sizes, buckets=args.buckets)[0]

    timings = {}
    for name, fn in (("vectorized", vectorized), ("loop", lambda: loop_clipped(model, inputs, y, 1.0))):
        fn()
        t0 = time.perf_counter()
        for _ in range(args.repeats):
            result = fn()
        timings[name] = (time.perf_counter() - t0) / args.repeats
        if name == "vectorized":
            ours = result
    for n, g in loop_clipped(model, inputs, y, 1.0).items():
        torch.testing.assert_close(ours[n], g.sum(0), atol=1e-4, rtol=1e-4)
    print(f"dataset={args.dataset} theta={args.theta} k={args.k} batch={args.batch} "
          f"largest subgraph in batch={inputs[0].shape[1]} nodes")
    print(f"vectorized (torch.func vmap, {args.buckets} size buckets): {timings['vectorized'] * 1e3:.1f} ms/step")
    print(f"loop over single examples:    {timings['loop'] * 1e3:.1f} ms/step")
    print(f"speed ratio (loop / vectorized): {timings['loop'] / timings['vectorized']:.1f}x; summed clipped gradients agree to 1e-4")
    print(f"peak process RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
