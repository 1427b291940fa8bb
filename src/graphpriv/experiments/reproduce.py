"""``graphpriv reproduce TABLE``: run a table's grid and write it beside the paper's numbers.

The tables are the grid files of ``experiments/grids/`` (:mod:`graphpriv.experiments.grid`): paper
tables (``dplp-table2``, ``dplp-rank-table1``, ``ppgsl-tradeoff``, ``privdpr-lp``, ``dpar-table1``,
...), audit tables (``audit``, ``audit-dplp``, ...), PPGSL's Table I (``ppgsl-table1``) and the
node-classification leaderboard (``node-leaderboard-edge`` and ``-node``; the group name
``node-leaderboard`` runs both, :data:`GROUPS`). A grid with ``plot: epsilon`` also draws
``docs/<table>.png`` (:func:`graphpriv.experiments.plots.plot_grid`).

- ``runs`` grids: every (row, dataset, seed) runs as a sweep run
  (:func:`graphpriv.experiments.sweep.run_runs`: stored runs are reused, each finished run is
  committed at once), then the table is rendered from the store.
- ``audit`` and ``proximity`` grids run in this process (seeded: the same numbers every time).

Each writes ``docs/reproduction/<table>.md``, the results it rests on to
``docs/results/<table>.csv`` (:mod:`graphpriv.experiments.results`), and the table's generated
block of ``docs/reproduction.md`` where that document has one. ``from_results`` renders the table
from the CSV alone (no store, nothing runs): byte for byte the committed table.

``--quick`` is the smoke version: one seed, the table's first dataset, at most 2 epochs where a
method trains for epochs (audits: the first row only); it writes
``docs/reproduction/quick/<table>.md`` only.
"""

from __future__ import annotations

import platform
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from graphpriv.errors import ConfigError
from graphpriv.experiments.grid import AuditGrid, ProximityGrid, RunsGrid, load_grid
from graphpriv.experiments.plots import plot_grid
from graphpriv.experiments.registry import method_spec
from graphpriv.experiments.results import read_results, results_file, write_results
from graphpriv.experiments.store import DEFAULT_STORE, ResultStore
from graphpriv.experiments.sweep import SweepRun, make_run, run_runs
from graphpriv.experiments.tables import (
    PAIR_TYPES,
    AuditRecord,
    ProximityRecord,
    audit_markdown,
    cells_from_records,
    proximity_markdown,
    runs_markdown,
    store_records,
)
from graphpriv.experiments.winners import winners_markdown

__all__ = ["ALIASES", "GROUPS", "QUICK", "quick_grid", "render_results", "replace_marked_block", "reproduce", "resolve",
           "table_runs", "update_block"]

#: The papers' table names (method and table number) as aliases of graphpriv's grids.
ALIASES = {"dplp-subgraph-table2": "dplp-table2", "dplp-subgraph-table3": "dplp-table3",
           "dplp-subgraph-table4": "dplp-table4", "privdpr-table2": "privdpr-s", "privdpr-table3": "privdpr-d",
           "privdpr-table4": "privdpr-lp", "privdpr-table5": "privdpr-lp", "privdpr-table6": "privdpr-nc",
           "ppgsl-table2": "ppgsl-tradeoff"}

#: Names that reproduce several tables in turn (``graphpriv reproduce NAME``).
GROUPS: dict[str, tuple[str, ...]] = {
    "node-leaderboard": ("node-leaderboard-edge", "node-leaderboard-node"),
    "synthesis-leaderboard": ("synthesis-leaderboard-utility", "synthesis-leaderboard-degrees",
                              "synthesis-leaderboard-paths", "synthesis-leaderboard-communities"),
}

#: Settings of the quick version, applied where a method has them.
QUICK = {"epochs": 2}

Grid = RunsGrid | AuditGrid | ProximityGrid


