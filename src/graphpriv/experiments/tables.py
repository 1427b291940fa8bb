"""A grid's results as a Markdown table: ours (mean ± std over seeds) beside the paper's numbers.

One renderer per grid kind (:mod:`graphpriv.experiments.grid`), each from plain records, so that a
table renders the same whether its records come from the results store or from the results file
in the repository (:mod:`graphpriv.experiments.results`):

- :class:`RunRecord` per run of a ``runs`` grid (:func:`runs_markdown`),
- :class:`~graphpriv.audit.statistics.AuditReport` per audit row (:func:`audit_markdown`),
- :class:`ProximityRecord` per (dataset, test ratio, pair type, seed) (:func:`proximity_markdown`).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from graphpriv.audit.statistics import AuditReport
from graphpriv.experiments.grid import AuditGrid, GridRow, ProximityGrid, RunsGrid
from graphpriv.experiments.store import ResultStore, config_hash
from graphpriv.methods.base import Result

__all__ = ["BASELINE_PREFIX", "PAIR_TYPES", "AuditRecord", "Cell", "ProximityRecord", "RunRecord", "audit_markdown",
           "cells_from_records", "proximity_markdown", "run_config", "runs_markdown", "settings_json", "store_records",
           "table_metrics"]

#: The pair types of the proximity table, in its order.
PAIR_TYPES = ("visible", "hidden", "no-link")


#: A table column ``baseline:METRIC`` shows the trivial baseline a run measured for METRIC on its
#: own split (:attr:`graphpriv.methods.base.Result.baselines`; the first when there are several),
#: ``baseline:METRIC@NAME`` the one named NAME (e.g. ``baseline:lp_auc@input graph``, a synthetic
#: graph's ceiling, where the first is chance).
BASELINE_PREFIX = "baseline:"


def metric_value(result: Result, name: str) -> float | None:
    """The value of a table column in ``result``: a metric, ``baseline:METRIC`` (the run's first
    trivial baseline for METRIC, :data:`BASELINE_PREFIX`) or ``baseline:METRIC@NAME`` (its baseline of
    that name); ``None`` when the run has none."""
    if name.startswith(BASELINE_PREFIX):
        metric, _, label = name.removeprefix(BASELINE_PREFIX).partition("@")
        return next((float(b.value) for b in result.baselines if b.metric == metric and label in ("", b.name)), None)
    return float(result.metrics[name]) if name in result.metrics else None


@dataclass(frozen=True)
class RunRecord:
    """What a ``runs`` table shows of one run.

    Attributes:
        row: the grid row's label. dataset, method, seed, config_hash: the run's key in the store.
        settings: the overrides the row applied on this dataset (preset, per-dataset, settings),
            as JSON with sorted keys: what the grid file asked for, whatever the method's defaults.
        metrics: the table's metrics of the run (fractions; shown x 100), those it has, with its
            trivial baselines as ``baseline:METRIC`` where the table asks for them.
        epsilon, delta: the spent epsilon and its delta (None: non-private). accounting,
        accountant: the report's mode and accountant. noise_multiplier: z (None: none).
        seconds: the run's wall time.
    """

    row: str
    dataset: str
    method: str
    seed: int
    config_hash: str
    settings: str
    metrics: dict[str, float]
    epsilon: float | None
    delta: float | None
    accounting: str | None
    accountant: str | None
    noise_multiplier: float | None
    seconds: float

    @classmethod
    def from_result(cls, row: str, result: Result, metrics: Iterable[str], settings: dict | None = None) -> RunRecord:
        """The record of a stored :class:`~graphpriv.methods.base.Result` (``metrics``: the table's;
        ``settings``: the row's overrides, :meth:`GridRow.settings_for`)."""
        p = result.privacy
        values = {m: metric_value(result, m) for m in metrics}
        return cls(row=row, dataset=result.dataset, method=result.method, seed=result.seed,
                   config_hash=config_hash(result.config), settings=settings_json(settings or {}),
                   metrics={m: v for m, v in values.items() if v is not None},
                   epsilon=None if p is None else float(p.epsilon), delta=None if p is None else float(p.delta),
                   accounting=None if p is None else str(p.accounting), accountant=None if p is None else p.accountant,
                   noise_multiplier=float(result.info["noise_multiplier"]) if result.info.get("noise_multiplier")
                   else None, seconds=float(result.timings["total"]))


@dataclass(frozen=True)
class Cell:
    """A (row, dataset) cell of a ``runs`` table and its records, in seed order."""

    row: GridRow
    dataset: str
    records: list[RunRecord]


@dataclass(frozen=True)
class AuditRecord:
    """One audit report of an ``audit`` table: its row label, dataset and the report."""

    row: str
    dataset: str
    report: AuditReport


@dataclass(frozen=True)
class ProximityRecord:
    """One seed of the proximity table: mean hop distance of the connected pairs of a type and the
    share of its pairs that are disconnected, in the visible graph ``visible`` (``without-test``
    or ``with-test``, :class:`~graphpriv.experiments.grid.ProximityGrid`)."""

    dataset: str
    visible: str
    pair_type: str
    seed: int
    mean_distance: float
    disconnected_ratio: float


def settings_json(settings: dict) -> str:
    """A row's overrides as canonical JSON (sorted keys, floats as floats: ``4`` and ``4.0`` differ)."""
    return json.dumps(settings, sort_keys=True)


def table_metrics(grid: RunsGrid) -> list[str]:
    """Every metric a ``runs`` table shows: its metric, columns and raw columns."""
    return list(dict.fromkeys([grid.metric, *grid.columns, *grid.raw_columns]))


def run_config(row: GridRow, dataset: str) -> dict:
    """The validated config (JSON values) of ``row``'s runs on ``dataset``: the store's key, as
    the sweep builds it (:func:`graphpriv.experiments.sweep.make_run`: the default delta lowered
    by the delta rule on a graph with 1 / delta privacy units or more, as the run lowers it)."""
    from graphpriv.experiments.sweep import make_run

    return make_run(row.method, dataset, 0, row.settings_for(dataset)).config_dict


def store_records(grid: RunsGrid, store: ResultStore, seeds: int) -> list[RunRecord]:
    """The records of every stored run of the grid's cells (seeds ``first_seed ..``; missing runs
    are left out), dataset by dataset, row by row, seed by seed."""
    metrics = table_metrics(grid)
    out = []
    for dataset in grid.datasets:
        for row in grid.rows:
            config = run_config(row, dataset)
            for seed in range(grid.first_seed, grid.first_seed + row.seeds_on(dataset, seeds)):
                found = store.find(row.method, dataset, seed, config)
                if found is not None:
                    out.append(RunRecord.from_result(row.label, found, metrics, row.settings_for(dataset)))
    return out


def cells_from_records(grid: RunsGrid, records: Iterable[RunRecord]) -> list[Cell]:
    """The table's cells in its order (every dataset of the first row, then the next row), each
    cell's records in seed order; cells without a record of the table's metric are left out (a
    query error can be undefined for a run: the protocol lists it in ``undefined_queries``)."""
    by_cell: dict[tuple[str, str], list[RunRecord]] = {}
    for record in records:
        by_cell.setdefault((record.row, record.dataset), []).append(record)
    return [Cell(row, d, sorted(by_cell[(row.label, d)], key=lambda r: r.seed))
            for row in grid.rows for d in grid.datasets
            if any(grid.metric in r.metrics for r in by_cell.get((row.label, d), []))]


def _mean_std(values: list[float]) -> str:
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values) if len(values) > 1 else 0.0:.2f}"


