"""Store archives: a results store's rows as one gzipped JSON-lines file, to move runs between
machines or to pool the runs of a sweep split over several (``graphpriv store export`` and
``graphpriv store import``).

Format: the first line is a header ``{"graphpriv_store_archive": 1, "schema": 2, "rows": N}``;
each of the next ``N`` lines is one stored row, a JSON object of the store's data columns
(:meth:`~graphpriv.experiments.store.ResultStore.rows`). Importing merges row by row with
:meth:`~graphpriv.experiments.store.ResultStore.merge_row`: a result beats a failure, otherwise the
newer row of a cell wins, so importing the same archive twice, or archives in any order, gives
the same store.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from graphpriv.errors import StoreError
from graphpriv.experiments.store import ROW_COLUMNS, SCHEMA_VERSION, ResultStore, one_line

__all__ = ["ARCHIVE_VERSION", "export_store", "import_archives", "read_archive"]

#: The archive layout this module writes and reads.
ARCHIVE_VERSION = 1
_KEY = ("method", "dataset", "seed", "config_hash", "created")


def read_archive(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a store archive.

    Args:
        path: a file written by :func:`export_store`.

    Returns:
        The rows (dicts of the store's data columns), in the archive's order.

    Raises:
        StoreError: no such file, not gzip, not JSON lines, a header that is not a graphpriv store
            archive (or of a newer version), fewer rows than the header announces (a truncated
            file), or a row without the store's columns; the message names the file and the line.
    """
    path = Path(path)
    if not path.is_file():
        raise StoreError(f"no store archive at {path}; give a file written by `graphpriv store export`")
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path} is not a graphpriv store archive (not a gzipped text file: {one_line(exc, 120)}); "
                         "give a file written by `graphpriv store export`") from None
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise StoreError(f"line {number} of store archive {path} is not JSON ({exc.msg}); the file is damaged: "
                             "export it again") from None
    header = records[0] if records else None
    if not isinstance(header, dict) or "graphpriv_store_archive" not in header:
        raise StoreError(f"{path} has no graphpriv store archive header; give a file written by "
                         "`graphpriv store export`")
    if header["graphpriv_store_archive"] > ARCHIVE_VERSION or header.get("schema", 0) > SCHEMA_VERSION:
        raise StoreError(f"store archive {path} was written by a newer graphpriv (archive version "
                         f"{header['graphpriv_store_archive']}, schema {header.get('schema')}); upgrade graphpriv")
    rows = records[1:]
    if len(rows) != header.get("rows"):
        raise StoreError(f"store archive {path} holds {len(rows)} rows but its header announces {header.get('rows')} "
                         "(a truncated file); export it again")
    for number, row in enumerate(rows, start=2):
        missing = [c for c in ROW_COLUMNS if not isinstance(row, dict) or c not in row]
        if missing:
            raise StoreError(f"line {number} of store archive {path} is not a stored row (missing "
                             f"{', '.join(missing)}); export it again")
    return rows


def export_store(store: ResultStore, path: str | Path, *, skip: Iterable[str | Path] = (),
                 overwrite: bool = False) -> int:
    """Write a store's results and failures (not its lost runs) to a store archive.

    The file is written beside ``path`` and renamed into place, so a failed export leaves no
    partial archive and an existing file is replaced only with ``overwrite``.

    Args:
        store: the results store.
        path: the archive to write (conventionally ``*.jsonl.gz``).
        skip: archives whose rows are left out (the same cell with the same ``created`` time): an
            export of only what is new since those.
        overwrite: replace an existing file at ``path``.

    Returns:
        The number of rows written (0 writes a header-only archive).

    Raises:
        StoreError: ``path`` exists (without ``overwrite``) or is a folder, a ``skip`` archive
            cannot be read, the store cannot be read, or the file cannot be written.
    """
    path = Path(path)
    if path.is_dir():
        raise StoreError(f"store archive {path} is a folder; give a file path such as {path / 'runs.jsonl.gz'}")
    if path.exists() and not overwrite:
        raise StoreError(f"{path} exists; give a new file name, or --overwrite to replace it")
    seen = {tuple(row.get(k) for k in _KEY) for archive in skip for row in read_archive(archive)}
    rows = [row for row in store.rows() if tuple(row[k] for k in _KEY) not in seen]
    header = {"graphpriv_store_archive": ARCHIVE_VERSION, "schema": SCHEMA_VERSION, "rows": len(rows)}
    partial = path.with_name(path.name + ".partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(partial, "wt", encoding="utf-8") as fh:
            for record in (header, *rows):
                fh.write(json.dumps(record, sort_keys=True) + "\n")
        os.replace(partial, path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise StoreError(f"cannot write store archive {path} ({one_line(exc, 200)}); choose a writable path") from None
    return len(rows)


def import_archives(store: ResultStore, paths: Iterable[str | Path]) -> dict[str, int]:
    """Merge store archives into a store, row by row (:meth:`ResultStore.merge_row`).

    Every archive is read and checked before the first row is merged, so a damaged archive
    changes nothing.

    Args:
        store: the results store written to.
        paths: archives written by :func:`export_store`.

    Returns:
        ``{"added": ..., "replaced": ..., "kept": ...}``: new cells, stored rows replaced by newer
        ones, and archive rows not taken (the stored row is the same or newer, or a result).

    Raises:
        StoreError: an archive cannot be read (see :func:`read_archive`), a row has a bad
            status or seed, or the store cannot be written.
    """
    batches = [(Path(p), read_archive(p)) for p in paths]
    counts = {"added": 0, "replaced": 0, "kept": 0}
    for path, rows in batches:
        for row in rows:
            try:
                counts[store.merge_row(row)] += 1
            except StoreError as exc:
                raise StoreError(f"store archive {path}: {exc}") from None
    return counts
