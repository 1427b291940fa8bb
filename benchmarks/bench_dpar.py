"""DPAR speed: DP-APPR for all seeds of a large synthetic graph, and a full dpar-gm run.

    python benchmarks/bench_dpar.py [--nodes 100000] [--degree 10] [--seeds 70 1000] [--dataset cora_ml]

Part 1: an Erdős–Rényi graph (average degree ``--degree``); for each seed count M, APPR by ISTA
for all M seeds at once (``appr_ista``, one sparse product per iteration) and the DP rows (GM and
EM0), against the reference: the textbook ISTA with a dense [N, M] iterate
(``graphpriv.testing.references.appr_ista_dense``, all seeds at once; timed on the first 70 seeds and
scaled linearly to M; the vectors are checked equal). Goal: under a minute at 100k nodes.
Part 2: the DP-SGD step's clipped gradient sum on ``--dataset``'s features: ghost clipping
(``graphpriv.privacy.ghost_clipping``, what DPAR and dp-mlp use) against the vectorized
per-example engine (``torch.func`` vmap, ``graphpriv.privacy.engine.clipped_gradient_sum``), same
batches and dropout masks, sums checked equal; rows of K = 1 (dp-mlp, the one-row variant) and
K = 8 entries.
Part 3: a full ``dpar-gm`` run (split, sampling, APPR, DP rows, DP-SGD, inference) on ``--dataset``
at eps = 8. Goal: under 2 minutes on cora_ml. Peak memory is the process's max RSS.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import scipy.sparse as sp


def erdos_renyi(num_nodes: int, degree: float, seed: int = 0) -> sp.csr_matrix:
    """Symmetric CSR adjacency with ~num_nodes * degree / 2 distinct edges drawn uniformly."""
    rng = np.random.default_rng(seed)
    m = int(num_nodes * degree / 2)
    u, v = rng.integers(0, num_nodes, m), rng.integers(0, num_nodes, m)
    keep = u != v
    adj = sp.csr_matrix((np.ones(2 * keep.sum()), (np.r_[u[keep], v[keep]], np.r_[v[keep], u[keep]])),
                        shape=(num_nodes, num_nodes))
    adj.data[:] = 1.0
    return adj


def peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def clip_comparison(x, num_classes: int, *, steps: int, batch: int) -> None:
    """Part 2: ``steps`` clipped sums of ``batch`` rows, ghost clipping against the vmap engine."""
    import torch
    import torch.nn.functional as F

    from graphpriv.nn.decoupled import DecoupledModel, feature_mlp
    from graphpriv.privacy.engine import clipped_gradient_sum
    from graphpriv.privacy.ghost_clipping import decoupled_clipped_sum

    print(f"\n## Clipped gradient sum, {steps} batches of {batch} rows ({x.shape[1]} features, hidden 32, "
          "dropout 0.1)\n")
    print("| entries per row K | vmap engine (ms / batch) | ghost clipping (ms / batch) | speed-up | max abs diff |")
    print("|---|---|---|---|---|")
    for k in (1, 8):
        gen = torch.Generator().manual_seed(k)
        model = DecoupledModel(feature_mlp(x.shape[1], 32, num_classes, 0.1)).train()
        batches = [(torch.randint(x.shape[0], (batch, k), generator=gen), torch.rand(batch, k, generator=gen),
                    torch.randint(num_classes, (batch,), generator=gen)) for _ in range(steps)]
        timings, sums = {}, {}
        for name in ("vmap", "ghost"):
            torch.manual_seed(0)
            t0 = time.perf_counter()
            for index, w, y in batches:
                if name == "vmap":
                    def collate(rows, index=index, w=w, y=y):
                        return (x[index[rows]], w[rows]), y[rows]
                    out, _ = clipped_gradient_sum(model, lambda o, t: F.cross_entropy(o, t), collate,
                                                  torch.arange(batch), 1.0)
                else:
                    out, _ = decoupled_clipped_sum(model, x[index], w, y, 1.0)
            timings[name] = (time.perf_counter() - t0) / steps
            sums[name] = out
        diff = max(float((sums["vmap"][n] - sums["ghost"][n]).abs().max()) for n in sums["vmap"])
        assert diff < 1e-4, "ghost clipping disagrees with the engine"
        print(f"| {k} | {1e3 * timings['vmap']:.2f} | {1e3 * timings['ghost']:.2f} | "
              f"{timings['vmap'] / timings['ghost']:.1f}x | {diff:.1e} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--degree", type=float, default=10.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[70, 1000])
    parser.add_argument("--dataset", default="cora_ml")
    parser.add_argument("--skip-run", action="store_true")
    parser.add_argument("--clip-steps", type=int, default=200, help="batches timed in part 2")
    parser.add_argument("--batch", type=int, default=64, help="rows per batch in part 2")
    args = parser.parse_args()
    from graphpriv.propagation.appr import appr_ista
    from graphpriv.propagation.dp_appr import dp_appr_em, dp_appr_gaussian
    from graphpriv.testing.references import appr_ista_dense

    adj = erdos_renyi(args.nodes, args.degree)
    print(f"## DP-APPR on Erdős–Rényi, {args.nodes:,} nodes, {adj.nnz // 2:,} edges "
          "(alpha 0.25, rho 1e-4, tol 1e-4, K = 2)\n")
    print("| seeds M | APPR, all seeds at once (s) | ISTA iterations | DP rows GM + EM0 (s) | total (s) | "
          "dense-iterate ISTA (s, reference) | speed-up | peak RSS (GiB) |")
    print("|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for m in args.seeds:
        seeds = rng.choice(args.nodes, m, replace=False)
        t0 = time.perf_counter()
        p, iters = appr_ista(adj, seeds)
        t_appr = time.perf_counter() - t0
        t0 = time.perf_counter()
        dp_appr_gaussian(p, k=2, noise_std=0.1, c1=0.01, rng=rng)
        dp_appr_em(p, k=2, epsilon_row=0.1, c2=0.001, rng=rng)
        t_rows = time.perf_counter() - t0
        ref_seeds = seeds[:70]
        t0 = time.perf_counter()
        ref, _ = appr_ista_dense(adj, ref_seeds)
        t_ref = (time.perf_counter() - t0) * m / ref_seeds.size
        same = ref_seeds.size == m and np.allclose(ref, p, atol=1e-12) or np.allclose(
            ref, appr_ista(adj, ref_seeds)[0], atol=1e-12)  # the same seeds stop at the same iteration
        assert same, "sparse ISTA disagrees with the dense reference"
        del p, ref
        print(f"| {m} | {t_appr:.2f} | {iters} | {t_rows:.2f} | {t_appr + t_rows:.2f} | {t_ref:.1f} | "
              f"{t_ref / (t_appr + t_rows):.1f}x | {peak_gib():.2f} |")
    from graphpriv.data import load

    data = load(args.dataset)
    clip_comparison(data.x.float(), int(data.y.max()) + 1, steps=args.clip_steps, batch=args.batch)
    if args.skip_run:
        return
    from graphpriv.experiments.registry import make_config, method_spec

    config = make_config("dpar-gm", {"epsilon": 8.0})
    t0 = time.perf_counter()
    result = method_spec("dpar-gm").run(config, data, seed=0, method="dpar-gm")
    wall = time.perf_counter() - t0
    phases = ", ".join(f"{k} {v:.1f} s" for k, v in result.timings.items() if k != "total")
    print(f"\n## Full dpar-gm run on {args.dataset} (eps = 8, rigorous, seed 0): {wall:.1f} s ({phases}); "
          f"accuracy {100 * result.metrics['accuracy']:.1f}%; peak RSS {peak_gib():.2f} GiB")


if __name__ == "__main__":
    main()
