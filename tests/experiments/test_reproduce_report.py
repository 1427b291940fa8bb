"""graphpriv reproduce (a table on a local cluster, into docs) and graphpriv report (plots, summary)."""

import pytest
import torch

from graphpriv.errors import ConfigError
from graphpriv.experiments import tables
from graphpriv.experiments.report import write_report
from graphpriv.experiments.reproduce import reproduce, update_block
from graphpriv.experiments.store import ResultStore
from graphpriv.experiments.sweep import execute_run, make_run
from graphpriv.methods.base import Result
from graphpriv.testing.graphs import labelled_sbm


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("rep") / "sbm.pt"
    torch.save(labelled_sbm(200, 3, seed=2), path)
    return str(path)


def test_reproduce_runs_a_table_and_rewrites_its_block(tmp_path, graph_file, monkeypatch):
    spec = tables.TableSpec("toy", "Toy table", (graph_file,),
                            (tables.Row("MLP", "mlp", {"epochs": 3}, paper={graph_file: 50.0}),
                             tables.Row("DP-MLP eps 4", "dp-mlp", {"epochs": 3, "epsilon": 4.0})),
                            "no paper", metric="accuracy")
    monkeypatch.setitem(tables.TABLES, "toy", spec)
    store, docs = tmp_path / "s.sqlite", tmp_path / "docs"
    out, counts = reproduce("toy", seeds=2, store=store, workers=1, docs=docs)
    assert counts == {"total": 4, "skipped": 0, "ok": 4, "error": 0}
    text = out.read_text()
    assert "| MLP |" in text and "| 50.00 |" in text and "| DP-MLP eps 4 |" in text
    doc = (docs / "reproduction.md").read_text()
    assert doc.count("graphpriv reproduce toy: generated") == 1
    _, again = reproduce("toy", seeds=2, store=store, workers=1, docs=docs)
    assert again["skipped"] == 4 and again["ok"] == 0
    assert (docs / "reproduction.md").read_text().count("graphpriv reproduce toy: generated") == 1
    rendered, nothing = reproduce("toy", seeds=3, store=store, docs=docs, run=False)
    assert nothing["ok"] == 0 and "--from-store" in rendered.read_text() and "| 2 |" in rendered.read_text()
    quick, _ = reproduce("toy", quick=True, store=store, workers=1, docs=docs)
    assert quick.parent.name == "quick" and "--quick" in quick.read_text()
    with pytest.raises(ConfigError, match="unknown table"):
        reproduce("no-such-table", store=store, docs=docs)
    from graphpriv.experiments.reproduce import ALIASES

    assert all(target in tables.TABLES for target in ALIASES.values())


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
    files = write_report(store.path, tmp_path / "report")
    names = {p.name for p in files}
    assert {"sbm_accuracy_epsilon.png", "sbm_accuracy_epsilon.svg", "sbm_attack_utility.png",
            "sbm_attack_utility.svg", "summary.md"} <= names
    summary = (tmp_path / "report" / "summary.md").read_text()
    assert "| dp-mlp | epochs=2 | rigorous | 1 | accuracy |" in summary
    assert "| random-perturb | ratio=0.3 | non-private | - | lp_auc |" in summary
    with pytest.raises(ValueError, match="no successful result"):
        write_report(tmp_path / "empty.sqlite", tmp_path / "r2")
