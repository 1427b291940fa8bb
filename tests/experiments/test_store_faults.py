"""The results store: schema version 2, one row per cell, the v0 migration, and every failure a
one-line StoreError naming the file (never a raw sqlite3 traceback, never a database created at a
mistyped path)."""

import json
import sqlite3
import time

import pytest

from graphpriv.errors import GraphPrivError, StoreError
from graphpriv.experiments import store as store_module
from graphpriv.experiments.store import SCHEMA_VERSION, ResultStore, config_hash
from graphpriv.experiments.sweep import SweepRun, make_run, pending_runs, split_runs
from graphpriv.methods.base import Result

V0_SCHEMA = """
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, created TEXT NOT NULL, method TEXT NOT NULL, dataset TEXT NOT NULL,
    seed INTEGER NOT NULL, config_hash TEXT NOT NULL, status TEXT NOT NULL, epsilon REAL, delta REAL,
    accounting TEXT, metrics TEXT, result TEXT, error TEXT);
CREATE INDEX runs_key ON runs (method, dataset, seed, config_hash);
"""
V0_COLUMNS = ("created", "method", "dataset", "seed", "config_hash", "status", "epsilon", "delta", "accounting",
              "metrics", "result", "error")


def _result(seed=0, auc=0.5, method="cn", dataset="g", **config):
    return Result(method=method, dataset=dataset, seed=seed, config=dict(config), metrics={"auc": auc})


def _v0_row(result=None, *, seed=0, error=None, created="2024-01-01T00:00:00"):
    if result is not None:
        return (created, result.method, result.dataset, result.seed, config_hash(result.config), "ok", None, None,
                None, json.dumps(result.metrics), result.model_dump_json(), None)
    return (created, "cn", "g", seed, config_hash({}), "error", None, None, None, None, '{"config": {}}', error)


def _make_v0(path, rows):
    with sqlite3.connect(path) as db:
        db.executescript(V0_SCHEMA)
        db.executemany(f"INSERT INTO runs ({', '.join(V0_COLUMNS)}) VALUES ({', '.join('?' * 12)})", rows)
    return rows


def _one_line_store_error(excinfo, path):
    message = str(excinfo.value)
    assert isinstance(excinfo.value, GraphPrivError) and isinstance(excinfo.value, OSError)
    assert "\n" not in message and str(path) in message
    return message


def test_v0_store_with_duplicate_rows_is_migrated_in_place(tmp_path):
    path = tmp_path / "old.sqlite"
    rows = _make_v0(path, [
        _v0_row(_result(0, 0.1)), _v0_row(_result(0, 0.2)),  # a cell run twice: two ok rows
        _v0_row(seed=0, error="Traceback ...\nValueError: later failure"),  # then failed: the result stays
        _v0_row(seed=1, error="Traceback ...\ngraphpriv.errors.DatasetError: no file g"),
        _v0_row(seed=1, error="Traceback ...\ngraphpriv.errors.DatasetError: no file g"),  # failed twice
        _v0_row(seed=2, error="Traceback ...\ndistributed.scheduler.KilledWorker: worker died"),
        _v0_row(_result(3, 0.9)),
    ])
    store = ResultStore(path)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
        kept = db.execute(f"SELECT {', '.join(V0_COLUMNS)} FROM runs").fetchall()
        moved = db.execute(f"SELECT {', '.join(V0_COLUMNS)} FROM superseded").fetchall()
        ids = [r[0] for r in db.execute("SELECT id FROM runs UNION ALL SELECT id FROM superseded")]
    # every row's data is kept: one row per cell in runs, the others in superseded (the status of a
    # killed worker's row becomes 'lost')
    def data(row):
        return repr(row[:5] + row[6:])

    assert sorted(map(data, kept + moved)) == sorted(map(data, rows)) and sorted(ids) == list(range(1, 8))
    assert store.count() == 4 and len(kept) == 4 and len(moved) == 3
    results = store.results()
    assert [(r.seed, r.metrics["auc"]) for r in results] == [(0, 0.2), (3, 0.9)]  # the newest ok row, n = 1
    assert store.find("cn", "g", 0, {}).metrics == {"auc": 0.2}
    failures = {f.seed: f for f in store.failures()}
    assert failures[1].status == "error" and failures[1].bad_input
    assert failures[1].error_type == "graphpriv.errors.DatasetError" and failures[1].error_message == "no file g"
    assert failures[2].status == "lost" and not failures[2].bad_input
    # a resumed sweep: results and the deterministic failure are skipped, the lost run is retried
    runs = [SweepRun("cn", "g", seed, (), ()) for seed in range(5)]  # config {}: the rows' hash
    todo, skipped, failed = split_runs(runs, store)
    assert [r.seed for r in todo] == [2, 4] and (skipped, failed) == (2, 1)
    # ids are never reused: a new row comes after every old one, superseded rows included
    assert store.append(_result(4, 0.4)) > 7
    assert ResultStore(path).count() == store.count() == 5  # opening again changes nothing


