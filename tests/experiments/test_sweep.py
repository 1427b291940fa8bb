"""Sweeps on Dask: validation before running, a 2-worker LocalCluster grid, kill and restart."""

import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest
import torch
import yaml
from typer.testing import CliRunner

from graphpriv.cli import app
from graphpriv.errors import ConfigError
from graphpriv.experiments.store import ResultStore
from graphpriv.experiments.sweep import SweepSpec, check_sweep, expand, load_sweep, run_sweep
from graphpriv.testing.graphs import labelled_sbm

runner = CliRunner()


def _plain(data):
    """Tensors only: what a graph file may hold (graphpriv never unpickles other objects)."""
    from torch_geometric.data import Data

    return Data(edge_index=data.edge_index, x=data.x, y=data.y, num_nodes=data.num_nodes)


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("sweep") / "sbm.pt"
    torch.save(_plain(labelled_sbm(200, 3, seed=1)), path)
    return str(path)


def _ok_keys(store):
    import sqlite3

    with sqlite3.connect(store) as db:
        return db.execute("SELECT method, dataset, seed, config_hash FROM runs WHERE status = 'ok'").fetchall()


def test_bad_grids_fail_before_anything_runs(tmp_path):
    with pytest.raises(ConfigError, match="unknown method 'dpar-xx'"):
        expand(SweepSpec(methods=["dpar-xx"], datasets=["cora"]))
    with pytest.raises(ConfigError, match="unknown setting.*thetta"):
        expand(SweepSpec(methods=["dp-mlp"], datasets=["cora"], overrides=[{"thetta": 3}]))
    with pytest.raises(ConfigError, match="not in the sweep"):
        expand(SweepSpec(methods=["mlp"], datasets=["cora"], method_overrides={"dp-mlp": {"epochs": 1}}))
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"methods": ["mlp"], "datasets": ["cora"], "epsilon": [1]}))
    with pytest.raises(ConfigError, match="epsilon"):
        load_sweep(bad)
    bad.write_text(yaml.safe_dump({"methods": ["mlp"], "datasets": ["cora"], "epsilons": [0]}))
    with pytest.raises(ConfigError, match="epsilon must be > 0"):
        load_sweep(bad)


def test_check_sweep_names_every_cell_that_would_fail(tmp_path, graph_file, monkeypatch):
    import graphpriv.data

    loads = []
    real_load = graphpriv.data.load
    monkeypatch.setattr(graphpriv.data, "load", lambda name: loads.append(name) or real_load(name))
    missing = str(tmp_path / "missing.pt")
    spec = SweepSpec(methods=["mlp", "nope"], datasets=[graph_file, missing], seeds=[0, 2**32, -1],
                     overrides=[{"epochs": 1}])
    check = check_sweep(spec)
    assert [(r.method, r.dataset, r.seed) for r in check.runs] == [("mlp", graph_file, 0)]
    reasons = {(p.method, p.dataset, p.seed): p.reason for p in check.problems}
    assert len(reasons) == 2 * 2 * 3 - 1
    assert "missing.pt" in reasons[("mlp", missing, 0)]
    assert "seed must be an integer in [0, 4294967295] (got 4294967296)" in reasons[("mlp", graph_file, 2**32)]
    assert "unknown method 'nope'" in reasons[("nope", graph_file, 0)]
    assert all("\n" not in reason for reason in reasons.values())
    assert sorted(loads) == sorted([graph_file, missing])  # each dataset loaded once
    assert len(check_sweep(spec, load_datasets=False).runs) == 2  # no loading: the missing file is not seen
    with pytest.raises(ConfigError, match="seed must be an integer"):
        expand(spec.model_copy(update={"methods": ["mlp"]}))
    huge = tmp_path / "huge.yaml"
    huge.write_text(yaml.safe_dump({"methods": ["mlp"], "datasets": ["g"], "seeds": 10**9}))
    with pytest.raises(ConfigError, match=r"invalid sweep file .*seeds: .*must be in \[1, 100000\]") as excinfo:
        load_sweep(huge)
    assert "\n" not in str(excinfo.value)


