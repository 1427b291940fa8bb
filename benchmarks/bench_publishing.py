"""Graph-publishing baselines at scale: time and peak memory of each release.

Runs ``random-perturb``, ``dice``, ``edgerand`` and ``lapgraph`` (publication only, no attacks or
utility) on a dataset, each in a fresh subprocess so that the peak resident memory is the
release's own. Reference in the same process: the number of upper-triangle entries a dense
N x N float32 adjacency (what the LinkTeller reference code allocates) would take.

    python benchmarks/bench_publishing.py --dataset deezer_europe --epsilon 1 4 8
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = """
import json, resource, sys, time
from graphpriv.experiments.runner import run_method
method, dataset, overrides = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
t0 = time.perf_counter()
r = run_method(method, dataset, seed=0, overrides={**overrides, "attacks": "none", "utility": False})
print(json.dumps({"seconds": time.perf_counter() - t0, "published": r.release.num_edges,
                  "epsilon": r.privacy.epsilon if r.privacy else None,
                  "rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="deezer_europe")
    parser.add_argument("--epsilon", type=float, nargs="+", default=[1.0, 4.0, 8.0])
    parser.add_argument("--ratio", type=float, default=0.2)
    args = parser.parse_args()
    from graphpriv.data import load

    n = load(args.dataset).num_nodes
    dense_gib = n * n * 4 / 2**30
    print(f"## publishing baselines on {args.dataset} ({n} nodes); a dense float32 N x N adjacency "
          f"would take {dense_gib:.1f} GiB\n")
    print("| method | setting | seconds | published edges | epsilon (accountant) | peak RSS GiB | vs dense N x N |")
    print("|---|---|---|---|---|---|---|")
    runs = [("random-perturb", {"ratio": args.ratio}), ("dice", {"ratio": args.ratio})]
    runs += [(m, {"epsilon": e}) for m in ("edgerand", "lapgraph") for e in args.epsilon]
    for method, overrides in runs:
        out = subprocess.run([sys.executable, "-c", CHILD, method, args.dataset, json.dumps(overrides)],
                             check=False, capture_output=True, text=True)
        if out.returncode != 0:
            print(f"| {method} | {overrides} | failed: {out.stderr.strip().splitlines()[-1]} | | | | |")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        eps = f"{r['epsilon']:.4f}" if r["epsilon"] is not None else "none"
        print(f"| {method} | {overrides} | {r['seconds']:.1f} | {r['published']:,} | {eps} | "
              f"{r['rss_gib']:.2f} | {r['rss_gib'] / dense_gib:.2f}x |")


if __name__ == "__main__":
    main()
