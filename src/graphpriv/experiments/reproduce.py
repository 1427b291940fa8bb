"""``graphpriv reproduce TABLE``: a paper table's grid on Dask, written beside the paper's numbers.

The named grids are :data:`graphpriv.experiments.tables.TABLES` (for example ``dplp-table2``,
``dplp-rank-table1``, ``ppgsl-tradeoff``, ``privdpr-lp``, ``dpar-table1``). Every cell runs as a
sweep run (:func:`graphpriv.experiments.sweep.run_runs`: stored runs are reused, each finished run
is committed at once), then the table is rendered from the store into
``docs/reproduction/<table>.md`` and into a generated block of ``docs/reproduction.md``.

``--quick`` is the smoke version: one seed, the table's first dataset, at most 2 epochs where a
method trains for epochs; it writes ``docs/reproduction/quick/<table>.md`` only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from graphpriv.errors import ConfigError
from graphpriv.experiments.registry import method_spec
from graphpriv.experiments.sweep import SweepRun, make_run, run_runs
from graphpriv.experiments.tables import TABLES, TableSpec, run_table, to_markdown

__all__ = ["ALIASES", "QUICK", "quick_spec", "reproduce", "table_runs", "update_block"]

#: The papers' table names (method and table number) as aliases of graphpriv's grids.
ALIASES = {"dplp-subgraph-table2": "dplp-table2", "dplp-subgraph-table3": "dplp-table3",
           "dplp-subgraph-table4": "dplp-table4", "privdpr-table2": "privdpr-s", "privdpr-table3": "privdpr-d",
           "privdpr-table4": "privdpr-lp", "privdpr-table5": "privdpr-lp", "privdpr-table6": "privdpr-nc"}

#: Settings of the quick version, applied where a method has them.
QUICK = {"epochs": 2}


def quick_spec(spec: TableSpec) -> TableSpec:
    """The table's first dataset, every row with :data:`QUICK` applied where the method has the key."""
    rows = []
    for row in spec.rows:
        fields = method_spec(row.method).config_cls.model_fields
        extra = {k: v for k, v in QUICK.items() if k in fields}
        rows.append(replace(row, overrides={**row.overrides, **extra}))
    return replace(spec, datasets=spec.datasets[:1], rows=tuple(rows))


def table_runs(spec: TableSpec, seeds: int) -> list[SweepRun]:
    """Every (row, dataset, seed) of the table as a validated sweep run."""
    return [make_run(row.method, dataset, seed, row.settings(dataset))
            for dataset in spec.datasets for row in spec.rows
            for seed in range(min(seeds, row.max_seeds.get(dataset, seeds)))]


def update_block(doc: Path, name: str, text: str) -> None:
    """Replace the generated block of ``name`` in ``doc`` (append it at the end when absent)."""
    replace_marked_block(doc, f"<!-- graphpriv reproduce {name}: generated, do not edit -->", f"<!-- end {name} -->",
                         text, title="# Reproduction")


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


def reproduce(name: str, *, seeds: int = 5, quick: bool = False, store: str | Path = "runs/results.sqlite",
              workers: int = 2, scheduler: str | None = None, docs: Path = Path("docs"),
              on_done: Callable | None = None, run: bool = True,
              retry_failed: bool = False) -> tuple[Path, dict[str, int]]:
    """Run (or reuse) every cell of table ``name`` and write the Markdown table.

    Args:
        name: a table of :data:`graphpriv.experiments.tables.TABLES` or an alias. seeds: seeds per
            cell. quick: the smoke version (:func:`quick_spec`, one seed). store: the results store.
        workers, scheduler: the Dask cluster (:func:`graphpriv.experiments.sweep.run_runs`).
        docs: the docs folder. on_done: progress callback of ``run_runs``.
        run: with False nothing runs: the table shows the seeds stored so far (cells without any
            left out); the store must exist. retry_failed: run again the cells whose stored run
            raised (skipped by default, counted in ``failed_before``).

    Returns:
        ``(path of the written table, run counts)`` (the counts of ``run_runs``).

    Raises:
        ConfigError: an unknown table name (the message lists them), seeds outside [1, 1000].
        StoreError: a bad store, or (``run`` False) no store at ``store``.
    """
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= 1000:
        raise ConfigError(f"--seeds must be an integer in [1, 1000] (got {seeds!r}): the number of seeds per cell")
    name = ALIASES.get(name, name)
    if name not in TABLES:
        raise ConfigError(f"unknown table {name!r}; known tables: {', '.join(sorted(TABLES))} "
                          f"(aliases: {', '.join(sorted(ALIASES))})")
    spec = TABLES[name]
    if quick:
        spec, seeds = quick_spec(spec), 1
    runs = table_runs(spec, seeds)
    counts = (run_runs(runs, store, workers=workers, scheduler=scheduler, retry_failed=retry_failed,
                       on_done=on_done) if run
              else {"total": len(runs), "skipped": 0, "failed_before": 0, "ok": 0, "error": 0})
    cells = run_table(spec, seeds=seeds, store=Path(store), run=False)
    command = (f"graphpriv reproduce {name} --seeds {seeds} --store {store}" + (" --quick" if quick else "")
               + ("" if run else " --from-store"))
    text = to_markdown(spec, cells, seeds=seeds, command=command)
    out = docs / "reproduction" / ("quick" if quick else "") / f"{name}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    if not quick:
        update_block(docs / "reproduction.md", name, text)
    return out, counts
