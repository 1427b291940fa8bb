"""GAP's speed: a ``gap-edp`` run against the non-private ``gap-inf`` on the same graph, in one run.

    python benchmarks/bench_gap.py [--datasets fb100-harvard1 pubmed] [--epsilon 4] [--threads 1]

Each (method, dataset) runs in a fresh process through ``graphpriv.run_method`` (the same path as
``graphpriv run``): the wall time of the run (split, encoder, aggregation, classifier, inference;
the dataset load is not counted) and the peak resident memory of the process, with the accuracy.
A graph without node features (PubMed in the mirror: structure and labels only) gets one-hot
log2-degree features (``floor(log2(1 + degree))``, a function of the structure; the output says
so), since GAP's encoder reads features. Goal: ``gap-edp`` on fb100-harvard1 (12,505 nodes,
729,471 edges) and on PubMed under 2 minutes each.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

_CHILD = r"""
import json, resource, sys, time
import numpy as np
import torch
torch.set_num_threads(int(sys.argv[4]))
from graphpriv import load_dataset, run_method

method, dataset, epsilon = sys.argv[1], sys.argv[2], float(sys.argv[3])
data = load_dataset(dataset)
note = ""
if getattr(data, "x", None) is None:
    degree = np.bincount(data.edge_index[0].numpy(), minlength=data.num_nodes)
    bucket = np.floor(np.log2(1 + degree)).astype(np.int64)
    data.x = torch.from_numpy(np.eye(int(bucket.max()) + 1, dtype=np.float32)[bucket])
    note = f"one-hot log2-degree features ({data.x.shape[1]})"
overrides = {"epsilon": epsilon} if method == "gap-edp" else {}
t0 = time.perf_counter()
result = run_method(method, data, seed=0, overrides=overrides)
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(json.dumps({"seconds": seconds, "peak_gib": peak, "accuracy": result.metrics["accuracy"],
                  "epsilon": None if result.privacy is None else result.privacy.epsilon,
                  "delta": None if result.privacy is None else result.privacy.delta,
                  "nodes": int(data.num_nodes), "edges": int(data.edge_index.size(1) // 2), "note": note}))
"""


def _measure(method: str, dataset: str, epsilon: float, threads: int) -> dict:
    done = subprocess.run([sys.executable, "-c", _CHILD, method, dataset, str(epsilon), str(threads)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{method} on {dataset} exited with {done.returncode}:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["fb100-harvard1", "pubmed"])
    parser.add_argument("--epsilon", type=float, default=4.0)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    print(f"## GAP-EDP (eps {args.epsilon:g}, undirected edges, rigorous) against GAP-INF, {args.threads} torch "
          "thread(s), each run a fresh process\n")
    print("| dataset | nodes | edges | gap-edp (s) | gap-inf (s) | ratio | gap-edp peak GiB | gap-inf peak GiB | "
          "accuracy edp / inf (%) | epsilon (delta) | features |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for dataset in args.datasets:
        edp = _measure("gap-edp", dataset, args.epsilon, args.threads)
        inf = _measure("gap-inf", dataset, args.epsilon, args.threads)
        print(f"| {dataset} | {edp['nodes']:,} | {edp['edges']:,} | {edp['seconds']:.1f} | {inf['seconds']:.1f} | "
              f"{edp['seconds'] / inf['seconds']:.2f} | {edp['peak_gib']:.2f} | {inf['peak_gib']:.2f} | "
              f"{100 * edp['accuracy']:.1f} / {100 * inf['accuracy']:.1f} | {edp['epsilon']:.3f} ({edp['delta']:g}) | "
              f"{edp['note'] or 'the dataset'} |")
    print("\nGoal: gap-edp under 120 s on each graph.")


if __name__ == "__main__":
    main()
