"""Paper tables as named grids: run every (method, dataset, seed), write ours beside the paper's.

    python -m graphpriv.experiments.tables usair-eps4 [--seeds 5] [--out docs/reproduction/usair-eps4.md]

Each run is appended to the results store, so the numbers in docs/ can be traced to stored runs.
"""

from __future__ import annotations

import argparse
import platform
import statistics
from dataclasses import dataclass
from pathlib import Path

from graphpriv.experiments.runner import run_method
from graphpriv.experiments.store import DEFAULT_STORE


@dataclass(frozen=True)
class Row:
    """One row of a table: a method, its overrides, and the paper's number (test AUC %)."""

    label: str
    method: str
    overrides: dict
    paper: float | None


@dataclass(frozen=True)
class TableSpec:
    """A named grid: rows x datasets, the metric, and where the paper's numbers come from."""

    name: str
    title: str
    datasets: tuple[str, ...]
    rows: tuple[Row, ...]
    source: str
    metric: str = "test_auc"


TABLES = {
    "usair-eps4": TableSpec(
        "usair-eps4", "USAir, test AUC (%), epsilon = 4 (DPLP paper, Table II rows SEAL and DPLP-PS (GCN))",
        ("usair",),
        (Row("SEAL (no DP)", "seal", {}, 96.62),
         Row("Common neighbours (no DP; ceiling of k = 2 models)", "cn", {}, None),
         Row("DPLP-PS (GCN), rigorous accounting", "dplp-ps", {"epsilon": 4.0}, 93.74),
         Row("DPLP-PS (GCN), paper accounting", "dplp-ps", {"epsilon": 4.0, "accounting": "paper"}, 93.74)),
        "papers/000 (Ran et al.), Table II; the paper reports the mean over 10 runs"),
}


def run_table(spec: TableSpec, *, seeds: int, store: Path) -> list[tuple[Row, str, list[float], list]]:
    """Run the grid; returns (row, dataset, metric values, results) per cell."""
    cells = []
    for row in spec.rows:
        for dataset in spec.datasets:
            results = [run_method(row.method, dataset, seed=s, overrides=row.overrides, store=store)
                       for s in range(seeds)]
            cells.append((row, dataset, [100 * r.metrics[spec.metric] for r in results], results))
            print(f"{row.label:45s} {dataset:10s} {statistics.mean(cells[-1][2]):6.2f}", flush=True)
    return cells


def to_markdown(spec: TableSpec, cells, *, seeds: int, command: str) -> str:
    """Markdown table of ours (mean ± std over seeds) beside the paper's numbers."""
    lines = [f"### {spec.title}", "", f"Command: `{command}` ({seeds} seeds: 0..{seeds - 1}; "
             f"machine: {platform.machine()}, {platform.python_version()}). Paper: {spec.source}.", "",
             "| method | dataset | ours (mean ± std) | paper | epsilon spent (delta) | accounting | noise multiplier | time / run (s) |",
             "|---|---|---|---|---|---|---|---|"]
    for row, dataset, values, results in cells:
        std = statistics.stdev(values) if len(values) > 1 else 0.0
        p = results[0].privacy
        eps = f"{max(r.privacy.epsilon for r in results):.3f} ({p.delta:g})" if p else "non-private"
        noise = f"{results[0].info.get('noise_multiplier', float('nan')):.3g}" if p else "-"
        wall = statistics.mean(r.timings["total"] for r in results)
        paper = f"{row.paper:.2f}" if row.paper is not None else "-"
        lines.append(f"| {row.label} | {dataset} | {statistics.mean(values):.2f} ± {std:.2f} | {paper} | {eps} | "
                     f"{p.accounting if p else '-'} | {noise} | {wall:.1f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description="Reproduce a paper table.")
    parser.add_argument("table", choices=sorted(TABLES))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--store", type=Path, default=DEFAULT_STORE)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    spec = TABLES[args.table]
    cells = run_table(spec, seeds=args.seeds, store=args.store)
    command = f"python -m graphpriv.experiments.tables {args.table} --seeds {args.seeds}"
    text = to_markdown(spec, cells, seeds=args.seeds, command=command)
    out = args.out or Path("docs") / "reproduction" / f"{args.table}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
