"""Store archives: export, import and merge of results stores (``graphpriv store``)."""

import gzip
import json

import pytest
from typer.testing import CliRunner

from graphpriv.cli import app
from graphpriv.errors import StoreError
from graphpriv.experiments.store import ResultStore
from graphpriv.experiments.store_archive import export_store, import_archives, read_archive
from graphpriv.methods.base import Result
from graphpriv.privacy.report import PrivacyReport

runner = CliRunner()


def _result(seed=0, auc=0.8, eps=1.0):
    report = PrivacyReport(unit="edge", relation="r", accounting="rigorous", epsilon=eps, delta=1e-5)
    return Result(method="dplp-ps", dataset="g", seed=seed, config={"epsilon": eps}, metrics={"test_auc": auc},
                  privacy=report)


def _cells(store):
    return sorted((r.seed, r.metrics["test_auc"]) for r in store.results())


def test_export_import_round_trip_keeps_every_column(tmp_path):
    src = ResultStore(tmp_path / "a.sqlite")
    for seed in range(3):
        src.append(_result(seed=seed, auc=0.7 + seed / 10))
    src.append_error("dplp-ps", "g", 9, {"epsilon": 1.0}, "Traceback ...\ngraphpriv.errors.ConfigError: bad k")
    src.append_error("dplp-ps", "g", 8, {"epsilon": 1.0}, "KilledWorker: gone", lost=True)
    assert export_store(src, tmp_path / "a.jsonl.gz") == 4  # the lost run is not exported
    dst = ResultStore(tmp_path / "b.sqlite")
    assert import_archives(dst, [tmp_path / "a.jsonl.gz"]) == {"added": 4, "replaced": 0, "kept": 0}
    assert list(dst.rows()) == list(src.rows())  # created times, results and failures, as they were
    assert import_archives(dst, [tmp_path / "a.jsonl.gz"]) == {"added": 0, "replaced": 0, "kept": 4}
    assert dst.count() == 4


def test_the_newer_run_of_a_cell_wins_and_a_failure_never_replaces_a_result(tmp_path):
    old = ResultStore(tmp_path / "old.sqlite")
    old.append(_result(seed=0, auc=0.6))
    old.append(_result(seed=1, auc=0.6))
    export_store(old, tmp_path / "old.jsonl.gz")
    new = ResultStore(tmp_path / "new.sqlite")
    new.append(_result(seed=0, auc=0.9))  # written after old's rows
    new.append_error("dplp-ps", "g", 1, {"epsilon": 1.0}, "RuntimeError: boom")
    export_store(new, tmp_path / "new.jsonl.gz")
    for order in ([tmp_path / "old.jsonl.gz", tmp_path / "new.jsonl.gz"],
                  [tmp_path / "new.jsonl.gz", tmp_path / "old.jsonl.gz"]):
        store = ResultStore(tmp_path / f"m{len(list(tmp_path.iterdir()))}.sqlite")
        import_archives(store, order)
        assert _cells(store) == [(0, 0.9), (1, 0.6)]
        assert store.failures() == []
    # the replaced row is kept, in superseded
    store = ResultStore(tmp_path / "s.sqlite")
    import_archives(store, [tmp_path / "old.jsonl.gz"])
    assert import_archives(store, [tmp_path / "new.jsonl.gz"]) == {"added": 0, "replaced": 1, "kept": 1}
    with store._db("read") as db:
        assert db.execute("SELECT COUNT(*) FROM superseded").fetchone()[0] == 1


def test_skip_exports_only_what_is_new(tmp_path):
    store = ResultStore(tmp_path / "a.sqlite")
    store.append(_result(seed=0))
    assert export_store(store, tmp_path / "p1.jsonl.gz") == 1
    store.append(_result(seed=1))
    store.append(_result(seed=0, auc=0.5))  # a rerun of a cell already exported: new
    assert export_store(store, tmp_path / "p2.jsonl.gz", skip=[tmp_path / "p1.jsonl.gz"]) == 2
    assert export_store(store, tmp_path / "p3.jsonl.gz", skip=[tmp_path / "p1.jsonl.gz", tmp_path / "p2.jsonl.gz"]) == 0
    merged = ResultStore(tmp_path / "b.sqlite")
    import_archives(merged, [tmp_path / f"p{i}.jsonl.gz" for i in (1, 2, 3)])
    assert _cells(merged) == _cells(store) == [(0, 0.5), (1, 0.8)]


def test_bad_archives_fail_before_any_row_is_merged(tmp_path):
    good = ResultStore(tmp_path / "a.sqlite")
    good.append(_result())
    export_store(good, tmp_path / "good.jsonl.gz")
    with pytest.raises(StoreError, match="exists; give a new file name, or --overwrite"):
        export_store(good, tmp_path / "good.jsonl.gz")
    with gzip.open(tmp_path / "good.jsonl.gz", "rt") as f:
        lines = f.read().splitlines()
    cases = {
        "truncated": (lines[:1], "holds 0 rows but its header announces 1"),
        "headerless": (lines[1:], "no graphpriv store archive header"),
        "newer": ([json.dumps({"graphpriv_store_archive": 2, "schema": 2, "rows": 1}), lines[1]], "newer graphpriv"),
        "columns": ([lines[0], json.dumps({"method": "x"})], "line 2 .* not a stored row .*missing created"),
        "notjson": ([lines[0], "{oops"], "line 2 of store archive .* is not JSON"),
    }
    store = ResultStore(tmp_path / "b.sqlite")
    for name, (content, message) in cases.items():
        path = tmp_path / f"{name}.jsonl.gz"
        with gzip.open(path, "wt") as fh:
            fh.write("\n".join(content) + "\n")
        with pytest.raises(StoreError, match=message):
            import_archives(store, [tmp_path / "good.jsonl.gz", path])
        assert store.count() == 0
    (tmp_path / "plain.txt").write_text("not gzip")
    with pytest.raises(StoreError, match="not a gzipped text file"):
        read_archive(tmp_path / "plain.txt")
    with pytest.raises(StoreError, match="no store archive at"):
        read_archive(tmp_path / "missing.jsonl.gz")


def test_cli_export_and_import(tmp_path):
    src = ResultStore(tmp_path / "a.sqlite")
    src.append(_result(seed=3))
    out = runner.invoke(app, ["store", "export", str(tmp_path / "x.jsonl.gz"), "--store", str(tmp_path / "a.sqlite")])
    assert out.exit_code == 0, out.output
    assert "wrote 1 run(s)" in out.output
    out = runner.invoke(app, ["store", "import", str(tmp_path / "x.jsonl.gz"), "--store", str(tmp_path / "b.sqlite")])
    assert out.exit_code == 0, out.output
    assert "1 run(s) added, 0 replaced" in out.output
    assert _cells(ResultStore(tmp_path / "b.sqlite")) == [(3, 0.8)]
    out = runner.invoke(app, ["store", "export", str(tmp_path / "y.jsonl.gz"), "--store", str(tmp_path / "none.sqlite")])
    assert out.exit_code == 2
    assert "no results store at" in out.output
    assert not (tmp_path / "none.sqlite").exists()