def runs_markdown(grid: RunsGrid, cells: list[Cell], *, seeds: int, command: str, machine: str) -> str:
    """The Markdown table of a ``runs`` grid.

    Args:
        grid: the table. cells: its cells (:func:`cells_from_records`). seeds: the seeds asked
            for per cell (each cell's count is its n column). command: the command that made it.
        machine: the machine's architecture and Python version (``x86_64, Python 3.11.7``).

    Returns:
        The heading, the command line and the table (metric values x 100).
    """
    title = f"### {grid.title}" + (f" (ours = {grid.metric})" if grid.metric != "test_auc" else "")
    first = grid.first_seed
    lines = [title, "", (f"Command: `{command}` (up to {seeds} seeds: {first}..{first + seeds - 1}, the "
                         f"count per cell is in the n column; {machine}). Paper: {grid.source}."), "",
             "| method | dataset | ours (mean ± std) | n | paper |"
             + "".join(f" {c} |" for c in (*grid.columns, *grid.raw_columns))
             + " epsilon spent (delta) | accounting | noise multiplier | time / run (s) |",
             "|---|---|---|---|---|" + "---|" * (len(grid.columns) + len(grid.raw_columns)) + "---|---|---|---|"]
    for cell in cells:
        records, row, dataset = cell.records, cell.row, cell.dataset
        records = [r for r in records if grid.metric in r.metrics]  # a run without the metric (e.g. undefined) is left out
        values = [100 * r.metrics[grid.metric] for r in records]
        first_record = records[0]
        eps = (f"{max(r.epsilon for r in records):.3f} ({first_record.delta:g})" if first_record.epsilon is not None
               else "non-private")
        noise = f"{first_record.noise_multiplier:.3g}" if first_record.noise_multiplier else "-"
        wall = statistics.mean(r.seconds for r in records)
        paper = f"{row.paper[dataset]:.2f}" if dataset in row.paper else "-"
        accounting = (f"{first_record.accounting} ({first_record.accountant})" if first_record.epsilon is not None
                      else "-")
        extra = "".join(f" {_mean_std([100 * r.metrics[c] for r in records])} |"
                        if all(c in r.metrics for r in records) else " - |" for c in grid.columns)
        extra += "".join(f" {statistics.mean(r.metrics[c] for r in records):.2e} |"
                         if all(c in r.metrics for r in records) else " - |" for c in grid.raw_columns)
        lines.append(f"| {row.label} | {dataset} | {_mean_std(values)} | {len(values)} | {paper} |{extra} {eps} | "
                     f"{accounting} | {noise} | {wall:.1f} |")
    return "\n".join(lines) + "\n"


