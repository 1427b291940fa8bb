"""graphpriv reproduce (a table on a local cluster, into docs) and graphpriv report (plots, summary)."""

import sqlite3

import pytest
import torch
from typer.testing import CliRunner

from graphpriv.cli import app
from graphpriv.errors import ConfigError, StoreError
from graphpriv.experiments.grid import GridRow, RunsGrid
from graphpriv.experiments.report import plot_names, write_report
from graphpriv.experiments.reproduce import reproduce, update_block
from graphpriv.experiments.store import ResultStore
from graphpriv.experiments.sweep import execute_run, make_run
from graphpriv.methods.base import Result
from graphpriv.privacy.report import PrivacyReport
from graphpriv.testing.graphs import labelled_sbm

runner = CliRunner()


def _plain(data):
    """Tensors only: what a graph file may hold (graphpriv never unpickles other objects)."""
    from torch_geometric.data import Data

    return Data(edge_index=data.edge_index, x=data.x, y=data.y, num_nodes=data.num_nodes)


@pytest.fixture(autouse=True)
def threaded_cluster(monkeypatch):
    """Tables run on an in-process Dask cluster (worker threads): the same futures, commits and
    counts as worker processes (test_sweep.py runs and kills those) without starting a process and
    importing torch in it per table."""
    import dask.distributed

    local_cluster = dask.distributed.LocalCluster
    monkeypatch.setattr(dask.distributed, "LocalCluster",
                        lambda *args, **kwargs: local_cluster(*args, **{**kwargs, "processes": False}))


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("rep") / "sbm.pt"
    torch.save(_plain(labelled_sbm(200, 3, seed=2)), path)
    return str(path)


def _toy(graph_file):
    return RunsGrid(name="toy", title="Toy table", source="no paper", datasets=[graph_file], metric="accuracy",
                    rows=[GridRow(label="MLP", method="mlp", settings={"epochs": 3}, paper={graph_file: 50.0}),
                          GridRow(label="DP-MLP eps 4", method="dp-mlp", settings={"epochs": 3, "epsilon": 4.0})])


def test_reproduce_runs_a_table_writes_its_results_and_renders_them_again(tmp_path, graph_file):
    grid = _toy(graph_file)
    store, docs = tmp_path / "s.sqlite", tmp_path / "docs"
    (docs).mkdir()
    (docs / "reproduction.md").write_text("# R\n\n<!-- graphpriv reproduce toy: generated, do not edit -->\nold\n"
                                          "<!-- end toy -->\n")
    out, counts = reproduce(grid, seeds=2, store=store, workers=1, docs=docs)
    assert counts == {"total": 4, "skipped": 0, "failed_before": 0, "ok": 4, "error": 0}
    text = out.read_text()
    assert "| MLP |" in text and "| 50.00 |" in text and "| DP-MLP eps 4 |" in text
    assert "graphpriv reproduce toy --seeds 2" in text
    doc = (docs / "reproduction.md").read_text()
    assert doc.count("graphpriv reproduce toy: generated") == 1 and "old" not in doc and "| MLP |" in doc
    results = (docs / "results" / "toy.csv").read_text()
    assert results.count("\n") == 4 + 5  # 4 comment lines, a header, 4 runs
    # rendered again from the CSV alone, with the store gone: the same bytes
    store.unlink()
    again, read = reproduce(grid, from_results=True, docs=docs)
    assert again.read_text() == text and read == {"total": 4, "ok": 0}
    _, ran = reproduce(grid, seeds=2, store=store, workers=1, docs=docs)  # a fresh store: every run again
    assert ran["ok"] == 4
    _, reused = reproduce(grid, seeds=2, store=store, workers=1, docs=docs)
    assert reused["skipped"] == 4 and reused["ok"] == 0
    rendered, nothing = reproduce(grid, seeds=3, store=store, docs=docs, run=False)
    assert nothing["ok"] == 0 and "--from-store" in rendered.read_text() and "| 2 |" in rendered.read_text()
    quick, _ = reproduce(grid, quick=True, store=store, workers=1, docs=docs)
    assert quick.parent.name == "quick" and "--quick" in quick.read_text()
    with pytest.raises(ConfigError, match="unknown table"):
        reproduce("no-such-table", store=store, docs=docs)
    with pytest.raises(ConfigError, match="no results file"):
        reproduce("dplp-table2", from_results=True, docs=tmp_path / "elsewhere")
    with pytest.raises(ConfigError, match="neither --quick nor --from-store"):
        reproduce(grid, from_results=True, quick=True, docs=docs)


