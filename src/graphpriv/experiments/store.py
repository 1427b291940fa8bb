"""SQLite results store: one row per run, keyed by (method, dataset, seed, config hash).

Schema (``PRAGMA user_version = 2``):

- ``runs``: one row per cell ``(method, dataset, seed, config_hash)`` (a UNIQUE index). ``status``
  is ``ok`` (``result`` holds the :class:`Result` as JSON), ``error`` (the run raised: a
  deterministic failure; ``error_type``, the one-line ``error_message``, the traceback in
  ``error`` and ``bad_input`` = 1 when it was a graphpriv error, i.e. bad input) or ``lost`` (the
  task was lost, e.g. its worker was killed: not the run's fault, so a sweep retries it).
- ``superseded``: every row a later row of the same cell replaced, with ``superseded_at``. Nothing
  is deleted: a rerun of a stored cell replaces its row (the newest result wins) and the old row
  moves here. A failure never replaces a successful result.

Stores written before schema versions existed (``user_version = 0``; any number of rows per
cell) are migrated in place when opened, in one transaction: per cell the newest ``ok`` row (else
the newest row) stays in ``runs``, the others move to ``superseded``; every row's data is kept.

Every failure (a missing, corrupt, foreign, future-version, locked or unwritable store) is a
:class:`~graphpriv.errors.StoreError` whose one-line message names the file and the fix.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any

from graphpriv.errors import ConfigError, StoreError
from graphpriv.experiments import DEFAULT_STORE
from graphpriv.methods.base import Result

__all__ = ["DEFAULT_STORE", "DEFAULT_TIMEOUT", "ROW_COLUMNS", "SCHEMA_VERSION", "Failure", "ResultStore", "config_hash",
           "one_line"]

log = logging.getLogger(__name__)

#: Seconds a store operation waits for another process's lock before it fails.
DEFAULT_TIMEOUT = 60.0
#: The layout this module writes (``PRAGMA user_version``); 0 is the unversioned layout it migrates.
SCHEMA_VERSION = 2

_INT64 = (-(2**63), 2**63 - 1)
_V0_COLUMNS = ("id", "created", "method", "dataset", "seed", "config_hash", "status", "epsilon", "delta",
               "accounting", "metrics", "result", "error")
_COLUMNS = (*_V0_COLUMNS, "error_type", "error_message", "bad_input")
_DATA_COLUMNS = _COLUMNS[1:]  # everything but id
#: The columns of a row as :meth:`ResultStore.rows` gives it and :meth:`ResultStore.merge_row` takes it.
ROW_COLUMNS = _DATA_COLUMNS
#: Columns :meth:`ResultStore.results` may filter on.
_FILTERS = ("method", "dataset", "seed", "config_hash", "accounting")
#: Exception types of a lost task (the run did not fail by itself): retried by sweeps.
_LOST_TYPES = ("KilledWorker", "CancelledError", "CommClosedError", "FutureCancelledError")

_TABLE = """
CREATE TABLE {name} (
    id INTEGER PRIMARY KEY{autoincrement},
    created TEXT NOT NULL,
    method TEXT NOT NULL,
    dataset TEXT NOT NULL,
    seed INTEGER NOT NULL,
    config_hash TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'error', 'lost')),
    epsilon REAL,
    delta REAL,
    accounting TEXT,
    metrics TEXT,
    result TEXT,
    error TEXT,
    error_type TEXT,
    error_message TEXT,
    bad_input INTEGER{extra}
)"""
_RUNS = _TABLE.format(name="runs", autoincrement=" AUTOINCREMENT", extra="")
_SUPERSEDED = _TABLE.format(name="superseded", autoincrement="", extra=",\n    superseded_at TEXT NOT NULL")
_INDEX = "CREATE UNIQUE INDEX runs_cell ON runs (method, dataset, seed, config_hash)"


#: Settings a method gained after runs of it were stored -> the value that gives the behaviour those
#: runs had: a setting at that value is left out of the key, so that those runs keep their keys
#: (SEAL's ``max_train_links`` None; GAP's and ProGAP's ``model_selection`` "last"). Keyed by the
#: setting's name across methods: a later method with a setting of the same name must not default
#: to that value, or its key would leave it out too.
KEY_ADDITIONS: Mapping[str, Any] = MappingProxyType({"max_train_links": None, "model_selection": "last"})


def config_hash(config: dict[str, Any]) -> str:
    """Stable short hash of a config dict.

    Args:
        config: JSON-like settings (key order does not matter; other values are hashed by ``str``).
            A setting of :data:`KEY_ADDITIONS` at its earlier behaviour's value is left out.

    Returns:
        16 hex digits of the SHA-256 of the sorted JSON.
    """
    config = {key: value for key, value in config.items()
              if not (key in KEY_ADDITIONS and value == KEY_ADDITIONS[key])}
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]


def one_line(text: object, limit: int = 400) -> str:
    """``text`` with its whitespace runs (newlines included) squashed to single spaces, cut at ``limit``.

    Args:
        text: anything; ``str`` of it is used. limit: the most characters kept (an ellipsis marks a cut).

    Returns:
        One line of text.
    """
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _parse_traceback(text: str) -> tuple[str | None, str | None]:
    """(exception type, message) from the last line of a formatted traceback (``Type: message``)."""
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    if not lines:
        return None, None
    last = lines[-1].strip()
    head, sep, message = last.partition(":")
    if sep and head and " " not in head:
        return head, one_line(message)
    return None, one_line(last)


@dataclass(frozen=True)
class Failure:
    """A stored failed run.

    Attributes:
        id: its row id. method, dataset, seed, config_hash: its cell. status: ``error`` (the run
            raised; sweeps do not retry it unless asked) or ``lost`` (its task was lost; retried).
        error_type: the exception's qualified type (``graphpriv.errors.DatasetError``), or None.
        error_message: the one-line message. bad_input: the run raised a graphpriv error (bad
            input), not a bug or a crash. created: when it was recorded (ISO 8601, UTC).
    """

    id: int
    method: str
    dataset: str
    seed: int
    config_hash: str
    status: str
    error_type: str | None
    error_message: str | None
    bad_input: bool
    created: str


class ResultStore:
    """SQLite store of results and failed runs, one row per (method, dataset, seed, config hash).

    Constructing a store validates it completely, so a bad store fails before any work: it opens
    the file (creating it and its folder when ``create`` is true), checks that it is a graphpriv
    results store of a schema version this code understands, migrates an unversioned store in
    place, and (when ``create`` is true) checks that it can take a write lock.

    Args:
        path: the SQLite file. create: create a missing file (and its parent folders) and check
            that the store is writable; False for readers (:meth:`open_existing`), which never
            create a file. timeout: seconds to wait for another process's lock.

    Raises:
        StoreError: a missing file (with ``create=False``), a folder, a file that is not SQLite
            (or is corrupt), a foreign SQLite database, a schema version from a newer graphpriv, a
            locked database, or a path that cannot be created or written.
    """

    def __init__(self, path: str | Path = DEFAULT_STORE, *, create: bool = True,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        self.path = Path(path)
        self.timeout = float(timeout)
        self._snapshot: sqlite3.Connection | None = None  # a reader's in-memory migrated copy of an old store
        if self.path.is_dir():
            raise StoreError(f"results store {self.path} is a folder; give a file path such as "
                             f"{self.path / 'results.sqlite'}")
        if not self.path.exists():
            if not create:
                raise StoreError(f"no results store at {self.path}; check --store (the path of an existing "
                                 "results .sqlite file)")
            self.check_path(self.path)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the folder of results store {self.path} ({one_line(exc)}); "
                                 "choose a --store path in a writable folder") from None
        self._open(migrate=create)
        if create:
            self.check_writable()

    @classmethod
    def open_existing(cls, path: str | Path, *, timeout: float = DEFAULT_TIMEOUT) -> ResultStore:
        """Open a store that must already exist, for reading (nothing is created, nothing written: a
        store of an older schema is read through an in-memory migrated copy and left as it is).

        Args:
            path: the SQLite file. timeout: seconds to wait for another process's lock.

        Returns:
            The store.

        Raises:
            StoreError: no file at ``path`` ("no results store at PATH; check --store"), or any
                failure of the constructor.
        """
        return cls(path, create=False, timeout=timeout)

    @staticmethod
    def check_path(path: str | Path) -> None:
        """Check, without creating anything, that a store could be created at ``path``.

        Args:
            path: the would-be SQLite file.

        Raises:
            StoreError: ``path`` is a folder, or its nearest existing ancestor is not a folder or
                not writable.
        """
        path = Path(path)
        if path.is_dir():
            raise StoreError(f"results store {path} is a folder; give a file path such as {path / 'results.sqlite'}")
        if path.exists():
            return
        parent = path.absolute().parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise StoreError(f"cannot create results store {path}: {parent} is a file, not a folder; choose a "
                             "--store path in a writable folder")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise StoreError(f"cannot create results store {path}: folder {parent} is not writable; choose a "
                             "--store path in a writable folder")

    # -- connections and errors -------------------------------------------------------------------

    def _error(self, exc: BaseException, action: str) -> StoreError:
        text = one_line(exc, 200)
        low = text.lower()
        if "locked" in low or "busy" in low:
            return StoreError(f"results store {self.path} is locked by another process (waited {self.timeout:g} s "
                              f"to {action}); wait for it to finish, or use another --store")
        if "not a database" in low or "malformed" in low or "corrupt" in low:
            return StoreError(f"{self.path} is not a readable graphpriv results store (not a SQLite database, or "
                              f"corrupt: {text}); point --store at a results store, or move the file away")
        if "readonly" in low or "read-only" in low or "unable to open" in low or "permission" in low:
            return StoreError(f"cannot {action} results store {self.path} ({text}); check the permissions of "
                              "the file and its folder, or choose another --store")
        if "disk is full" in low or "disk i/o" in low:
            return StoreError(f"cannot {action} results store {self.path} ({text}); free disk space or choose "
                              "another --store")
        return StoreError(f"cannot {action} results store {self.path} ({type(exc).__name__}: {text}); check the "
                          "file, or choose another --store")

    @contextmanager
    def _db(self, action: str, *, file: bool = False) -> Iterator[sqlite3.Connection]:
        """A connection in autocommit mode (transactions are explicit), closed afterwards; every
        sqlite3 error becomes a one-line :class:`StoreError`. A reader of an old store gets its
        in-memory migrated copy unless ``file``."""
        db = None
        snapshot = self._snapshot is not None and not file
        try:
            db = self._snapshot if snapshot else sqlite3.connect(self.path, timeout=self.timeout,
                                                                 isolation_level=None)
            yield db
        except sqlite3.Error as exc:
            if db is not None and db.in_transaction:
                try:
                    db.rollback()
                except sqlite3.Error:
                    pass
            raise self._error(exc, action) from None
        finally:
            if db is not None and not snapshot:
                db.close()

    @contextmanager
    def _write(self, action: str, *, snapshot: bool = False) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``; rolled back on any error).

        Raises:
            StoreError: the store was opened for reading from an old layout (its file is left as it
                is; ``ResultStore(path)`` migrates it and writes), unless ``snapshot`` (the
                in-memory migration itself).
        """
        if self._snapshot is not None and not snapshot:
            raise StoreError(f"results store {self.path} (an older schema) was opened for reading only; open it "
                             "with ResultStore(path) to write, which migrates it")
        with self._db(action) as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.rollback()
                raise
            db.commit()

    def check_writable(self) -> None:
        """Check that the store takes a write lock (``BEGIN IMMEDIATE; ROLLBACK``); writes nothing.

        Raises:
            StoreError: the store is locked by another process, read-only or unwritable.
        """
        with self._db("write to", file=True) as db:
            db.execute("BEGIN IMMEDIATE")
            db.rollback()

    # -- opening, validation, migration -----------------------------------------------------------

    @staticmethod
    def _columns(db: sqlite3.Connection, table: str) -> set[str]:
        return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}

    @staticmethod
    def _tables(db: sqlite3.Connection) -> set[str]:
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def _layout(self, db: sqlite3.Connection) -> str:
        """``new`` (no tables), ``v0`` (the unversioned layout) or ``current``; raises for anything else."""
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise StoreError(f"results store {self.path} has schema version {version}, newer than this graphpriv "
                             f"understands ({SCHEMA_VERSION}); upgrade graphpriv, or use another --store")
        tables = self._tables(db) - {"sqlite_sequence"}
        if "runs" not in tables:
            if not tables:
                return "new"
            raise StoreError(f"{self.path} is a SQLite database but not a graphpriv results store (tables "
                             f"{', '.join(sorted(tables))}; no runs table); point --store at a results store")
        columns = self._columns(db, "runs")
        expected = set(_COLUMNS) if version == SCHEMA_VERSION else set(_V0_COLUMNS)
        missing = expected - columns
        if missing:
            raise StoreError(f"{self.path} has a runs table without graphpriv's columns (missing "
                             f"{', '.join(sorted(missing))}); it is not a graphpriv results store of schema "
                             f"version {version}; point --store at a results store")
        return "current" if version == SCHEMA_VERSION else "v0"

    def _open(self, *, migrate: bool) -> None:
        """Validate the layout; set up a new store, or migrate an old one. A reader (``migrate``
        False) leaves the file as it is and reads an in-memory copy, set up or migrated there."""
        with self._db("open") as db:
            if self._layout(db) == "current":
                return
            if not migrate:
                self._snapshot = sqlite3.connect(":memory:", isolation_level=None)
                db.backup(self._snapshot)
        with self._write("set up", snapshot=not migrate) as db:  # re-checked under the write lock
            layout = self._layout(db)
            if layout == "new":
                db.execute(_RUNS)
                db.execute(_SUPERSEDED)
                db.execute(_INDEX)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif layout == "v0":
                self._migrate_v0(db)

    def _migrate_v0(self, db: sqlite3.Connection) -> None:
        """Unversioned layout -> version 2, inside the caller's transaction (all or nothing)."""
        log.info("migrating results store %s to schema version %d", self.path, SCHEMA_VERSION)
        db.execute(_RUNS.replace("CREATE TABLE runs", "CREATE TABLE runs_v2"))
        if "superseded" not in self._tables(db):
            db.execute(_SUPERSEDED)
        db.execute("CREATE TEMP TABLE keep AS SELECT COALESCE(MAX(CASE WHEN status = 'ok' THEN id END), MAX(id)) "
                   "AS id FROM runs GROUP BY method, dataset, seed, config_hash")
        old = ", ".join(_V0_COLUMNS)
        db.execute(f"INSERT INTO runs_v2 ({old}) SELECT {old} FROM runs WHERE id IN (SELECT id FROM keep)")
        db.execute(f"INSERT INTO superseded ({old}, superseded_at) SELECT {old}, ? FROM runs "
                   "WHERE id NOT IN (SELECT id FROM keep)", (_now(),))
        db.execute("DROP TABLE keep")
        # v0 stored any non-ok status as 'error' with the traceback: recover type, message, kind
        for table in ("runs_v2", "superseded"):
            rows = db.execute(f"SELECT id, status, error FROM {table} WHERE status != 'ok'").fetchall()
            for row_id, status, error in rows:
                error_type, message = _parse_traceback(error or "")
                lost = bool(error_type) and error_type.rsplit(".", 1)[-1] in _LOST_TYPES
                db.execute(f"UPDATE {table} SET status = ?, error_type = ?, error_message = ?, bad_input = ? "
                           "WHERE id = ?",
                           ("lost" if lost else "error", error_type, message,
                            int(bool(error_type) and error_type.startswith("graphpriv.")), row_id))
        # row ids are never reused (superseded rows keep theirs): continue after the old sequence
        last = db.execute("SELECT MAX(x) FROM (SELECT MAX(id) AS x FROM runs UNION ALL SELECT MAX(seq) FROM "
                          "sqlite_sequence WHERE name = 'runs')").fetchone()[0] or 0
        db.execute("DROP TABLE runs")
        db.execute("ALTER TABLE runs_v2 RENAME TO runs")
        db.execute("DELETE FROM sqlite_sequence WHERE name IN ('runs', 'runs_v2')")
        db.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('runs', ?)", (int(last),))
        db.execute(_INDEX)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    # -- writing ----------------------------------------------------------------------------------

    def _seed(self, seed: Any) -> int:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise StoreError(f"seed {seed!r} is not an integer; results store {self.path} keys runs by integer "
                             "seeds in [0, 2**32-1]")
        if not _INT64[0] <= seed <= _INT64[1]:
            raise StoreError(f"seed {seed} does not fit results store {self.path} (64-bit INTEGER column); use "
                             "a seed in [0, 2**32-1]")
        return seed

    def append(self, result: Result) -> int:
        """Store a finished run. A stored row of the same cell (method, dataset, seed, config hash),
        successful or failed, is replaced (the newest result wins) and moved to ``superseded``, so
        a cell is never counted twice.

        Args:
            result: the run's :class:`Result` (its ``release`` is not stored).

        Returns:
            The new row's id.

        Raises:
            StoreError: the store cannot be written, or the seed does not fit a 64-bit integer.
        """
        privacy = result.privacy
        row = {"created": _now(), "method": result.method, "dataset": result.dataset,
               "seed": self._seed(result.seed), "config_hash": config_hash(result.config), "status": "ok",
               "epsilon": privacy.epsilon if privacy else None, "delta": privacy.delta if privacy else None,
               "accounting": privacy.accounting if privacy else None, "metrics": json.dumps(result.metrics),
               "result": result.model_dump_json(), "error": None, "error_type": None, "error_message": None,
               "bad_input": None}
        return self._put(row)

    def append_error(self, method: str, dataset: str, seed: int, config: dict[str, Any], error: str, *,
                     error_type: str | None = None, message: str | None = None, bad_input: bool | None = None,
                     lost: bool = False) -> int:
        """Store a failed run. It replaces a stored failure of the same cell (moved to ``superseded``),
        never a stored result: then nothing is written and the result's row id is returned.

        Args:
            method, dataset, seed, config: the run's cell. error: its traceback (or message).
            error_type: the exception's qualified type; message: its one-line message (both read
                from the traceback's last line when None). bad_input: the run raised a graphpriv
                error (derived from ``error_type`` when None). lost: the task was lost (a killed
                worker), not failed by itself: sweeps retry it.

        Returns:
            The row id of the cell.

        Raises:
            StoreError: the store cannot be written, or the seed does not fit a 64-bit integer.
        """
        parsed_type, parsed_message = _parse_traceback(error)
        error_type = error_type or parsed_type
        if bad_input is None:
            bad_input = bool(error_type) and error_type.startswith("graphpriv.")
        row = {"created": _now(), "method": method, "dataset": dataset, "seed": self._seed(seed),
               "config_hash": config_hash(config), "status": "lost" if lost else "error", "epsilon": None,
               "delta": None, "accounting": None, "metrics": None,
               "result": json.dumps({"config": config}, default=str), "error": error, "error_type": error_type,
               "error_message": one_line(message) if message else parsed_message, "bad_input": int(bad_input)}
        return self._put(row)

    def _put(self, row: dict[str, Any]) -> int:
        key = (row["method"], row["dataset"], row["seed"], row["config_hash"])
        with self._write("write to") as db:
            found = db.execute("SELECT id, status FROM runs WHERE method = ? AND dataset = ? AND seed = ? AND "
                               "config_hash = ?", key).fetchone()
            if found is not None:
                if row["status"] != "ok" and found[1] == "ok":
                    return int(found[0])  # a failure never replaces a result
                columns = ", ".join(_COLUMNS)
                db.execute(f"INSERT INTO superseded ({columns}, superseded_at) SELECT {columns}, ? FROM runs "
                           "WHERE id = ?", (_now(), found[0]))
                db.execute("DELETE FROM runs WHERE id = ?", (found[0],))
            cur = db.execute(f"INSERT INTO runs ({', '.join(_DATA_COLUMNS)}) VALUES "
                             f"({', '.join('?' * len(_DATA_COLUMNS))})", tuple(row[c] for c in _DATA_COLUMNS))
            return int(cur.lastrowid)

    def merge_row(self, row: dict[str, Any]) -> str:
        """Merge one row of another store (:meth:`rows`' form): a result beats a failure, whatever
        their times; otherwise the newer row of the cell (by ``created``) wins; the loser moves to
        ``superseded``. The outcome does not depend on the order rows are merged in.

        Args:
            row: every data column (``created``, ``method``, ``dataset``, ``seed``, ``config_hash``,
                ``status`` ... ``bad_input``).

        Returns:
            ``"added"`` (a new cell), ``"replaced"`` (it was newer than the stored row) or
            ``"kept"`` (the stored row is the same or newer, or a result against this failure).

        Raises:
            StoreError: the store cannot be written, or the row lacks a column or has a bad status.
        """
        missing = [c for c in _DATA_COLUMNS if c not in row]
        if missing:
            raise StoreError(f"a row merged into results store {self.path} lacks column(s) {', '.join(missing)}")
        if row["status"] not in ("ok", "error", "lost"):
            raise StoreError(f"a row merged into results store {self.path} has status {row['status']!r}; "
                             "expected ok, error or lost")
        key = (row["method"], row["dataset"], self._seed(row["seed"]), row["config_hash"])
        with self._db("read") as db:
            found = db.execute("SELECT status, created FROM runs WHERE method = ? AND dataset = ? AND seed = ? "
                               "AND config_hash = ?", key).fetchone()
        if found is not None:
            status, created = found
            same_kind = (row["status"] == "ok") == (status == "ok")
            if (same_kind and str(row["created"]) <= created) or (not same_kind and status == "ok"):
                return "kept"
        self._put({c: row[c] for c in _DATA_COLUMNS})
        return "added" if found is None else "replaced"

    def rows(self, *, statuses: tuple[str, ...] = ("ok", "error")) -> Iterator[dict[str, Any]]:
        """Every stored row of the given statuses, in row order, as a dict of its data columns
        (everything but the row id): the form :meth:`merge_row` takes.

        Args:
            statuses: which rows (default: results and failures; ``lost`` rows are retried anyway).

        Returns:
            An iterator of dicts.

        Raises:
            StoreError: the store cannot be read.
        """
        marks = ", ".join("?" * len(statuses))
        with self._db("read") as db:
            rows = db.execute(f"SELECT {', '.join(_DATA_COLUMNS)} FROM runs WHERE status IN ({marks}) ORDER BY id",
                              tuple(statuses)).fetchall()
        for values in rows:
            yield dict(zip(_DATA_COLUMNS, values, strict=True))

    # -- reading ----------------------------------------------------------------------------------

    def results(self, *, bad_rows: list[tuple[int, str]] | None = None, **where: Any) -> list[Result]:
        """Successful results (one per cell), in row order, optionally filtered by column equality.

        Args:
            bad_rows: when a list, rows whose JSON is not a valid :class:`Result` are skipped and
                appended to it as ``(row id, one-line reason)``; when None such a row raises.
            where: ``method=``, ``dataset=``, ``seed=``, ``config_hash=`` or ``accounting=``.

        Returns:
            The results.

        Raises:
            ConfigError: an unknown filter column.
            StoreError: the store cannot be read, or (``bad_rows`` None) a row is not a valid result.
        """
        unknown = sorted(set(where) - set(_FILTERS))
        if unknown:
            raise ConfigError(f"unknown results filter(s) {', '.join(unknown)}; use {', '.join(_FILTERS)}")
        clauses = "".join(f" AND {k} = ?" for k in where)
        with self._db("read") as db:
            rows = db.execute(f"SELECT id, result FROM runs WHERE status = 'ok'{clauses} ORDER BY id",
                              tuple(where.values())).fetchall()
        out = []
        for row_id, text in rows:
            result, reason = _parse_result(text)
            if result is not None:
                out.append(result)
            elif bad_rows is None:
                raise StoreError(f"row {row_id} of results store {self.path} is not a valid result ({reason}); "
                                 "`graphpriv report` lists and skips such rows")
            else:
                bad_rows.append((int(row_id), reason))
        return out

    def find(self, method: str, dataset: str, seed: int, config: dict[str, Any]) -> Result | None:
        """The stored successful result of this exact run (same config hash), if any.

        A stored row that is not a valid result counts as missing (a warning is logged), so a sweep
        runs the cell again and replaces it.

        Args:
            method, dataset, seed, config: the cell.

        Returns:
            The :class:`Result`, or None.

        Raises:
            StoreError: the store cannot be read, or the seed does not fit a 64-bit integer.
        """
        with self._db("read") as db:
            row = db.execute("SELECT id, result FROM runs WHERE status = 'ok' AND method = ? AND dataset = ? AND "
                             "seed = ? AND config_hash = ?",
                             (method, dataset, self._seed(seed), config_hash(config))).fetchone()
        if row is None:
            return None
        result, reason = _parse_result(row[1])
        if result is None:
            log.warning("row %s of results store %s is not a valid result (%s); treated as missing", row[0],
                        self.path, reason)
        return result

    def statuses(self) -> dict[tuple[str, str, int, str], str]:
        """The status of every stored cell.

        Returns:
            ``{(method, dataset, seed, config_hash): "ok" | "error" | "lost"}``.

        Raises:
            StoreError: the store cannot be read.
        """
        with self._db("read") as db:
            rows = db.execute("SELECT method, dataset, seed, config_hash, status FROM runs").fetchall()
        return {(m, d, int(s), h): status for m, d, s, h, status in rows}

    def failures(self) -> list[Failure]:
        """Every stored failed run (status ``error`` or ``lost``), in row order.

        Returns:
            The :class:`Failure` records.

        Raises:
            StoreError: the store cannot be read.
        """
        with self._db("read") as db:
            rows = db.execute("SELECT id, method, dataset, seed, config_hash, status, error_type, error_message, "
                              "bad_input, created FROM runs WHERE status != 'ok' ORDER BY id").fetchall()
        return [Failure(int(r[0]), r[1], r[2], int(r[3]), r[4], r[5], r[6], r[7], bool(r[8]), r[9]) for r in rows]

    def count(self, status: str | None = None) -> int:
        """Number of stored cells (superseded rows are not counted).

        Args:
            status: ``ok``, ``error`` or ``lost`` to count those only; None: every cell.

        Returns:
            The count.

        Raises:
            StoreError: the store cannot be read.
        """
        with self._db("read") as db:
            if status is None:
                return int(db.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
            return int(db.execute("SELECT COUNT(*) FROM runs WHERE status = ?", (status,)).fetchone()[0])


def _parse_result(text: str | None) -> tuple[Result | None, str]:
    """(result, "") or (None, one-line reason) for a stored result JSON."""
    if text is None:
        return None, "no result JSON"
    try:
        return Result.model_validate_json(text), ""
    except ValueError as exc:  # pydantic.ValidationError, including invalid JSON
        errors = getattr(exc, "errors", None)
        if callable(errors):
            first = errors()[0] if errors() else {}
            where = ".".join(str(part) for part in first.get("loc", ())) or "result"
            more = f" (+{len(errors()) - 1} more)" if len(errors()) > 1 else ""
            return None, one_line(f"{where}: {first.get('msg', exc)}{more}", 200)
        return None, one_line(exc, 200)