def _intro(grid) -> list[str]:
    return [grid.intro.rstrip(), ""] if grid.intro else []


def _audit_order(grid: AuditGrid):
    """Sort key of an audit table's lines: dataset by dataset (the grid's, then the rows' own, in
    order of appearance), the grid's rows within each."""
    datasets = list(dict.fromkeys([*grid.datasets, *(d for row in grid.rows for d in row.datasets or [])]))
    rows = {row.label: i for i, row in enumerate(grid.rows)}
    return lambda record: (datasets.index(record.dataset), rows[record.row])


def audit_markdown(grid: AuditGrid, records: list[AuditRecord], *, command: str) -> str:
    """The Markdown table of an ``audit`` grid: one line per report, dataset by dataset, the
    verdict passed when the one-run lower bound does not exceed the claim (``(no claim)`` for a
    release without DP)."""
    lines = [f"### {grid.title}", "", *_intro(grid), f"Command: `{command}` (seed {grid.seed}). Method: {grid.source}.",
             "", ("| release | dataset | attack | canaries | claimed eps | lower bound, one run | lower bound, "
             "Clopper-Pearson | point estimate | TPR / FPR | verdict |"), "|---|---|---|---|---|---|---|---|---|---|"]
    for record in sorted(records, key=_audit_order(grid)):
        r = record.report
        verdict = ("passed" if r.claimed_epsilon != float("inf") else "(no claim)") if r.passed else "**FAILED**"
        level = f"{r.confidence:.1%}".replace(".0%", "%")
        lines.append(f"| {record.row} | {record.dataset} | {r.attack} | {r.canaries} | {r.claimed_epsilon:.4g} | "
                     f"{r.epsilon_lower_bound:.3f} ({level}) | {r.epsilon_lower_bound_cp:.3f} | "
                     f"{r.epsilon_estimate:.3f} | {r.tpr:.4f} / {r.fpr:.4f} | {verdict} |")
    return "\n".join(lines) + "\n"


def proximity_markdown(grid: ProximityGrid, records: list[ProximityRecord], *, command: str) -> str:
    """The PPGSL Table I reproduction: one table per visible graph, mean ± std (population std) over
    seeds of each pair type's mean hop distance and disconnected share, beside the paper's."""
    lines = [f"### {grid.title}", "", *_intro(grid)]
    seeds = sorted({r.seed for r in records})
    for visible in grid.visible:
        held = (f"{100 * grid.test_ratio:g}% held out as LP test edges; distances in the visible graph (G minus the "
                "hidden and held-out edges)" if visible == "without-test" else
                "the LP test edges kept; distances in G minus the hidden edges")
        lines += [(f"Seeds {seeds[0]}-{seeds[-1]} ({len(seeds)}); {100 * grid.sensitive_ratio:g}% of edges hidden as "
                   f"E_s, {held}; mean ± std over seeds. Command: `{command}`. Paper: {grid.source}."), "",
                  ("| dataset | pair type | avg shortest path (graphpriv) | paper | disconnected ratio (graphpriv) | "
                   "paper |"), "|---|---|---|---|---|---|"]
        for dataset in grid.datasets:
            for pair_type in PAIR_TYPES:
                mine = np.array([(r.mean_distance, r.disconnected_ratio) for r in records
                                 if (r.dataset, r.visible, r.pair_type) == (dataset, visible, pair_type)])
                if not len(mine):
                    continue
                mean, std = mine.mean(axis=0), mine.std(axis=0)
                paper = grid.paper.get(dataset, {}).get(pair_type, (float("nan"),) * 2)
                lines.append(f"| {dataset} | {pair_type} | {mean[0]:.3f} ± {std[0]:.3f} | {paper[0]:.3f} | "
                             f"{mean[1]:.3f} ± {std[1]:.3f} | {paper[1]:.3f} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