def test_reproduce_fills_a_table_one_dataset_at_a_time(tmp_path, graph_file):
    other = tmp_path / "sbm2.pt"
    torch.save(_plain(labelled_sbm(150, 3, seed=5)), other)
    grid = _toy(graph_file).model_copy(update={"datasets": [graph_file, str(other)]})
    store, docs = tmp_path / "s.sqlite", tmp_path / "docs"
    out, counts = reproduce(grid, seeds=1, store=store, workers=1, docs=docs, datasets=[str(other)])
    assert counts["total"] == 2 and counts["ok"] == 2  # the two rows on the named dataset only
    text = out.read_text()
    assert f"| MLP | {other} |" in text and f"| MLP | {graph_file} |" not in text
    assert f"--datasets {other}" in text
    out, counts = reproduce(grid, seeds=1, store=store, workers=1, docs=docs, datasets=[graph_file])
    assert counts["ok"] == 2 and counts["skipped"] == 0
    text = out.read_text()  # every dataset's stored runs
    assert f"| MLP | {other} |" in text and f"| MLP | {graph_file} |" in text
    with pytest.raises(ConfigError, match=r"--datasets: nope not among toy's datasets"):
        reproduce(grid, seeds=1, store=store, workers=1, docs=docs, datasets=["nope"])
    with pytest.raises(ConfigError, match="takes no --datasets"):
        reproduce(grid, from_results=True, docs=docs, datasets=[graph_file])
    with pytest.raises(ConfigError, match="a table of kind 'audit'"):
        reproduce("audit-dplp", store=store, docs=docs, datasets=["usair"])
    cli = runner.invoke(app, ["reproduce", "dplp-table2", "--datasets", "usair, nope", "--store", str(store),
                              "--docs", str(docs)])
    assert cli.exit_code != 0 and "--datasets: nope not among dplp-table2's datasets" in cli.output


def test_update_block_keeps_the_rest_of_the_document(tmp_path):
    doc = tmp_path / "r.md"
    doc.write_text("# R\n\nhand-written\n")
    update_block(doc, "t", "first")
    update_block(doc, "t", "second")
    text = doc.read_text()
    assert "hand-written" in text and "second" in text and "first" not in text


def test_report_writes_curves_scatter_and_summary(tmp_path, graph_file):
    store = ResultStore(tmp_path / "s.sqlite")
    for eps in (1.0, 4.0):
        for seed in (0, 1):
            status, payload = execute_run(make_run("dp-mlp", graph_file, seed, {"epochs": 2, "epsilon": eps}))
            assert status == "ok"
            store.append(Result.model_validate_json(payload))
    for ratio, (lp, attack) in {0.3: (0.9, 0.8), 0.5: (0.8, 0.6)}.items():
        store.append(Result(method="random-perturb", dataset=graph_file, seed=0, config={"ratio": ratio},
                            metrics={"lp_auc": lp, "attack_auc_gae-sim": attack}))
    report = write_report(store.path, tmp_path / "report")
    names = {p.name for p in report.files}
    assert report.results == 6 and report.skipped == []
    assert {"sbm_accuracy_epsilon.png", "sbm_accuracy_epsilon.svg", "sbm_attack_utility.png",
            "sbm_attack_utility.svg", "summary.md"} <= names
    summary = (tmp_path / "report" / "summary.md").read_text()
    assert "| dp-mlp | epochs=2 | rigorous | 1 | accuracy |" in summary
    assert "| random-perturb | ratio=0.3 | non-private | - | lp_auc |" in summary
    with pytest.raises(StoreError, match="no results store at"):
        write_report(tmp_path / "empty.sqlite", tmp_path / "r2")
    assert not (tmp_path / "empty.sqlite").exists() and not (tmp_path / "r2").exists()
    failed = ResultStore(tmp_path / "failed.sqlite")
    failed.append_error("mlp", graph_file, 0, {}, "Traceback\nValueError: boom")
    with pytest.raises(StoreError, match="holds no successful result"):
        write_report(failed.path, tmp_path / "r3")