def test_a_reader_leaves_a_v0_store_as_it_is_and_reads_it_migrated(tmp_path):
    path = tmp_path / "old.sqlite"
    _make_v0(path, [_v0_row(_result(0, 0.1)), _v0_row(_result(0, 0.2)), _v0_row(_result(3, 0.9))])
    before = path.read_bytes()
    reader = ResultStore.open_existing(path)
    assert [(r.seed, r.metrics["auc"]) for r in reader.results()] == [(0, 0.2), (3, 0.9)]  # one row per cell
    assert reader.count() == 2 and reader.find("cn", "g", 0, {}).metrics == {"auc": 0.2}
    with pytest.raises(StoreError, match="opened for reading only"):
        reader.append(_result(5, 0.5))
    assert path.read_bytes() == before  # not migrated, not written
    assert ResultStore(path).count() == 2  # a writer migrates it


def test_v0_migration_is_all_or_nothing(tmp_path, monkeypatch):
    path = tmp_path / "old.sqlite"
    rows = _make_v0(path, [_v0_row(_result(0)), _v0_row(_result(0)), _v0_row(seed=1, error="x\nValueError: y")])

    def broken(text):
        raise RuntimeError("killed mid-migration")

    monkeypatch.setattr(store_module, "_parse_traceback", broken)
    with pytest.raises(RuntimeError, match="mid-migration"):
        ResultStore(path)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 0
        assert {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")} == {
            "runs", "sqlite_sequence"}
        assert db.execute(f"SELECT {', '.join(V0_COLUMNS)} FROM runs ORDER BY id").fetchall() == rows
    monkeypatch.undo()
    assert ResultStore(path).count() == 2


def test_rerun_of_a_stored_cell_replaces_it_and_failures_never_replace_results(tmp_path):
    store = ResultStore(tmp_path / "s.sqlite")
    first = store.append(_result(0, 0.1))
    second = store.append(_result(0, 0.2))  # the same cell again: replaced, not counted twice
    assert second != first and store.count() == 1
    assert [r.metrics["auc"] for r in store.results()] == [0.2] and store.find("cn", "g", 0, {}).metrics["auc"] == 0.2
    assert store.append_error("cn", "g", 0, {}, "Traceback\nValueError: boom") == second  # the result stays
    assert store.count() == 1 and store.failures() == []
    store.append_error("cn", "g", 1, {}, "Traceback\nValueError: one")
    store.append_error("cn", "g", 1, {}, "Traceback\nValueError: two")  # at most one error row per cell
    assert store.count() == 2 and [f.error_message for f in store.failures()] == ["two"]
    store.append(_result(1, 0.7))  # an ok result replaces the cell's error row
    assert store.count() == 2 and store.failures() == [] and len(store.results()) == 2
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT COUNT(*) FROM superseded").fetchone()[0] == 3
        with pytest.raises(sqlite3.IntegrityError):  # the key is enforced by the schema itself
            db.execute("INSERT INTO runs (created, method, dataset, seed, config_hash, status) "
                       "SELECT created, method, dataset, seed, config_hash, status FROM runs LIMIT 1")


def test_split_runs_skips_results_and_failures_but_retries_lost_runs(tmp_path):
    store = ResultStore(tmp_path / "s.sqlite")
    runs = [make_run("cn", "g", seed, {}) for seed in range(4)]
    config = runs[0].config_dict
    store.append(_result(0, **config))
    store.append_error("cn", "g", 1, config, "tb", error_type="graphpriv.errors.DatasetError", message="no g")
    store.append_error("cn", "g", 2, config, "tb", error_type="KilledWorker", message="died", lost=True)
    todo, skipped, failed = split_runs(runs, store)
    assert [r.seed for r in todo] == [2, 3] and (skipped, failed) == (1, 1)
    assert [r.seed for r in pending_runs(runs, store, retry_failed=True)] == [1, 2, 3]


