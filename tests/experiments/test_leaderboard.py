"""The node-classification leaderboard's grids, the group that runs both, and the grid plot."""

import pytest
from typer.testing import CliRunner

from graphpriv.errors import ConfigError
from graphpriv.experiments.grid import RunsGrid
from graphpriv.experiments.plots import plot_grid
from graphpriv.experiments.registry import METHODS, method_spec
from graphpriv.experiments.reproduce import GROUPS, resolve
from graphpriv.experiments.tables import RunRecord

EPSILONS = {1.0, 2.0, 4.0, 8.0}


@pytest.mark.parametrize("name, unit", [("node-leaderboard-edge", "edge"), ("node-leaderboard-node", "node")])
def test_each_level_runs_its_private_methods_at_every_epsilon_beside_the_references(name, unit):
    grid = resolve(name)
    assert name in GROUPS["node-leaderboard"] and grid.metric == "accuracy" and grid.seeds == 5
    assert grid.plot == "epsilon" and not grid.allow_large_delta  # the delta rule applies
    assert {"fb100-mit8", "fb100-harvard1", "cora", "citeseer", "cora_ml", "pubmed_partial"} == set(grid.datasets)
    curves: dict[str, set[float]] = {}
    for row in grid.rows:
        assert row.method in METHODS
        if row.series is not None:
            assert method_spec(row.method).unit == unit
            curves.setdefault(row.series, set()).add(row.settings["epsilon"])
        assert "[" in row.label  # the split is named in every row
    assert all(epsilons == EPSILONS for epsilons in curves.values())
    references = {row.method for row in grid.rows if row.series is None}
    assert {"gcn", "mlp-transductive"} <= references
    if unit == "node":
        assert {"GAP-NDP", "ProGAP-NDP", "SAGE-NDP", "DP-MLP"} <= set(curves)
    else:
        assert {"GAP-EDP", "ProGAP-EDP"} <= set(curves)


def _record(row, dataset, seed, accuracy, baseline=0.25):
    return RunRecord(row=row, dataset=dataset, method="m", seed=seed, config_hash="h", settings="{}",
                     metrics={"accuracy": accuracy, "baseline:accuracy": baseline}, epsilon=None, delta=None,
                     accounting=None, accountant=None, noise_multiplier=None, seconds=1.0)


def _grid(**extra):
    rows = [{"label": f"A, eps {e}", "method": "gap-edp", "series": "A", "settings": {"epsilon": e}} for e in (1, 4)]
    rows.append({"label": "ceiling", "method": "gcn"})
    return RunsGrid(name="t", title="t", source="s", datasets=["d1", "d2"], rows=rows, metric="accuracy",
                    plot="epsilon", **extra)


def test_the_plot_draws_every_dataset_with_runs_and_refuses_none(tmp_path):
    grid = _grid()
    records = [_record("A, eps 1", "d1", 0, 0.4), _record("A, eps 1", "d1", 1, 0.5), _record("A, eps 4", "d1", 0, 0.6),
               _record("ceiling", "d1", 0, 0.8)]
    out = plot_grid(grid, records, tmp_path / "t.png")
    assert out.exists() and out.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ConfigError, match="no run with accuracy"):
        plot_grid(grid, [], tmp_path / "none.png")


def test_every_entry_keeps_one_style_in_every_panel_and_the_legend_names_it_once():
    from graphpriv.experiments.plots import GRID_COLOURS, draw_grid, grid_styles

    rows = [{"label": f"S{i}, eps {e}", "method": "gap-edp", "series": f"S{i}", "settings": {"epsilon": e}}
            for i in range(len(GRID_COLOURS) + 3) for e in (1, 4)]
    rows += [{"label": f"ref {i}", "method": "gcn"} for i in range(10)]
    grid = RunsGrid(name="t", title="t", source="s", datasets=["d1", "d2"], rows=rows, metric="accuracy",
                    plot="epsilon", columns=["baseline:accuracy"])
    styles = grid_styles(grid)
    assert list(styles) == [f"S{i}" for i in range(len(GRID_COLOURS) + 3)] + [f"ref {i}" for i in range(10)]
    looks = [(style["color"], style.get("marker"), style.get("dashes")) for style in styles.values()]
    assert len(set(looks)) == len(looks)  # past the colours, the markers and dashes tell entries apart
    assert not {styles[f"S{i}"]["color"] for i in range(5)} & {styles[f"ref {i}"]["color"] for i in range(5)}
    records = [_record(row["label"], dataset, seed, 0.5 + 0.01 * seed)
               for row in rows for dataset in ("d1", "d2") for seed in (0, 1)]
    # the first panel lacks a series: the legend still follows the table's order
    fig = draw_grid(grid, [r for r in records if not (r.dataset == "d1" and r.row.startswith("S0,"))])
    (legend,) = fig.legends
    names = [text.get_text() for text in legend.get_texts()]
    assert names == list(styles) + ["trivial baseline"]
    for ax in fig.axes[:2]:
        drawn = {line.get_label(): line.get_color() for line in ax.get_lines()}
        assert all(drawn[name] == styles[name]["color"] for name in styles if name in drawn)
        assert drawn["trivial baseline"] == "grey"
        assert ax.get_legend() is None  # one legend for the figure, none per panel


def test_a_series_row_without_epsilon_is_refused():
    rows = [{"label": "A", "method": "gap-edp", "series": "A"}]
    with pytest.raises(ValueError, match="sets no epsilon"):
        RunsGrid(name="t", title="t", source="s", datasets=["d"], rows=rows, plot="epsilon")


def test_reproduce_list_names_the_group():
    from graphpriv.cli import app

    out = CliRunner().invoke(app, ["reproduce", "list"])
    assert out.exit_code == 0
    assert "node-leaderboard -> node-leaderboard-edge + node-leaderboard-node" in out.output


def test_a_table_finds_the_runs_whose_default_delta_the_rule_lowered():
    """fb100-mit8 has more than 1e5 edges, so a run's default delta 1e-5 is lowered to 1e-6 (the
    delta rule): the table must look the run up under that config, as the sweep stored it."""
    from graphpriv.experiments.sweep import make_run
    from graphpriv.experiments.tables import run_config

    row = next(r for r in resolve("node-leaderboard-edge").rows if r.method == "gap-edp")
    stored = make_run(row.method, "fb100-mit8", 3, row.settings_for("fb100-mit8")).config_dict
    assert stored["delta"] == 1e-6 and run_config(row, "fb100-mit8") == stored
    assert run_config(row, "cora")["delta"] == 1e-5  # a small graph keeps the default


def test_the_plot_draws_each_baseline_column_of_its_metric_over_the_series_rows():
    from graphpriv.experiments.plots import baseline_lines

    grid = _grid(columns=["baseline:accuracy", "baseline:accuracy@input graph", "baseline:f1@input graph"])
    records = [_record("A, eps 1", "d1", 0, 0.4, baseline=0.2), _record("A, eps 4", "d1", 1, 0.6, baseline=0.3),
               _record("ceiling", "d1", 0, 0.8, baseline=0.9)]  # a reference row's own baseline: not drawn
    records[0].metrics.update({"baseline:accuracy@input graph": 0.7, "baseline:f1@input graph": 0.5})
    assert baseline_lines(grid, records) == pytest.approx({"trivial baseline": 0.25, "input graph": 0.7})
    assert baseline_lines(_grid(), records) == {}  # no baseline column in the table