def resolve(table: str | Grid) -> Grid:
    """The grid of a table name (or alias); a grid is returned as it is.

    Raises:
        ConfigError: an unknown name (the message lists the tables and aliases), or a grid file
            that fails its schema.
    """
    if not isinstance(table, str):
        return table
    try:
        return load_grid(ALIASES.get(table, table))
    except ConfigError as exc:
        if "unknown table" in str(exc):
            raise ConfigError(f"{exc} (aliases: {', '.join(sorted(ALIASES))})") from None
        raise


def quick_grid(grid: Grid) -> Grid:
    """The smoke version of ``grid``: its first dataset; ``runs`` rows with :data:`QUICK` applied
    where the method has the key; an audit's first row; one seed."""
    update: dict = {"datasets": grid.datasets[:1]}
    if isinstance(grid, RunsGrid):
        rows = []
        for row in grid.rows:
            fields = method_spec(row.method).config_cls.model_fields
            extra = {k: v for k, v in QUICK.items() if k in fields}
            rows.append(row.model_copy(update={"settings": {**row.settings, **extra}}))
        update.update(rows=rows, seeds=1)
    elif isinstance(grid, AuditGrid):
        update["rows"] = [r.model_copy(update={"datasets": None}) for r in grid.rows[:1]]
    else:
        update["seeds"] = 1
    return grid.model_copy(update=update)


def table_runs(grid: RunsGrid, seeds: int) -> list[SweepRun]:
    """Every (row, dataset, seed) of the table as a validated sweep run, in (dataset, seed, row) order:
    the cells of one split run one after another, so that a worker reuses the split's evaluation
    subgraphs (:func:`graphpriv.linkpred.evaluation_sets.evaluation_subgraphs`)."""
    last = grid.first_seed + max((row.seeds_on(dataset, seeds) for dataset in grid.datasets for row in grid.rows),
                                 default=0)
    return [make_run(row.method, dataset, seed, row.settings_for(dataset))
            for dataset in grid.datasets for seed in range(grid.first_seed, last) for row in grid.rows
            if seed < grid.first_seed + row.seeds_on(dataset, seeds)]


def update_block(doc: Path, name: str, text: str, *, create: bool = True) -> bool:
    """Replace the generated block of ``name`` in ``doc`` (append it at the end when absent and
    ``create``); returns whether ``doc`` was written."""
    begin, end = f"<!-- graphpriv reproduce {name}: generated, do not edit -->", f"<!-- end {name} -->"
    if not create and (not doc.exists() or begin not in doc.read_text()):
        return False
    replace_marked_block(doc, begin, end, text, title="# Reproduction")
    return True


def replace_marked_block(doc: Path, begin: str, end: str, text: str, *, title: str) -> None:
    """Write ``text`` between the marker lines ``begin`` and ``end`` of ``doc``, keeping the rest of
    the document; the block is appended when the markers are absent, and a missing ``doc`` starts
    with ``title``."""
    block = f"{begin}\n{text.rstrip()}\n{end}"
    current = doc.read_text() if doc.exists() else f"{title}\n"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(current):
        updated = pattern.sub(lambda _: block, current)
    else:
        updated = current.rstrip() + "\n\n" + block + "\n"
    doc.write_text(updated)


def _machine() -> str:
    return f"{platform.machine()}, Python {platform.python_version()}"


def _render(grid: Grid, records: list, meta: dict[str, str]) -> str:
    if isinstance(grid, RunsGrid):
        seeds = int(meta["seeds"])
        cells = cells_from_records(grid, records)
        text = runs_markdown(grid, cells, seeds=seeds, command=meta["command"], machine=meta["machine"])
        section = winners_markdown(grid, cells)
        return text + ("\n" + section if section else "")
    if isinstance(grid, AuditGrid):
        return audit_markdown(grid, records, command=meta["command"])
    return proximity_markdown(grid, records, command=meta["command"])


