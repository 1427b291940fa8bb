"""The audit results table of docs/privacy.md: every edge-level release, correct and broken.

    python -m graphpriv.experiments.audit_table --datasets cora citeseer --canaries 5000 --out docs/reproduction/audit.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

from graphpriv.data import load
from graphpriv.privacy.audit import audit_dp_mlp, audit_edge_release
from graphpriv.testing.broken import broken_noise

#: (label, method, epsilon, ratio, noise factor)
GRID = (
    *((f"EdgeRand, eps = {e:g}", "edgerand", e, 0.0, 1.0) for e in (1.0, 4.0, 8.0)),
    *((f"LapGraph, eps = {e:g}", "lapgraph", e, 0.0, 1.0) for e in (1.0, 4.0, 8.0)),
    ("EdgeRand, eps = 1, noise 100x too small (test-only switch)", "edgerand", 1.0, 0.0, 0.01),
    ("LapGraph, eps = 1, noise 100x too small (test-only switch)", "lapgraph", 1.0, 0.0, 0.01),
    ("Input graph published as is (no DP)", "random-perturb", 1.0, 0.0, 1.0),
    ("Random perturbation, p = 0.5 (no DP)", "random-perturb", 1.0, 0.5, 1.0),
)


#: Node level (dp-mlp with canary nodes): (label, epsilon it is calibrated to at delta 2e-3, noise factor);
#: the claim audited is the same noise's epsilon at delta 1e-5.
NODE_GRID = (
    ("dp-mlp (node level), calibrated to eps = 1", 1.0, 1.0),
    ("dp-mlp (node level), calibrated to eps = 4", 4.0, 1.0),
    ("dp-mlp (node level), eps = 1, noise 100x too small (test-only switch)", 1.0, 0.01),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["cora", "citeseer"])
    parser.add_argument("--canaries", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--node-datasets", nargs="*", default=["cora_ml"])
    parser.add_argument("--node-canaries", type=int, default=500)
    parser.add_argument("--node-epochs", type=int, default=50)
    parser.add_argument("--out", type=Path, default=Path("docs/reproduction/audit.md"))
    args = parser.parse_args()
    command = (f"python -m graphpriv.experiments.audit_table --datasets {' '.join(args.datasets)} "
               f"--canaries {args.canaries} --seed {args.seed} --node-datasets {' '.join(args.node_datasets)} "
               f"--node-canaries {args.node_canaries} --node-epochs {args.node_epochs}")
    header = ("| release | dataset | claimed eps | lower bound, one run (95%) | lower bound, Clopper-Pearson (95%) | "
              "point estimate | TPR / FPR | verdict |")
    lines = [f"Command: `{command}`", "", header, "|---|---|---|---|---|---|---|---|"]
    for dataset in args.datasets:
        data = load(dataset)
        for label, method, epsilon, ratio, factor in GRID:
            with broken_noise(factor):
                r = audit_edge_release(method, data, epsilon=epsilon, canaries=args.canaries, seed=args.seed,
                                       ratio=ratio)
            verdict = "passed" if r.passed else "**FAILED**"
            lines.append(f"| {label} | {dataset} | {r.claimed_epsilon:.4g} | {r.epsilon_lower_bound:.3f} | "
                         f"{r.epsilon_lower_bound_cp:.3f} | {r.epsilon_estimate:.3f} | {r.tpr:.4f} / {r.fpr:.4f} | "
                         f"{verdict} |")
            print(lines[-1], flush=True)
    for dataset in args.node_datasets:
        data = load(dataset)
        for label, epsilon, factor in NODE_GRID:
            with broken_noise(factor):
                r = audit_dp_mlp(data, epsilon=epsilon, canaries=args.node_canaries, seed=args.seed,
                                 epochs=args.node_epochs)
            verdict = "passed" if r.passed else "**FAILED**"
            lines.append(f"| {label} | {dataset} | {r.claimed_epsilon:.4g} | {r.epsilon_lower_bound:.3f} | "
                         f"{r.epsilon_lower_bound_cp:.3f} | {r.epsilon_estimate:.3f} | {r.tpr:.4f} / {r.fpr:.4f} | "
                         f"{verdict} |")
            print(lines[-1], flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
