"""PrivDPR end to end on a seeded Chung–Lu graph: training V, then generation, wall time per phase
and peak memory (the scale goal: Amazon0505's size, 410,236 nodes and 3,356,824 edges, the largest
graph of the PrivDPR paper, under 60 minutes and 16 GB on this machine).

    python benchmarks/bench_privdpr_scale.py [--nodes 410236] [--edges 3356824] [--batch-nodes 1024]

With the spec's b = 16 nodes per step, T = epochs floor(N / b) = 128k steps at Amazon's size, each
noising the whole N x r gradient; ``--batch-nodes`` sets b (the depth of Eq. 13 grows with the
batch's pair count B = b R_wn R_wl, and the guarantee is the same for any b).
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import scipy.sparse as sp
import torch


def chung_lu(num_nodes: int, num_edges: int, *, exponent: float = 2.5, seed: int = 0) -> sp.csr_matrix:
    """Symmetric CSR adjacency of a Chung–Lu graph: endpoints drawn in proportion to power-law
    weights w_i ~ i^(-1/(exponent-1)), self-loops and repeats dropped, drawn until ``num_edges``."""
    rng = np.random.default_rng(seed)
    w = (np.arange(1, num_nodes + 1, dtype=np.float64)) ** (-1.0 / (exponent - 1.0))
    p = w / w.sum()
    codes = np.empty(0, dtype=np.int64)
    while codes.size < num_edges:
        k = int(1.2 * (num_edges - codes.size)) + 1024
        u, v = rng.choice(num_nodes, k, p=p), rng.choice(num_nodes, k, p=p)
        keep = u != v
        lo, hi = np.minimum(u[keep], v[keep]), np.maximum(u[keep], v[keep])
        codes = np.unique(np.concatenate([codes, lo * num_nodes + hi]))
    codes = rng.permutation(codes)[:num_edges]
    rows, cols = codes // num_nodes, codes % num_nodes
    adj = sp.csr_matrix((np.ones(2 * num_edges, np.float32), (np.r_[rows, cols], np.r_[cols, rows])),
                        shape=(num_nodes, num_nodes))
    adj.sort_indices()
    return adj


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=410_236)
    parser.add_argument("--edges", type=int, default=3_356_824)
    parser.add_argument("--batch-nodes", type=int, default=1024)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--epsilon", type=float, default=3.2)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    from graphpriv.synthesis.generation import assemble_graph, score_counts
    from graphpriv.synthesis.privdpr import train_embeddings

    t0 = time.perf_counter()
    adj = chung_lu(args.nodes, args.edges)
    t_graph = time.perf_counter() - t0
    print(f"## PrivDPR at scale: Chung–Lu, {args.nodes:,} nodes, {args.edges:,} edges (built in {t_graph:.1f} s); "
          f"b = {args.batch_nodes}, {args.epochs} epochs, eps = {args.epsilon}, {args.threads} threads\n", flush=True)
    t0 = time.perf_counter()
    trained = train_embeddings(adj, epsilon=args.epsilon, epochs=args.epochs, batch_nodes=args.batch_nodes,
                               progress=lambda done, total, **kw: print(f"  epoch {done}/{total} "
                                                                         f"{time.perf_counter() - t0:.0f} s",
                                                                         flush=True))
    t_train = time.perf_counter() - t0
    t0 = time.perf_counter()
    counts, model_edges = score_counts(trained.V, generator=torch.Generator().manual_seed(1))
    pairs = assemble_graph(counts, args.edges, rng=np.random.default_rng(2))
    t_gen = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print("| phase | wall time (s) | notes |\n|---|---|---|")
    print(f"| training | {t_train:.1f} | T = {trained.iterations} steps, depth L = {trained.depth}, "
          f"noise multiplier {trained.noise_multiplier:.3g} (rigorous) |")
    print(f"| generation | {t_gen:.1f} | {pairs.shape[1]:,} edges (target: the input's |E|, public here); "
          f"model count {model_edges:,} |")
    print(f"| total | {t_train + t_gen:.1f} | peak RSS {peak:.2f} GiB |")


if __name__ == "__main__":
    main()