def test_a_file_that_is_not_sqlite_is_a_store_error(tmp_path):
    path = tmp_path / "garbage.sqlite"
    path.write_bytes(b"\x89PNG not a database " * 300)
    for open_store in (ResultStore, ResultStore.open_existing):
        with pytest.raises(StoreError) as excinfo:
            open_store(path)
        assert "not a readable graphpriv results store" in _one_line_store_error(excinfo, path)


def test_foreign_sqlite_databases_are_refused(tmp_path):
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE people (name TEXT)")
    with pytest.raises(StoreError) as excinfo:
        ResultStore(other)
    assert "not a graphpriv results store" in _one_line_store_error(excinfo, other)
    with sqlite3.connect(other) as db:  # untouched
        assert {r[0] for r in db.execute("SELECT name FROM sqlite_master")} == {"people"}
    lookalike = tmp_path / "runs.sqlite"
    with sqlite3.connect(lookalike) as db:
        db.execute("CREATE TABLE runs (id INTEGER, name TEXT)")
    with pytest.raises(StoreError) as excinfo:
        ResultStore.open_existing(lookalike)
    assert "without graphpriv's columns" in _one_line_store_error(excinfo, lookalike)


def test_a_store_from_a_newer_graphpriv_is_refused(tmp_path):
    path = tmp_path / "future.sqlite"
    ResultStore(path).append(_result())
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError) as excinfo:
        ResultStore.open_existing(path)
    assert "schema version 99" in _one_line_store_error(excinfo, path) and "upgrade graphpriv" in str(excinfo.value)


def test_unwritable_and_missing_paths(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    path = blocker / "sub" / "s.sqlite"  # a parent is a regular file: fails for root too
    with pytest.raises(StoreError) as excinfo:
        ResultStore(path)
    assert "is a file, not a folder" in _one_line_store_error(excinfo, path)
    with pytest.raises(StoreError, match="is a folder"):
        ResultStore(tmp_path)
    typo = tmp_path / "no" / "such" / "results.sqlte"
    with pytest.raises(StoreError) as excinfo:
        ResultStore.open_existing(typo)
    assert "no results store at" in _one_line_store_error(excinfo, typo) and "--store" in str(excinfo.value)
    assert not (tmp_path / "no").exists()  # nothing created at a mistyped path


def test_a_locked_store_fails_fast_with_a_store_error(tmp_path):
    path = tmp_path / "s.sqlite"
    store = ResultStore(path, timeout=0.1)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        start = time.monotonic()
        with pytest.raises(StoreError) as excinfo:
            ResultStore(path, timeout=0.1)  # opening validates, so a writer fails before any work
        assert "locked by another process" in _one_line_store_error(excinfo, path)
        with pytest.raises(StoreError, match="locked"):
            store.append(_result())
        with pytest.raises(StoreError, match="locked"):
            store.results()
        assert time.monotonic() - start < 10
    finally:
        holder.rollback()
        holder.close()
    assert store.append(_result()) > 0


def test_seeds_beyond_sqlite_integers_are_store_errors(tmp_path):
    store = ResultStore(tmp_path / "s.sqlite")
    with pytest.raises(StoreError, match=r"does not fit .*2\*\*32-1"):
        store.append(_result(seed=2**63))
    with pytest.raises(StoreError, match="does not fit"):
        store.append_error("cn", "g", -(2**63) - 1, {}, "boom")
    with pytest.raises(StoreError, match="does not fit"):
        store.find("cn", "g", 2**64, {})
    assert store.append(_result(seed=2**63 - 1)) > 0  # the largest SQLite INTEGER is fine


def test_invalid_rows_are_named_or_skipped(tmp_path):
    store = ResultStore(tmp_path / "s.sqlite")
    store.append(_result(0))
    bad = store.append(_result(1))
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE runs SET result = ? WHERE id = ?", ('{"method": "cn", "seed": "x"}', bad))
    with pytest.raises(StoreError, match=f"row {bad} of results store"):
        store.results()
    skipped = []
    assert [r.seed for r in store.results(bad_rows=skipped)] == [0]
    assert skipped[0][0] == bad and "\n" not in skipped[0][1]
    assert store.find("cn", "g", 1, {}) is None  # a sweep runs the cell again and replaces the row
    store.append(_result(1))
    assert len(store.results()) == 2