def _eps_result(dataset, eps, seed=0, acc=0.7):
    privacy = PrivacyReport(unit="edge", relation="r", accounting="rigorous", epsilon=eps, delta=1e-5,
                            target_epsilon=eps)
    return Result(method="dp-mlp", dataset=dataset, seed=seed, config={"epsilon": eps},
                  metrics={"accuracy": acc, "lp_auc": 0.8, "attack_auc_gae-sim": 0.6}, privacy=privacy)


def test_plot_names_are_distinct_for_colliding_datasets():
    names = plot_names(["cora", "/x/g.txt", "/x/g.csv", "a/g.txt", "b/g.txt", "g", "G.txt", "we ird/na me.pt"])
    assert names["cora"] == "cora" and names["g"] == "g" and names["we ird/na me.pt"] == "na_me"
    assert len({n.lower() for n in names.values()}) == len(names)
    assert all(n.startswith("g-") and len(n) == 10 for d, n in names.items() if d not in ("cora", "g", "we ird/na me.pt")
               and d != "G.txt") and names["G.txt"].startswith("G-")
    assert plot_names(["/x/g.txt"]) == {"/x/g.txt": "g"}  # no collision: no hash
    assert plot_names(["a/g.txt", "b/g.txt"]) == plot_names(["b/g.txt", "a/g.txt"])  # stable


def test_report_writes_one_file_per_plot_and_counts_what_is_on_disk(tmp_path):
    store = ResultStore(tmp_path / "s.sqlite")
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
    datasets = [str(tmp_path / "g.txt"), str(tmp_path / "g.csv"), str(tmp_path / "a" / "g.txt"),
                str(tmp_path / "b" / "g.txt"), "g"]
    for dataset in datasets:
        for eps in (1.0, 4.0):
            store.append(_eps_result(dataset, eps))
    out = tmp_path / "report"
    report = write_report(store.path, out)
    on_disk = sorted(p.name for p in out.iterdir())
    assert len(report.files) == len(set(report.files)) == len(on_disk) == 5 * 4 + 1
    assert sorted(p.name for p in report.files) == on_disk and "g_accuracy_epsilon.png" in on_disk
    summary = (out / "summary.md").read_text()
    assert all(f"## {d}" in summary for d in datasets)
    res = runner.invoke(app, ["report", "--store", str(store.path), "--out", str(tmp_path / "cli")])
    assert res.exit_code == 0, res.output
    assert f"wrote {len(list((tmp_path / 'cli').iterdir()))} files" in res.output


def test_report_names_and_skips_bad_rows_and_refuses_bad_stores(tmp_path):
    store = ResultStore(tmp_path / "s.sqlite")
    store.append(_eps_result("g", 1.0))
    bad = store.append(_eps_result("g", 4.0))
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE runs SET result = '{\"method\": \"dp-mlp\"' WHERE id = ?", (bad,))  # cut JSON
    report = write_report(store.path, tmp_path / "r")
    assert report.results == 1 and [row for row, _ in report.skipped] == [bad]
    assert f"skipped row {bad}:" in (tmp_path / "r" / "summary.md").read_text()
    res = runner.invoke(app, ["report", "--store", str(store.path), "--out", str(tmp_path / "cli")])
    assert res.exit_code == 0, res.output
    assert f"skipped row {bad}:" in res.output and "(1 rows skipped)" in res.output
    typo = tmp_path / "runs" / "resluts.sqlite"
    res = runner.invoke(app, ["report", "--store", str(typo), "--out", str(tmp_path / "r2")])
    assert res.exit_code == 2 and "no results store at" in res.output and "check --store" in res.output
    assert not typo.exists() and not typo.parent.exists() and not (tmp_path / "r2").exists()
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"definitely not sqlite" * 100)
    res = runner.invoke(app, ["report", "--store", str(garbage), "--out", str(tmp_path / "r3")])
    assert res.exit_code == 2 and "not a readable graphpriv results store" in res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1
