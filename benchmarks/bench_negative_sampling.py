"""The GAE's negatives: graphpriv's :class:`~graphpriv.nn.negative_sampling.NegativeSampler` against PyG's
``negative_sampling`` (the reference), as the GAE draws them in every epoch, on a dataset's undirected
edges (both directions), one negative per undirected edge.

    GRAPHPRIV_DATA=MIRROR python benchmarks/bench_negative_sampling.py [--dataset facebook] [--draws 20]

Each way draws ``--draws`` times from Python's ``random`` seeded alike, in the same process (PyG
first, then graphpriv, then once more each, alternated, to see the machine's drift). Prints the mean
time of a draw each way (the sampler's set-up included), their ratio, whether every draw is equal bit
for bit and Python's generator ends in the same state, then the GAE's training (``--epochs``, 200,
after a two-epoch warm-up) twice each way, alternated, with the embeddings compared, and the peak
resident memory.
"""

from __future__ import annotations

import argparse
import random
import resource
import time
from unittest import mock

import torch
from torch_geometric.utils import negative_sampling

from graphpriv.data import load
from graphpriv.nn import gae
from graphpriv.nn.negative_sampling import NegativeSampler


class _PygSampler:
    """The former draws: PyG's ``negative_sampling`` on every call."""

    def __init__(self, edge_index: torch.Tensor, num_nodes: int) -> None:
        self.edge_index, self.num_nodes = edge_index, num_nodes

    def draw(self, num_neg_samples: int) -> torch.Tensor:
        return negative_sampling(self.edge_index, num_nodes=self.num_nodes, num_neg_samples=num_neg_samples)


def _draws(sampler_type: type, edge_index: torch.Tensor, num_nodes: int, k: int, draws: int):
    random.seed(0)
    start = time.perf_counter()
    sampler = sampler_type(edge_index, num_nodes)
    out = [sampler.draw(k) for _ in range(draws)]
    return time.perf_counter() - start, out, random.getstate()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="facebook")
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    data = load(args.dataset)
    edge_index, num_nodes = data.edge_index, data.num_nodes
    k = int((edge_index[0] < edge_index[1]).sum())
    times = {"pyg": 0.0, "graphpriv": 0.0}
    equal = True
    for _ in range(2):
        t_ref, ref, state_ref = _draws(_PygSampler, edge_index, num_nodes, k, args.draws)
        t_new, new, state_new = _draws(NegativeSampler, edge_index, num_nodes, k, args.draws)
        times["pyg"] += t_ref
        times["graphpriv"] += t_new
        equal &= state_ref == state_new and all(torch.equal(a, b) for a, b in zip(ref, new))
    per = {name: value / (2 * args.draws) for name, value in times.items()}
    print(f"{args.dataset}: N = {num_nodes:,}, {k:,} undirected edges, {k:,} negatives a draw, {args.draws} draws x 2")
    print(f"  PyG negative_sampling  {per['pyg']:.4f} s a draw")
    print(f"  NegativeSampler        {per['graphpriv']:.4f} s a draw   ({per['pyg'] / per['graphpriv']:.1f}x)")
    print(f"  every draw equal and Python's random in the same state after: {equal}")

    x = getattr(data, "x", None)
    train = {"hidden": 128, "out": 64, "lr": 0.001, "seed": 0, "edges_per_epoch": gae.EDGES_PER_EPOCH,
             "sample_above": gae.SAMPLE_ABOVE}
    gae._train(edge_index, num_nodes, x, epochs=2, **train)  # warm-up: first allocations, thread pool
    spent = {"pyg": 0.0, "graphpriv": 0.0}
    embeddings = {}
    for name in ["pyg", "graphpriv", "pyg", "graphpriv"]:
        sampler = _PygSampler if name == "pyg" else NegativeSampler
        with mock.patch.object(gae, "NegativeSampler", sampler):
            start = time.perf_counter()
            embeddings[name] = gae._train(edge_index, num_nodes, x, epochs=args.epochs, **train)
            spent[name] += time.perf_counter() - start
    print(f"  GAE training, {args.epochs} epochs (mean of 2): {spent['pyg'] / 2:.1f} s with PyG's draws, "
          f"{spent['graphpriv'] / 2:.1f} s with NegativeSampler ({spent['pyg'] / spent['graphpriv']:.2f}x); "
          f"embeddings equal: {torch.equal(embeddings['pyg'], embeddings['graphpriv'])}")
    print(f"  peak resident memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
