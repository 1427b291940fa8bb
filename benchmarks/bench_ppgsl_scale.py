"""PPGSL at scale: Erdős–Rényi graphs of average degree 10, sparse k = 1, mu = 50.

For each size, in a fresh subprocess (so peak memory is the run's own): a G(N, 10/N) graph,
10% of its edges hidden as sensitive links, then ``--steps`` learner steps (500 = the paper's)
with surrogate re-training every ``mu`` steps; prints wall time, time per learner step and per
surrogate epoch, and peak resident memory. Featureless (learned input embedding), as the paper's
synthetic graphs. FGP is tried too and must refuse sizes whose N x N state does not fit.

    python benchmarks/bench_ppgsl_scale.py --sizes 10000 50000 100000 --steps 500
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = """
import json, resource, sys, time
import numpy as np
from graphpriv.data.splits import sample_non_edges
from graphpriv.publishing.ppgsl import PPGSLSettings, ppgsl
n, steps, mu, epochs = (int(a) for a in sys.argv[1:5])
rng = np.random.default_rng(0)
m = 5 * n  # average degree 10
pairs = sample_non_edges(n, m, forbidden=np.empty((2, 0), np.int64), rng=rng)
perm = rng.permutation(m)
sensitive, graph = pairs[:, perm[: m // 10]], pairs[:, np.sort(perm[m // 10:])]
t0 = time.perf_counter()
out = ppgsl(graph, n, sensitive, None, seed=0,
            settings=PPGSLSettings(k=1, mu=mu, learner_steps=steps, surrogate_epochs=epochs))
wall = time.perf_counter() - t0
retrains = -(-steps // mu) if steps else 0
print(json.dumps({"wall": wall, "params": out.num_parameters, "published": int(out.published.shape[1]),
                  "retrains": retrains,
                  "rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000, 100_000])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--mu", type=int, default=50)
    parser.add_argument("--surrogate-epochs", type=int, default=100)
    args = parser.parse_args()
    from graphpriv.errors import ConfigError
    from graphpriv.publishing.ppgsl import PPGSLSettings, fgp_bytes, ppgsl

    print(f"## PPGSL sparse (k = 1, mu = {args.mu}, {args.steps} learner steps, {args.surrogate_epochs} "
          "surrogate epochs per update) on G(N, 10/N)\n")
    print("| N | parameters | published edges | wall time (s) | peak RSS (GiB) | FGP |")
    print("|---|---|---|---|---|---|")
    import numpy as np

    for n in args.sizes:
        out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(args.steps), str(args.mu),
                              str(args.surrogate_epochs)], check=False, capture_output=True, text=True)
        try:
            ppgsl(np.array([[0], [1]]), n, np.array([[0], [2]]), None, seed=0,
                  settings=PPGSLSettings(parameterization="fgp", learner_steps=0))
            fgp = f"runs ({fgp_bytes(n) / 2**30:.1f} GiB)"
        except ConfigError as exc:
            fgp = f"refused: needs {fgp_bytes(n) / 2**30:.0f} GiB" if "needs" in str(exc) else str(exc)
        if out.returncode != 0:
            print(f"| {n:,} | failed: {out.stderr.strip().splitlines()[-1]} | | | | {fgp} |")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {n:,} | {r['params']:,} | {r['published']:,} | {r['wall']:.1f} | {r['rss_gib']:.2f} | {fgp} |",
              flush=True)


if __name__ == "__main__":
    main()