def test_sweep_dry_run_lists_failing_cells_and_exits_non_zero(tmp_path, graph_file):
    store = tmp_path / "store" / "s.sqlite"
    sweep_file = tmp_path / "s.yaml"
    sweep_file.write_text(yaml.safe_dump({
        "methods": ["mlp"], "datasets": [graph_file, str(tmp_path / "missing.pt")], "seeds": [0, 4294967296],
        "overrides": [{"epochs": 1}], "store": str(store)}))
    res = runner.invoke(app, ["sweep", str(sweep_file), "--dry-run"])
    assert res.exit_code == 1, res.output
    lines = [line for line in res.output.splitlines() if line.startswith("would fail:")]
    assert len(lines) == 3 and "3 would fail" in res.output
    assert any(f"mlp on {tmp_path / 'missing.pt'}, seed 0 (epochs=1):" in line and "missing.pt" in line
               for line in lines)
    assert any(f"mlp on {graph_file}, seed 4294967296 (epochs=1): seed must be an integer" in line for line in lines)
    assert not store.parent.exists()  # a dry run creates nothing
    res = runner.invoke(app, ["sweep", str(sweep_file)])  # the real sweep refuses the bad seed before running
    assert res.exit_code == 2 and "invalid:" in res.output and "nothing ran" in res.output
    assert not store.parent.exists()
    sweep_file.write_text(yaml.safe_dump({"methods": ["mlp"], "datasets": [graph_file], "seeds": 2,
                                          "overrides": [{"epochs": 1}], "store": str(store)}))
    res = runner.invoke(app, ["sweep", str(sweep_file), "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "2 runs, 0 would fail" in res.output and "2 to run" in res.output
    blocked = tmp_path / "a-file"
    blocked.write_text("x")
    sweep_file.write_text(yaml.safe_dump({"methods": ["mlp"], "datasets": [graph_file], "store": str(blocked / "s")}))
    res = runner.invoke(app, ["sweep", str(sweep_file), "--dry-run"])
    assert res.exit_code == 1 and "store: cannot create results store" in res.output


def test_failed_runs_exit_non_zero_are_recorded_once_and_retried_on_request(tmp_path, graph_file):
    import shutil
    import sqlite3

    store = tmp_path / "f.sqlite"
    later = tmp_path / "later.pt"  # missing for now: every run fails (bad input)
    sweep_file = tmp_path / "f.yaml"
    sweep_file.write_text(yaml.safe_dump({"methods": ["mlp"], "datasets": [str(later)], "seeds": 2,
                                          "overrides": [{"epochs": 1}], "store": str(store)}))

    def rows():
        with sqlite3.connect(store) as db:
            return db.execute("SELECT id, seed, status, error_type, bad_input FROM runs ORDER BY id").fetchall()

    res = runner.invoke(app, ["sweep", str(sweep_file), "--workers", "1"])
    assert res.exit_code == 1, res.output
    assert "2 of 2 runs failed" in res.output and "later.pt does not exist" in res.output
    first = rows()
    assert sorted(seed for _, seed, _, _, _ in first) == [0, 1]
    assert all(status == "error" and kind.startswith("graphpriv.errors.") and bad == 1
               for _, _, status, kind, bad in first)  # a graphpriv error: bad input
    for _ in range(2):  # two resumes: nothing runs, nothing is recorded again, still a failure
        res = runner.invoke(app, ["sweep", str(sweep_file), "--workers", "1"])
        assert res.exit_code == 1 and "2 failed before (not retried)" in res.output and "0 to run" in res.output
        assert rows() == first
    shutil.copy(graph_file, later)  # the input is fixed
    res = runner.invoke(app, ["sweep", str(sweep_file), "--workers", "1", "--retry-failed"])
    assert res.exit_code == 0, res.output
    assert [status for _, _, status, _, _ in rows()] == ["ok", "ok"] and ResultStore(store).count() == 2


def test_grid_expansion_crosses_epsilon_only_for_private_methods():
    spec = SweepSpec(methods=["mlp", "dp-mlp"], datasets=["a", "b"], epsilons=[1, 4], seeds=3,
                     overrides=[{"epochs": 1}, {"epochs": 2}])
    runs = expand(spec)
    count = Counter(r.method for r in runs)
    assert count == {"mlp": 2 * 2 * 3, "dp-mlp": 2 * 2 * 2 * 3}
    assert {r.config_dict["epsilon"] for r in runs if r.method == "dp-mlp"} == {1.0, 4.0}


def test_two_worker_local_cluster_sweep_commits_every_run_and_skips_them_on_rerun(tmp_path, graph_file):
    store = tmp_path / "s.sqlite"
    spec = SweepSpec(methods=["mlp", "dp-mlp"], datasets=[graph_file, str(tmp_path / "missing.pt")],
                     epsilons=[1.0, 4.0], seeds=2, overrides=[{"epochs": 2}], store=str(store))
    seen = []
    counts = run_sweep(spec, workers=2, on_done=lambda run, status, done, total: seen.append((status, done, total)))
    # 6 runs per dataset (mlp x 2 seeds, dp-mlp x 2 epsilons x 2 seeds); the missing file raises
    assert counts == {"total": 12, "skipped": 0, "failed_before": 0, "ok": 6, "error": 6}
    assert [d for _, d, _ in seen] == list(range(1, 13))
    results = ResultStore(store).results()
    assert len(results) == 6 and all(r.dataset == graph_file for r in results)
    assert {r.privacy.target_epsilon for r in results if r.privacy} == {1.0, 4.0}
    assert ResultStore(store).count() == 12  # the errors are recorded too
    again = run_sweep(spec, workers=2)  # the failures were deterministic: not run again
    assert again == {"total": 12, "skipped": 6, "failed_before": 6, "ok": 0, "error": 0}
    assert len(_ok_keys(store)) == 6 and ResultStore(store).count() == 12
    failures = ResultStore(store).failures()
    assert all(f.error_type.startswith("graphpriv.errors.") and f.bad_input for f in failures)


def test_killed_worker_and_killed_sweep_lose_and_repeat_nothing(tmp_path, graph_file):
    import psutil

    store = tmp_path / "k.sqlite"
    sweep_file = tmp_path / "k.yaml"
    sweep_file.write_text(yaml.safe_dump({
        "methods": ["dp-mlp"], "datasets": [graph_file], "epsilons": [1.0, 2.0, 4.0, 8.0], "seeds": 4,
        "overrides": [{"epochs": 25}], "store": str(store)}))
    cmd = [sys.executable, "-m", "graphpriv.cli", "sweep", str(sweep_file), "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    killed_worker = False
    try:
        deadline = time.time() + 240
        while time.time() < deadline and len(_ok_keys(store) if store.exists() else []) < 6:
            if not killed_worker and store.exists() and len(_ok_keys(store)) >= 2:
                workers = [p for p in psutil.Process(proc.pid).children(recursive=True)
                           if "dask" in " ".join(p.cmdline()) or "spawn" in " ".join(p.cmdline())]
                if workers:
                    workers[-1].kill()  # a worker process dies mid-sweep: its task is rescheduled
                    killed_worker = True
            time.sleep(0.2)
        assert killed_worker
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole sweep dies mid-way
        proc.wait()
    finished = _ok_keys(store)
    assert 6 <= len(finished) < 16
    counts = run_sweep(load_sweep(sweep_file), workers=2)
    assert counts["skipped"] == len(finished) and counts["ok"] == 16 - len(finished)
    keys = _ok_keys(store)
    assert len(keys) == 16 and len(set(keys)) == 16  # nothing lost, nothing stored twice


@pytest.mark.parametrize("verbose", [False, True])
def test_dask_info_logs_only_with_verbose(tmp_path, graph_file, verbose):
    """A sweep's bar says what happens; Dask's INFO lines (scheduler start, connections) only with
    --verbose. The sweep runs in a subprocess, so its stderr is what a user's terminal shows."""
    sweep_file = tmp_path / "v.yaml"
    sweep_file.write_text(yaml.safe_dump({"methods": ["cn"], "datasets": [graph_file], "seeds": 1,
                                          "store": str(tmp_path / "v.sqlite")}))
    args = [sys.executable, "-m", "graphpriv.cli", "sweep", str(sweep_file), "--workers", "1"]
    out = subprocess.run(args + (["--verbose"] if verbose else []), capture_output=True, text=True, timeout=300,
                         check=False, env={**os.environ, "COLUMNS": "200"})
    assert out.returncode == 0, out.stderr[-2000:]
    info = [line for line in (out.stdout + out.stderr).splitlines() if "INFO" in line and "distributed" in line
            or "Scheduler at" in line]
    assert bool(info) == verbose, info[:5]
