"""Sweep overhead: a 40-run sweep of small runs on a 2-worker Dask LocalCluster against
the same runs one after another in this process.

    python benchmarks/bench_sweep.py [--runs 40] [--workers 2] [--epochs 3]

The runs: ``mlp`` on a 300-node labelled SBM saved to a temporary file, seeds x ``--epochs``
1..10 (each run well under a second). Printed: the in-process time, and for a 1-worker and a
``--workers`` LocalCluster the sweep's wall time (start-up, runs, store commits) and the overhead
per run = (cluster wall time x workers - in-process time) / runs: the worker-seconds the cluster
adds to each run (with 1 worker this does not depend on how many cores are free). Goal: under 1 s.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    import torch

    from graphpriv.experiments.sweep import SweepSpec, execute_run, expand, run_sweep
    from graphpriv.testing.graphs import labelled_sbm

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        graph = Path(tmp) / "sbm.pt"
        torch.save(labelled_sbm(300, 3, seed=0), graph)
        variants = [{"epochs": e} for e in range(1, 11)]
        seeds = -(-args.runs // len(variants))

        def spec(store: str) -> SweepSpec:
            return SweepSpec(methods=["mlp"], datasets=[str(graph)], seeds=seeds, overrides=variants,
                             store=str(Path(tmp) / store))
        runs = expand(spec("x.sqlite"))[: args.runs]
        t0 = time.perf_counter()
        for run in runs:
            status, _ = execute_run(run)
            assert status == "ok"
        t_seq = time.perf_counter() - t0
        rows = []
        for workers in sorted({1, args.workers}):
            t0 = time.perf_counter()
            counts = run_sweep(spec(f"cluster{workers}.sqlite"), workers=workers)
            wall = time.perf_counter() - t0
            assert counts["error"] == 0 and counts["ok"] == len(runs)
            rows.append((workers, wall, (wall * workers - t_seq) / len(runs)))
    print(f"## Sweep overhead: {len(runs)} mlp runs (1-10 epochs on a 300-node SBM)\n")
    print("| | wall time (s) | overhead per run (worker-s) |\n|---|---|---|")
    print(f"| in this process, one after another | {t_seq:.1f} | - |")
    for workers, wall, per_run in rows:
        print(f"| {workers}-worker LocalCluster (start-up and shut-down included) | {wall:.1f} | {per_run:.2f} |")
    worst = max(r[2] for r in rows)
    print(f"\npeak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB; "
          f"goal, overhead per run under 1 s: {'met' if worst < 1 else 'NOT met'} (worst {worst:.2f} s)")

if __name__ == "__main__":
    main()
