"""scripts/select_leaderboard.py: one selection per (method, dataset), resumed from its file, and
the choices written into the leaderboard grids as ``per_dataset``."""

import importlib.util
import json
import shutil
from pathlib import Path

import yaml

from graphpriv.experiments import grid as grid_module
from graphpriv.experiments.grid import RunsGrid

_SPEC = importlib.util.spec_from_file_location(
    "select_leaderboard", Path(__file__).resolve().parents[2] / "scripts" / "select_leaderboard.py")
leaderboard = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(leaderboard)


def test_every_searched_method_is_a_private_row_of_a_leaderboard_table():
    from graphpriv.experiments.reproduce import resolve

    rows = {row.method for name in leaderboard.GRIDS for row in resolve(name).rows if row.series}
    assert set(leaderboard.SEARCH) <= rows and set(leaderboard.SEARCH) == set(leaderboard.SELECTION_EPSILON)


def test_a_choice_is_selected_once_then_read_back(monkeypatch, tmp_path):
    calls = []

    def fake_select(method, dataset, grid, *, seeds, epsilon, fixed, store):
        calls.append((method, dataset, epsilon, tuple(seeds), json.dumps(fixed, sort_keys=True), store))
        assert min(seeds) >= 100
        return [(0.6, {"max_degree": 50, "hidden": 8, "epochs": 30}), (0.5, {"max_degree": 10, "hidden": 16,
                                                                               "epochs": 10})]
    monkeypatch.setattr(leaderboard, "select", fake_select)
    first = leaderboard.choose("gap-ndp", "cora", [100, 101], tmp_path, tmp_path / "s.sqlite")
    again = leaderboard.choose("gap-ndp", "cora", [100, 101], tmp_path, tmp_path / "s.sqlite")
    assert first == again == {"batch_size": 512, "max_degree": 50, "hidden": 8, "epochs": 30}
    assert calls == [("gap-ndp", "cora", 8.0, (100, 101), '{"batch_size": 512}', tmp_path / "s.sqlite")]
    saved = json.loads((tmp_path / "gap-ndp--cora.json").read_text())
    assert saved["scores"][0]["val_accuracy"] == 0.6 and saved["epsilon"] == 8.0


def test_the_choices_land_in_the_grid_rows_of_their_method(tmp_path):
    source = Path(grid_module.__file__).with_name("grids")
    for name in leaderboard.GRIDS:
        shutil.copy(source / f"{name}.yaml", tmp_path / f"{name}.yaml")
    choice = {"max_degree": 50, "epochs": 30}
    edge_before = (tmp_path / "node-leaderboard-edge.yaml").read_text()
    leaderboard.write_grids({("gap-ndp", "cora"): choice, ("gap-ndp", "nowhere"): {"epochs": 1}}, tmp_path)
    assert (tmp_path / "node-leaderboard-edge.yaml").read_text() == edge_before  # no gap-ndp row: untouched
    text = (tmp_path / "node-leaderboard-node.yaml").read_text()
    assert "&id" not in text and "*id" not in text  # every row's settings written out
    assert text.startswith("# graphpriv reproduce node-leaderboard-node")
    grid = RunsGrid(**yaml.safe_load(text))
    before = {row.label: row.per_dataset for row in RunsGrid(**yaml.safe_load(
        (source / "node-leaderboard-node.yaml").read_text())).rows}
    for row in grid.rows:  # gap-ndp's rows get the choices given; every other row keeps its own
        assert row.per_dataset == ({"cora": choice} if row.method == "gap-ndp" else before[row.label])
        if row.method == "gap-ndp":
            assert row.settings_for("cora")["max_degree"] == 50 and "epsilon" in row.settings_for("cora")
    assert (tmp_path / "node-leaderboard-edge.yaml").read_text() != ""


def test_settings_are_chosen_with_the_epoch_selection_their_table_reports():
    from graphpriv.experiments.registry import make_config
    from graphpriv.experiments.reproduce import resolve

    for name in leaderboard.GRIDS:
        for row in resolve(name).rows:
            if row.method in leaderboard.SEARCH:
                fixed = leaderboard.SEARCH[row.method][0]
                default = make_config(row.method, {}).model_selection
                assert fixed.get("model_selection", default) == row.settings.get("model_selection", default), row.label


def test_a_choice_the_row_already_holds_is_not_repeated_in_per_dataset(tmp_path):
    source = Path(grid_module.__file__).with_name("grids")
    for name in leaderboard.GRIDS:
        shutil.copy(source / f"{name}.yaml", tmp_path / f"{name}.yaml")
    leaderboard.write_grids({("gap-edp", "cora"): {"model_selection": "best_val", "hops": 2, "hidden": 16}}, tmp_path)
    grid = RunsGrid(**yaml.safe_load((tmp_path / "node-leaderboard-edge.yaml").read_text()))
    for row in grid.rows:
        if row.method == "gap-edp":
            assert row.per_dataset == {"cora": {"hops": 2, "hidden": 16}}
            assert row.settings_for("cora")["model_selection"] == "best_val"
