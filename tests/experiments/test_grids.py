"""Tables as data: the grid files, their schema, presets, and the reproduce front door for audits and
PPGSL's Table I (runs tables: tests/experiments/test_reproduce_report.py)."""

from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from graphpriv.cli import app
from graphpriv.errors import ConfigError
from graphpriv.experiments import grid as grid_module
from graphpriv.experiments.grid import AuditGrid, AuditRow, ProximityGrid, grid_names, load_grid, read_grid
from graphpriv.experiments.registry import PRESETS, make_config, preset_settings
from graphpriv.experiments.reproduce import ALIASES, reproduce
from graphpriv.testing.graphs import labelled_sbm

runner = CliRunner()


def test_every_grid_file_loads_and_every_cell_has_a_valid_config():
    names = grid_names()
    assert {"dplp-table2", "dpar-table1", "audit", "audit-rank", "ppgsl-table1", "dplp-usair-selection"} <= set(names)
    for name in names:
        grid = load_grid(name)
        assert grid.name == name and grid.source
        for row in getattr(grid, "rows", []):
            for dataset in getattr(row, "datasets", None) or grid.datasets:
                make_config(row.method, row.settings_for(dataset))
    assert all(target in names for target in ALIASES.values())


def test_the_dplp_and_dpar_presets_are_the_papers_settings():
    dplp = PRESETS["dplp-ps"]["paper"]
    assert [dplp.for_dataset(d) for d in ("yeast", "usair", "celegans", "pb")] == [
        {"k": 4}, {"k": 2}, {"k": 2}, {"k": 2, "batch_size": 1024, "lr": 0.1}]
    # DPLP-NS: h = floor((k + 1) / 2) hops, so 2 on Yeast (k = 4) and 1 elsewhere
    assert preset_settings("dplp-ns", "paper", "yeast") == {"h": 2}
    assert preset_settings("dplp-ns", "paper", "pb") == {"h": 1, "batch_size": 1024, "lr": 0.1}
    assert preset_settings("dpar-gm", "one-row", "cora") == {"node_rate": 1.0, "max_rows": 1, "appr_share": 0.1}
    assert preset_settings("dpar-gm", None, "cora") == {}
    # DPAR's defaults are the one-row setting; 'paper' gives back the paper's (and the old defaults' hash)
    default, paper = make_config("dpar-gm", {}), make_config("dpar-gm", preset_settings("dpar-gm", "paper", "cora"))
    assert (default.node_rate, default.max_rows, default.appr_share) == (1.0, 1, 0.1)
    assert (paper.node_rate, paper.max_rows, paper.appr_share) == (0.09, None, 0.5)
    nodp = make_config("dpar-nodp", preset_settings("dpar-nodp", "paper", "cora"))
    assert (nodp.node_rate, nodp.seeds, nodp.max_rows, nodp.private) == (1.0, None, None, False)
    for name in ("dpar-table1", "dpar-k", "dpar-split", "dpar-lastfm"):  # every paper row names its setting
        assert all(row.preset in ("paper", "one-row") for row in load_grid(name).rows if row.method.startswith("dpar"))
    with pytest.raises(ConfigError, match="cn has no preset 'paper'; its presets: none"):
        preset_settings("cn", "paper", "usair")
    row = load_grid("dplp-table2").rows[4]
    assert row.label == "DPLP-PS (GCN)" and row.preset == "paper"
    assert row.settings_for("pb") == {"k": 2, "batch_size": 1024, "lr": 0.1, "epsilon": 4.0}


def _write(tmp_path, name, text):
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


GOOD = "name: t\ntitle: T\nsource: S\ndatasets: [usair]\nrows:\n  - {label: CN, method: cn}\n"


@pytest.mark.parametrize("text, message", [
    (GOOD.replace("name: t\n", "name: t\ncolour: red\n"), "colour"),
    (GOOD.replace("name: t\n", "name: other\n"), "is named 'other'"),
    (GOOD.replace("method: cn", "method: nope"), "row 'CN': unknown method 'nope'"),
    (GOOD.replace("method: cn}", "method: cn, preset: paper}"), "row 'CN': cn has no preset 'paper'"),
    (GOOD.replace("method: cn}", "method: cn, settings: {k: 3}}"), "row 'CN': unknown setting"),
    (GOOD.replace("method: cn}", "method: cn, paper: {cora: 50}}"), "names dataset 'cora'"),
    (GOOD.replace("method: cn}", "method: dplp-ps, settings: {epsilon: 0.0}}"), "epsilon"),
    (GOOD.replace("method: cn}", "method: edgerand-gae, settings: {epsilon: -1.0}}"), "epsilon"),
    (GOOD.replace("method: cn}", "method: dplp-ps, settings: {k: 7}}"), "grow as theta^k"),
    (GOOD + "  - {label: CN, method: cn}\n", "row labels must be unique"),
    (GOOD.replace("rows:\n  - {label: CN, method: cn}\n", "rows: []\n"), "rows"),
    (GOOD.replace("name: t\n", "name: t\nkind: table\n"), "kind"),
    (GOOD.replace("datasets:", "max_seeds: {cora: 1}\ndatasets:"), "names dataset 'cora'"),
    (GOOD.replace("datasets:", "max_seeds: {usair: -1}\ndatasets:"), "max_seeds"),
    ("name: [t\n", "is not valid YAML"),
    ("- a\n- b\n", "must be a mapping"),
])
def test_a_grid_file_that_fails_its_schema_names_the_file_and_the_field(tmp_path, text, message):
    path = _write(tmp_path, "t", text)
    with pytest.raises(ConfigError, match="grid file .*t.yaml") as info:
        read_grid(path)
    assert message in str(info.value)