def _run_audits(grid: AuditGrid, on_done: Callable | None) -> list[AuditRecord]:
    from graphpriv.data import load
    from graphpriv.experiments.auditing import run_audit

    cases = [(row, dataset) for row in grid.rows for dataset in (row.datasets or grid.datasets)]
    records = []
    for done, (row, dataset) in enumerate(cases, start=1):
        reports = run_audit(row.method, load(dataset), epsilon=row.epsilon, canaries=row.canaries, seed=grid.seed,
                            epochs=row.epochs, ratio=row.ratio, private=row.private, attack=row.attack,
                            noise_scale=row.noise_scale,
                            settings=row.settings_for(dataset))
        records += [AuditRecord(row.label, dataset, r) for r in reports]
        if on_done is not None:
            on_done(row, "ok", done, len(cases))
    return records


def _run_proximity(grid: ProximityGrid, on_done: Callable | None) -> list[ProximityRecord]:
    from graphpriv.data import load
    from graphpriv.data.graph import to_csr
    from graphpriv.data.splits import sensitive_link_split
    from graphpriv.metrics.proximity import pair_proximity

    records = []
    for done, dataset in enumerate(grid.datasets, start=1):
        data = load(dataset)
        for seed in range(grid.seeds):
            split = sensitive_link_split(data, sensitive_ratio=grid.sensitive_ratio, test_ratio=grid.test_ratio,
                                         seed=seed)
            for visible in grid.visible:
                edges = split.published_edge_index
                if visible == "with-test":  # G minus E_s only: the held-out test edges back (each edge once)
                    test = np.asarray(split.test_pos)
                    edges = np.concatenate([edges, test], axis=1)
                adj = to_csr(edges, data.num_nodes)
                for pair_type, pairs in zip(PAIR_TYPES, (edges, split.sensitive_pos, split.sensitive_neg)):
                    prox = pair_proximity(adj, pairs)
                    records.append(ProximityRecord(dataset, visible, pair_type, seed, float(prox.mean_distance),
                                                   float(prox.disconnected_ratio)))
        if on_done is not None:
            on_done(None, "ok", done, len(grid.datasets))
    return records


def render_results(table: str | Grid, docs: Path = Path("docs")) -> str:
    """The Markdown of a table rendered from its results file ``<docs>/results/<table>.csv`` alone
    (what ``graphpriv reproduce TABLE --from-results`` writes).

    Raises:
        ConfigError: an unknown table, or a missing or mismatched results file.
    """
    grid = resolve(table)
    records, meta = read_results(results_file(docs, grid.name), grid)
    return _render(grid, records, meta)


