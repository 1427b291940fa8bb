"""The results a reproduced table rests on, as a compact CSV in the repository (``docs/results/``).

``graphpriv reproduce NAME`` writes ``docs/results/NAME.csv`` beside ``docs/reproduction/NAME.md``:
one line per run (``runs`` grids: the table's metrics, the privacy spent, the time), per audit
report (``audit`` grids) or per seed and pair type (``proximity``), headed by ``# key: value``
lines (the command and the machine the table shows). Floats are written with ``repr``, so they
read back bit for bit and ``graphpriv reproduce NAME --from-results`` renders the committed table
byte for byte with no results store.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from graphpriv.audit.statistics import AuditReport
from graphpriv.errors import ConfigError
from graphpriv.experiments.grid import AuditGrid, ProximityGrid, RunsGrid
from graphpriv.experiments.tables import AuditRecord, ProximityRecord, RunRecord, table_metrics

__all__ = ["read_results", "results_file", "write_results"]

_RUN_FIELDS = ("epsilon", "delta", "accounting", "accountant", "noise_multiplier", "seconds")
_AUDIT_FIELDS = tuple(f for f in AuditReport.model_fields)
_PROXIMITY_FIELDS = ("dataset", "visible", "pair_type", "seed", "mean_distance", "disconnected_ratio")


def results_file(docs: Path, name: str) -> Path:
    """Where table ``name``'s results file lives under the docs folder ``docs``:
    ``<docs>/results/<name>.csv``."""
    return Path(docs) / "results" / f"{name}.csv"


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _float(text: str) -> float | None:
    return None if text == "" else float(text)


def write_results(path: str | Path, grid: RunsGrid | AuditGrid | ProximityGrid, records: list, *,
                  meta: dict[str, str]) -> Path:
    """Write a grid's records as CSV.

    Args:
        path: the CSV file (its folder is created). grid: the table. records: its
            :class:`~graphpriv.experiments.tables.RunRecord`, ``AuditRecord`` or ``ProximityRecord``
            list. meta: ``{key: value}`` written as ``# key: value`` lines (command, machine, seeds).

    Returns:
        ``path``.
    """
    buffer = io.StringIO()
    buffer.write(f"# graphpriv reproduce {grid.name}: the results its table rests on\n")
    for key, value in meta.items():
        buffer.write(f"# {key}: {value}\n")
    writer = csv.writer(buffer, lineterminator="\n")
    if isinstance(grid, RunsGrid):
        metrics = table_metrics(grid)
        writer.writerow(["row", "dataset", "method", "seed", "config_hash", "settings", *metrics, *_RUN_FIELDS])
        for r in records:
            writer.writerow([r.row, r.dataset, r.method, r.seed, r.config_hash, r.settings,
                             *(_cell(r.metrics.get(m)) for m in metrics),
                             *(_cell(getattr(r, f)) for f in _RUN_FIELDS)])
    elif isinstance(grid, AuditGrid):
        writer.writerow(["row", "grid_dataset", *_AUDIT_FIELDS])  # the grid's dataset name; the report's own
        for r in records:
            values = r.report.model_dump()
            values["notes"] = json.dumps(values["notes"])
            writer.writerow([r.row, r.dataset, *(_cell(values[f]) for f in _AUDIT_FIELDS)])
    else:
        writer.writerow(_PROXIMITY_FIELDS)
        for r in records:
            writer.writerow([_cell(getattr(r, f)) for f in _PROXIMITY_FIELDS])
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(buffer.getvalue())
    return path


def read_results(path: str | Path, grid: RunsGrid | AuditGrid | ProximityGrid) -> tuple[list, dict[str, str]]:
    """Read the records and the ``# key: value`` lines of a results file written by
    :func:`write_results` for ``grid``.

    Returns:
        ``(records, meta)``.

    Raises:
        ConfigError: no such file (the message says which command writes it), or a file whose
            columns or values do not match the grid (the message names the line).
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"no results file {path}: run `graphpriv reproduce {grid.name}` (it writes the table and "
                          "its results file) before --from-results")
    lines = path.read_text().splitlines()
    meta = {}
    for line in lines:
        if line.startswith("# ") and ": " in line and not line.startswith("# graphpriv reproduce"):
            key, value = line[2:].split(": ", 1)
            meta[key] = value
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    try:
        if isinstance(grid, RunsGrid):
            metrics = table_metrics(grid)
            records = [RunRecord(row=r["row"], dataset=r["dataset"], method=r["method"], seed=int(r["seed"]),
                                 config_hash=r["config_hash"], settings=r["settings"],
                                 metrics={m: float(r[m]) for m in metrics if r[m] != ""},
                                 epsilon=_float(r["epsilon"]), delta=_float(r["delta"]),
                                 accounting=r["accounting"] or None, accountant=r["accountant"] or None,
                                 noise_multiplier=_float(r["noise_multiplier"]), seconds=float(r["seconds"]))
                       for r in rows]
        elif isinstance(grid, AuditGrid):
            records = []
            for r in rows:
                values = {f: r[f] for f in _AUDIT_FIELDS}
                values["notes"] = json.loads(values["notes"])
                values["passed"] = values["passed"] == "True"
                records.append(AuditRecord(r["row"], r["grid_dataset"], AuditReport(**values)))
        else:
            records = [ProximityRecord(r["dataset"], r["visible"], r["pair_type"], int(r["seed"]),
                                       float(r["mean_distance"]), float(r["disconnected_ratio"])) for r in rows]
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"results file {path} does not match grid {grid.name!r} ({type(exc).__name__}: {exc}); "
                          f"write it again with `graphpriv reproduce {grid.name}`") from None
    return records, meta