def test_a_grids_max_seeds_applies_to_every_row_under_the_rows_own(tmp_path):
    text = GOOD.replace("datasets: [usair]", "max_seeds: {usair: 2, yeast: 0}\ndatasets: [usair, yeast, celegans]")
    text += "  - {label: AA, method: aa, max_seeds: {usair: 4}}\n"
    cn, aa = read_grid(_write(tmp_path, "t", text)).rows
    assert [cn.seeds_on(d, 5) for d in ("usair", "yeast", "celegans")] == [2, 0, 5]
    assert [aa.seeds_on(d, 5) for d in ("usair", "yeast", "celegans")] == [4, 0, 5]
    assert aa.seeds_on("usair", 3) == 3  # never more than the run's seeds


def test_a_tables_runs_go_split_by_split_each_row_at_its_own_seeds(tmp_path):
    from graphpriv.experiments.reproduce import table_runs

    text = GOOD.replace("datasets: [usair]", "datasets: [usair, yeast]")
    text += "  - {label: AA, method: aa, max_seeds: {usair: 1}}\n"
    runs = table_runs(read_grid(_write(tmp_path, "t", text)), 3)
    got = [(run.dataset, run.seed, run.method) for run in runs]
    assert got == [("usair", 0, "cn"), ("usair", 0, "aa"), ("usair", 1, "cn"), ("usair", 2, "cn"),
                   ("yeast", 0, "cn"), ("yeast", 0, "aa"), ("yeast", 1, "cn"), ("yeast", 1, "aa"),
                   ("yeast", 2, "cn"), ("yeast", 2, "aa")]


def test_an_audit_grid_row_is_checked_as_graphpriv_audit_checks_its_options(tmp_path):
    text = ("kind: audit\nname: a\ntitle: T\nsource: S\ndatasets: [cora]\nrows:\n"
            "  - {label: no noise, method: dpar-nodp}\n")
    with pytest.raises(ConfigError, match="row 'no noise': dpar-nodp is non-private"):
        read_grid(_write(tmp_path, "a", text))
    read_grid(_write(tmp_path, "a", text.replace("method: dpar-nodp", "method: dpar-nodp, private: false")))
    with pytest.raises(ConfigError, match="row 'x': --attack chooses among PrivDPR"):
        read_grid(_write(tmp_path, "a", text.replace("{label: no noise, method: dpar-nodp}",
                                                     "{label: x, method: edgerand, attack: gradient}")))


def test_reproduce_refuses_an_unknown_table_or_a_bad_grid_before_any_work(tmp_path, monkeypatch):
    store = tmp_path / "s.sqlite"
    res = runner.invoke(app, ["reproduce", "dplp-tabel2", "--store", str(store), "--docs", str(tmp_path / "d")])
    assert res.exit_code == 2 and "unknown table 'dplp-tabel2'" in res.output and "dplp-table2" in res.output
    monkeypatch.setattr(grid_module, "GRID_DIR", tmp_path)
    _write(tmp_path, "broken", GOOD.replace("name: t", "name: broken").replace("datasets: [usair]", "datasets: []"))
    res = runner.invoke(app, ["reproduce", "broken", "--store", str(store), "--docs", str(tmp_path / "d")])
    assert res.exit_code == 2 and "fails its schema" in res.output and "datasets" in res.output
    assert not store.exists() and not (tmp_path / "d").exists()


def test_reproduce_list_names_every_table():
    res = runner.invoke(app, ["reproduce", "list"])
    assert res.exit_code == 0
    assert all(name in res.output for name in grid_names()) and "privdpr-table4 -> privdpr-lp" in res.output


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    from torch_geometric.data import Data

    g = labelled_sbm(120, 3, seed=4)
    path = tmp_path_factory.mktemp("grids") / "sbm.pt"
    torch.save(Data(edge_index=g.edge_index, x=g.x, y=g.y, num_nodes=g.num_nodes), path)
    return str(path)