def reproduce(table: str | Grid, *, seeds: int | None = None, quick: bool = False,
              store: str | Path = DEFAULT_STORE, workers: int = 2, scheduler: str | None = None,
              docs: Path = Path("docs"), on_done: Callable | None = None, run: bool = True,
              from_results: bool = False, retry_failed: bool = False,
              verbose: bool = False, datasets: list[str] | None = None) -> tuple[Path, dict[str, int]]:
    """Run (or reuse, or read) every cell of a table and write its Markdown and results files.

    Args:
        table: a grid name of ``experiments/grids/`` or an alias (:data:`ALIASES`), or a grid.
        seeds: seeds per cell of a ``runs`` or ``proximity`` grid (None: the grid's ``seeds``, the
            count of the committed table). quick: the smoke version (:func:`quick_grid`).
        store: the results store of ``runs`` grids. workers, scheduler: the Dask cluster
            (:func:`graphpriv.experiments.sweep.run_runs`). docs: the docs folder (``reproduction/``,
            ``results/`` and ``reproduction.md`` under it). on_done: ``(item, status, done, total)``
            after each run or audit.
        run: with False nothing runs: a ``runs`` table shows the seeds stored so far (cells without
            any are left out); the store must exist. from_results: nothing runs and no store is
            read: the table is rendered from ``docs/results/<table>.csv``. retry_failed: run again
            the cells whose stored run raised (skipped by default, counted in ``failed_before``).
        verbose: Dask's INFO logs too (:func:`~graphpriv.experiments.sweep.run_runs`).
        datasets: run only these of a ``runs`` table's datasets (None: all). The table still shows
            every dataset's stored seeds, so a large table can be filled one graph at a time.

    Returns:
        ``(path of the written table, counts)``: for ``runs`` grids the counts of ``run_runs``
        (total, skipped, failed_before, ok, error); otherwise ``total`` and ``ok``.

    Raises:
        ConfigError: an unknown table (the message lists them), a grid file that fails its schema,
            seeds outside [1, 1000], a missing or mismatched results file (``from_results``),
            ``from_results`` with ``quick``, without ``run`` or with ``datasets``; ``datasets`` for a
            table other than ``runs``, or naming a dataset the table does not have (the message
            lists its datasets).
        StoreError: a bad store, or (``run`` False) no store at ``store``.
    """
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= 1000):
        raise ConfigError(f"--seeds must be an integer in [1, 1000] (got {seeds!r}): the number of seeds per cell")
    grid = resolve(table)
    if from_results and (quick or not run):
        raise ConfigError("--from-results renders the committed results file; it takes neither --quick nor "
                          "--from-store")
    if datasets is not None:
        if from_results:
            raise ConfigError("--from-results renders the committed results file; it takes no --datasets")
        if not isinstance(grid, RunsGrid):
            raise ConfigError(f"--datasets fills a runs table from its store one graph at a time; {grid.name} is "
                              f"a table of kind {grid.kind!r}, which keeps no store and runs whole (drop --datasets)")
        unknown = [d for d in datasets if d not in grid.datasets]
        if unknown or not datasets:
            raise ConfigError(f"--datasets: {', '.join(unknown) or 'none given'} not among {grid.name}'s datasets "
                              f"({', '.join(grid.datasets)}); name one or more of those, comma-separated")
    results_path = results_file(docs, grid.name)
    counts: dict[str, int]
    if from_results:
        records, meta = read_results(results_path, grid)
        counts = {"total": len(records), "ok": 0}
    else:
        ran = grid if datasets is None else grid.model_copy(update={"datasets": [d for d in grid.datasets
                                                                                if d in datasets]})
        if quick:  # the smoke version of what runs: its first dataset
            grid = ran = quick_grid(ran)
        seeds = 1 if quick else (seeds or getattr(grid, "seeds", 1))
        if isinstance(grid, RunsGrid):
            runs = table_runs(ran, seeds)
            counts = (run_runs(runs, store, workers=workers, scheduler=scheduler, retry_failed=retry_failed,
                               allow_large_delta=grid.allow_large_delta, on_done=on_done, verbose=verbose) if run
                      else {"total": len(runs), "skipped": 0, "failed_before": 0, "ok": 0, "error": 0})
            records = store_records(grid, ResultStore.open_existing(store), seeds)
            command = f"graphpriv reproduce {grid.name} --seeds {seeds}"
        elif isinstance(grid, AuditGrid):
            records = _run_audits(grid, on_done)
            counts = {"total": len(records), "ok": len(records)}
            command = f"graphpriv reproduce {grid.name}"
        else:
            grid = grid.model_copy(update={"seeds": seeds})
            records = _run_proximity(grid, on_done)
            counts = {"total": len(records), "ok": len(records)}
            command = f"graphpriv reproduce {grid.name} --seeds {seeds}"
        command += (" --quick" if quick else "") + ("" if run else " --from-store")
        command += f" --datasets {','.join(ran.datasets)}" if datasets is not None and run else ""
        meta = {"command": command, "machine": _machine(), "seeds": str(seeds)}
    text = _render(grid, records, meta)
    if isinstance(grid, RunsGrid) and grid.plot and records and not quick:
        plot_grid(grid, records, docs / f"{grid.name}.png")
    out = docs / "reproduction" / ("quick" if quick else "") / f"{grid.name}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    if not quick:
        if not from_results:
            write_results(results_path, grid, records, meta=meta)
        update_block(docs / "reproduction.md", grid.name, text, create=False)
    return out, counts

