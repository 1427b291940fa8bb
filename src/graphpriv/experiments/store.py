"""SQLite results store: every run appended, keyed by (method, dataset, seed, config hash)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from graphpriv.methods.base import Result

DEFAULT_STORE = Path("runs") / "results.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    method TEXT NOT NULL,
    dataset TEXT NOT NULL,
    seed INTEGER NOT NULL,
    config_hash TEXT NOT NULL,
    status TEXT NOT NULL,
    epsilon REAL,
    delta REAL,
    accounting TEXT,
    metrics TEXT,
    result TEXT,
    error TEXT
);
CREATE INDEX IF NOT EXISTS runs_key ON runs (method, dataset, seed, config_hash);
"""


def config_hash(config: dict[str, Any]) -> str:
    """Stable short hash of a config dict (sorted JSON)."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]


class ResultStore:
    """Append-only SQLite store of results (and of failed runs, with their error).

    Args:
        path: SQLite file; parent folders are created.
    """

    def __init__(self, path: str | Path = DEFAULT_STORE) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=60)

    def append(self, result: Result) -> int:
        """Store a finished run; returns its row id."""
        privacy = result.privacy
        row = (datetime.now(timezone.utc).isoformat(), result.method, result.dataset, result.seed,
               config_hash(result.config), "ok", privacy.epsilon if privacy else None,
               privacy.delta if privacy else None, privacy.accounting if privacy else None,
               json.dumps(result.metrics), result.model_dump_json(), None)
        return self._insert(row)

    def append_error(self, method: str, dataset: str, seed: int, config: dict[str, Any], error: str) -> int:
        """Store a run that raised, with its error message."""
        row = (datetime.now(timezone.utc).isoformat(), method, dataset, seed, config_hash(config), "error",
               None, None, None, None, json.dumps({"config": config}), error)
        return self._insert(row)

    def _insert(self, row: tuple) -> int:
        with self._connect() as db:
            cur = db.execute(
                "INSERT INTO runs (created, method, dataset, seed, config_hash, status, epsilon, delta, "
                "accounting, metrics, result, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
            return int(cur.lastrowid)

    def results(self, **where: Any) -> list[Result]:
        """Successful results, optionally filtered by column equality (method=..., dataset=...)."""
        clauses = " AND ".join(f"{k} = ?" for k in where)
        sql = "SELECT result FROM runs WHERE status = 'ok'" + (f" AND {clauses}" if clauses else "")
        with self._connect() as db:
            rows = db.execute(sql + " ORDER BY id", tuple(where.values())).fetchall()
        return [Result.model_validate_json(r[0]) for r in rows]

    def find(self, method: str, dataset: str, seed: int, config: dict[str, Any]) -> Result | None:
        """The stored successful result of this exact run (same config hash), if any."""
        with self._connect() as db:
            row = db.execute(
                "SELECT result FROM runs WHERE status = 'ok' AND method = ? AND dataset = ? AND seed = ? "
                "AND config_hash = ? ORDER BY id DESC LIMIT 1",
                (method, dataset, seed, config_hash(config))).fetchone()
        return Result.model_validate_json(row[0]) if row else None

    def count(self) -> int:
        """Number of stored rows (successful or not)."""
        with self._connect() as db:
            return int(db.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