def test_an_audit_table_runs_through_run_audit_and_renders_again_from_its_results(tmp_path, graph_file):
    grid = AuditGrid(kind="audit", name="toy-audit", title="Toy audits", source="one-run bound",
                     datasets=[graph_file], seed=3,
                     rows=[AuditRow(label="EdgeRand, eps = 1", method="edgerand", canaries=200),
                           AuditRow(label="EdgeRand, noise 100x too small", method="edgerand", canaries=200,
                                    noise_scale=0.01),
                           AuditRow(label="input as is", method="random-perturb", canaries=200, ratio=0.0,
                                    private=False)])
    docs = tmp_path / "docs"
    out, counts = reproduce(grid, docs=docs)
    text = out.read_text()
    assert counts == {"total": 3, "ok": 3} and "graphpriv reproduce toy-audit" in text
    lines = [line for line in text.splitlines() if line.startswith(("| EdgeRand", "| input"))]
    assert len(lines) == 3 and lines[0].endswith("| passed |") and "**FAILED**" in lines[1]
    assert lines[2].endswith("| (no claim) |")
    again, _ = reproduce(grid, from_results=True, docs=docs)
    assert again.read_text() == text


def test_the_proximity_table_renders_again_from_its_results(tmp_path, graph_file):
    grid = ProximityGrid(kind="proximity", name="toy-prox", title="Toy proximity", source="S", datasets=[graph_file],
                         seeds=2, visible=["without-test", "with-test"], paper={graph_file: {"hidden": (3.0, 0.1)}})
    docs = tmp_path / "docs"
    out, counts = reproduce(grid, docs=docs)
    text = out.read_text()
    assert counts["total"] == 2 * 2 * 3 and text.count("| hidden |") == 2 and "| 3.000 |" in text
    assert text.count("| visible | 1.000 ± 0.000 |") == 2  # a visible link is one hop away
    assert reproduce(grid, from_results=True, docs=docs)[0].read_text() == text


def test_a_results_file_that_does_not_match_its_grid_is_refused(tmp_path, graph_file):
    grid = ProximityGrid(kind="proximity", name="toy-prox", title="T", source="S", datasets=[graph_file], seeds=1)
    docs = tmp_path / "docs"
    (docs / "results").mkdir(parents=True)
    (docs / "results" / "toy-prox.csv").write_text("# command: x\nrow,dataset\nA,g\n")
    with pytest.raises(ConfigError, match="does not match grid 'toy-prox'"):
        reproduce(grid, from_results=True, docs=docs)


def test_plot_is_a_subcommand_and_refuses_a_missing_store(tmp_path):
    res = runner.invoke(app, ["plot", "--datasets", "usair", "--out", str(tmp_path / "p.png"),
                              "--store", str(tmp_path / "none.sqlite")])
    assert res.exit_code == 2 and "no results store" in res.output
    assert not (tmp_path / "none.sqlite").exists()
    res = runner.invoke(app, ["plot", "--datasets", "usair", "--out", str(tmp_path / "p.png"), "--curve", "dp-mlp"])
    assert res.exit_code == 2 and "LABEL=METHOD" in res.output


def test_the_grid_folder_is_the_package_data_folder():
    assert grid_module.GRID_DIR == Path(grid_module.__file__).parent / "grids"


def test_run_takes_a_preset_under_the_users_settings(tmp_path, graph_file):
    res = runner.invoke(app, ["run", "cn", "-d", "usair", "--preset", "paper", "--no-store"])
    assert res.exit_code == 2 and "cn has no preset 'paper'" in res.output
    res = runner.invoke(app, ["run", "nope", "-d", "usair", "--preset", "paper", "--no-store"])
    assert res.exit_code == 2 and "unknown method 'nope'" in res.output
    out = tmp_path / "r.json"
    res = runner.invoke(app, ["run", "dpar-gm", "-d", graph_file, "--preset", "one-row", "--set", "epochs=1",
                              "--set", "appr_share=0.2", "--epsilon", "8", "--allow-large-delta", "--no-store",
                              "--json", str(out)])
    assert res.exit_code == 0, res.output
    import json

    config = json.loads(out.read_text())["config"]
    assert config["node_rate"] == 1.0 and config["max_rows"] == 1  # the preset
    assert config["appr_share"] == 0.2 and config["epochs"] == 1  # --set over the preset


def test_an_audit_table_lists_its_lines_dataset_by_dataset():
    from graphpriv.audit.statistics import AuditReport
    from graphpriv.experiments.tables import AuditRecord, audit_markdown

    grid = AuditGrid(kind="audit", name="t", title="T", source="S", datasets=["a", "b"],
                     rows=[AuditRow(label="one", method="edgerand"), AuditRow(label="two", method="edgerand"),
                           AuditRow(label="node", method="dp-mlp", datasets=["c"])])
    report = AuditReport(method="m", dataset="d", unit="edge", claimed_epsilon=1.0, accounting="rigorous",
                         attack="x", canaries=10, inserted=5, correct=5, tpr=0.5, fpr=0.5, epsilon_estimate=0.0,
                         epsilon_lower_bound=0.0, epsilon_lower_bound_cp=0.0, confidence=0.95, passed=True)
    records = [AuditRecord(row, d, report) for row, d in (("node", "c"), ("two", "a"), ("two", "b"), ("one", "b"),
                                                           ("one", "a"))]
    lines = [line.split(" | ")[:2] for line in audit_markdown(grid, records, command="c").splitlines()
             if line.startswith(("| one", "| two", "| node"))]
    assert lines == [["| one", "a"], ["| two", "a"], ["| one", "b"], ["| two", "b"], ["| node", "c"]]
