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

from graphpriv.errors import ConfigError
from graphpriv.experiments.store import ResultStore
from graphpriv.experiments.sweep import SweepSpec, expand, load_sweep, run_sweep
from graphpriv.testing.graphs import labelled_sbm


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("sweep") / "sbm.pt"
    torch.save(labelled_sbm(200, 3, seed=1), path)
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
    assert counts == {"total": 12, "skipped": 0, "ok": 6, "error": 6}
    assert [d for _, d, _ in seen] == list(range(1, 13))
    results = ResultStore(store).results()
    assert len(results) == 6 and all(r.dataset == graph_file for r in results)
    assert {r.privacy.target_epsilon for r in results if r.privacy} == {1.0, 4.0}
    assert ResultStore(store).count() == 12  # the errors are recorded too
    again = run_sweep(spec, workers=2)
    assert again["skipped"] == 6 and again["ok"] == 0 and again["error"] == 6  # errors are retried
    assert len(_ok_keys(store)) == 6


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
