import pytest

from graphpriv.experiments.grid import GridRow, RunsGrid
from graphpriv.experiments.plots import epsilon_curves, plot_epsilon_sweep
from graphpriv.experiments.registry import make_config
from graphpriv.experiments.store import ResultStore, config_hash
from graphpriv.experiments.tables import Cell, RunRecord, runs_markdown
from graphpriv.methods.base import Result
from graphpriv.privacy.report import PrivacyReport


def _plain(data):
    """Tensors only: what a graph file may hold (graphpriv never unpickles other objects)."""
    from torch_geometric.data import Data

    return Data(edge_index=data.edge_index, x=data.x, y=data.y, num_nodes=data.num_nodes)


def _result(method="dplp-ps", seed=0, eps=1.0, auc=0.8, **config):
    cfg = {"backbone": "gcn", "accounting": "rigorous", "epsilon": eps, **config}
    report = PrivacyReport(unit="edge", relation="r", accounting="rigorous", epsilon=eps * 0.99, delta=1e-5,
                           target_epsilon=eps)
    return Result(method=method, dataset="g", seed=seed, config=cfg, metrics={"test_auc": auc},
                  privacy=report, timings={"total": 1.0})


def test_store_find_and_config_hash(tmp_path):
    store = ResultStore(tmp_path / "s.sqlite")
    r = _result()
    store.append(r)
    assert store.find("dplp-ps", "g", 0, r.config).metrics == r.metrics
    assert store.find("dplp-ps", "g", 1, r.config) is None
    assert store.find("dplp-ps", "g", 0, {**r.config, "k": 3}) is None
    assert config_hash({"a": 1, "b": 2}) == config_hash({"b": 2, "a": 1})
    store.append_error("dplp-ps", "g", 2, r.config, "boom")
    assert store.count() == 2 and len(store.results()) == 1


def test_epsilon_curves_and_plot(tmp_path):
    store = ResultStore(tmp_path / "s.sqlite")
    for seed, eps, auc in ((0, 1.0, 0.7), (1, 1.0, 0.72), (0, 4.0, 0.9)):
        store.append(_result(seed=seed, eps=eps, auc=auc))
    store.append(_result(seed=1, eps=1.0, auc=0.72))  # a rerun of a stored cell replaces it: counted once
    store.append(_result(eps=4.0, auc=0.1, backbone="sage"))
    curves = epsilon_curves(store, "dplp-ps", "g", backbone="gcn")
    assert curves == {1.0: [0.7, 0.72], 4.0: [0.9]}
    out = plot_epsilon_sweep(store, ["dplp-ps"], ["g"], tmp_path / "p.png", backbone="gcn")
    assert out.stat().st_size > 1000


def test_curve_specs_filter_runs_by_config(tmp_path):
    from graphpriv.experiments.plots import parse_curve, plot_curves

    assert parse_curve("GM, paper=dpar-gm:accounting=paper,max_rows=null,node_rate=1.0") == (
        "GM, paper", "dpar-gm", {"accounting": "paper", "max_rows": None, "node_rate": 1.0})
    assert parse_curve("MLP=dp-mlp") == ("MLP", "dp-mlp", {})
    with pytest.raises(ValueError, match="LABEL=METHOD"):
        parse_curve("dp-mlp")
    store = ResultStore(tmp_path / "s.sqlite")
    store.append(_result(eps=1.0, auc=0.7, max_rows=None))
    store.append(_result(eps=1.0, auc=0.2, max_rows=1))
    assert epsilon_curves(store, "dplp-ps", "g", max_rows=None) == {1.0: [0.7]}
    out = plot_curves(store, [parse_curve("a=dplp-ps:max_rows=null"), parse_curve("b=dplp-ps:max_rows=1")], ["g"],
                      tmp_path / "c.png", metric="test_auc", ylabel="AUC")
    assert out.stat().st_size > 1000


def test_tradeoff_points_and_plot(tmp_path):
    from graphpriv.experiments.plots import plot_tradeoff, tradeoff_points
    from graphpriv.methods.base import Result

    store = ResultStore(tmp_path / "t.sqlite")
    for ratio, seed, lp, att in ((0.5, 0, 0.7, 0.6), (0.5, 1, 0.8, 0.7), (0.2, 0, 0.9, 0.85)):
        store.append(Result(method="random-perturb", dataset="g", seed=seed,
                            config=make_config("random-perturb", {"ratio": ratio}).model_dump(mode="json"),
                            metrics={"lp_auc": lp, "nc_f1": lp, "attack_auc_gae-sim": att}))
    points = tradeoff_points(store, "random-perturb", "g")
    assert [p[0] for p in points] == [0.2, 0.5] and points[1][3] == 2
    assert points[1][1] == pytest.approx(0.75) and points[1][2] == pytest.approx(0.65)
    assert plot_tradeoff(store, ["random-perturb"], ["g"], tmp_path / "t.png").stat().st_size > 1000


def _records(results, label="CN"):
    return [RunRecord.from_result(label, r, r.metrics) for r in results]


def test_columns_a_run_did_not_measure_show_a_dash():
    grid = RunsGrid(name="t", title="t", source="test", datasets=["g"], rows=[GridRow(label="CN", method="cn")],
                    columns=["nc_f1", "lp_auc"])
    results = [_result(method="cn", seed=s, auc=0.6) for s in (0, 1)]
    for r in results:
        r.metrics["lp_auc"] = 0.7
    results[1].metrics["nc_f1"] = 0.5  # measured on one seed only: not averaged as if complete
    text = runs_markdown(grid, [Cell(grid.rows[0], "g", _records(results))], seeds=2, command="cmd", machine="m")
    assert "| CN | g | 60.00 ± 0.00 | 2 | - | - | 70.00 ± 0.00 |" in text


def test_tradeoff_plot_keeps_ppgsl_defaults_only(tmp_path, monkeypatch):
    from graphpriv.experiments import plots

    store = ResultStore(tmp_path / "t.sqlite")
    for k, att in ((1, 0.7), (5, 0.6)):
        store.append(Result(method="ppgsl", dataset="g", seed=0,
                            config=make_config("ppgsl", {"alpha": 0.0, "k": k}).model_dump(mode="json"),
                            metrics={"lp_auc": 0.8, "nc_f1": 0.7, "attack_auc_gae-sim": att}))
    seen = []
    real = plots.tradeoff_points
    monkeypatch.setattr(plots, "tradeoff_points", lambda *a, **kw: seen.append(real(*a, **kw)) or seen[-1])
    plots.plot_tradeoff(store, ["ppgsl"], ["g"], tmp_path / "t.png")
    assert seen[0] == [(0.0, 0.8, 0.7, 1)]  # the k = 5 ablation run is not on the curve


def test_rank_sweep_points_keep_each_lines_fixed_knob(tmp_path):
    from graphpriv.experiments.plots import plot_rank_sweeps, rank_sweep_points

    store = ResultStore(tmp_path / "r.sqlite")
    runs = (("dplp-rank", {"sigma_prot": 0.1}, 0, 0.40), ("dplp-rank", {"sigma_prot": 0.1}, 1, 0.50),
            ("dplp-rank", {"epsilon_p": 0.5}, 0, 0.60),  # sigma 0.3: on the eps_p line only
            ("dplp-rank", {"epsilon_p": 0.5, "sigma_prot": 0.1}, 0, 0.99),  # on neither line
            ("dplp-rank", {"accounting": "paper"}, 0, 0.99), ("dplp-rank", {}, 0, 0.30),
            ("dplp-rank", {"base": "cn", "sigma_prot": 0.1}, 0, 0.99),
            ("rank-nonprivate", {"sigma_prot": 0.2}, 0, 0.90))
    for method, overrides, seed, value in runs:
        config = make_config(method, {"base": "aa", **overrides}).model_dump(mode="json")
        store.append(Result(method=method, dataset="g", seed=seed, config=config,
                            metrics={"auc_at_k": value, "precision_at_k": 0.1, "auc": 0.5}))
    assert rank_sweep_points(store, "dplp-rank", "g", "aa", "sigma_prot") == {0.1: [0.40, 0.50], 0.3: [0.30]}
    assert rank_sweep_points(store, "dplp-rank", "g", "aa", "epsilon_p") == {0.1: [0.30], 0.5: [0.60]}
    assert rank_sweep_points(store, "rank-nonprivate", "g", "aa", "sigma_prot") == {0.2: [0.90]}
    text = plot_rank_sweeps(store, "g", tmp_path / "r.png", bases=("aa",))
    assert "| dplp-rank | 45.0 ± 5.0 (2) | - | 30.0 ± 0.0 (1) |" in text
    assert (tmp_path / "r.png").stat().st_size > 1000


def test_raw_columns_show_diagnostics_unscaled():
    grid = RunsGrid(name="t", title="t", source="test", datasets=["g"], rows=[GridRow(label="DPR", method="cn")],
                    raw_columns=["gradient_norm"])
    results = [_result(method="cn", seed=s, auc=0.5) for s in (0, 1)]
    for r, g in zip(results, (1e-14, 3e-14)):
        r.metrics["gradient_norm"] = g
        r.info["noise_multiplier"] = None  # a noise-free run: shown as '-'
    text = runs_markdown(grid, [Cell(grid.rows[0], "g", _records(results, "DPR"))], seeds=2, command="cmd",
                         machine="m")
    assert "| 2.00e-14 |" in text and "| - |" in text


def test_a_baseline_column_shows_the_baseline_each_run_measured(tmp_path):
    from graphpriv.experiments.results import read_results, write_results
    from graphpriv.methods.base import Baseline

    grid = RunsGrid(name="t", title="t", source="test", datasets=["g"], rows=[GridRow(label="DP", method="dplp-ps")],
                    columns=["baseline:test_auc"])
    results = [_result(seed=s, auc=0.8) for s in (0, 1)]
    for r, value in zip(results, (0.6, 0.7)):
        r.baselines = [Baseline(name="common neighbours", metric="test_auc", value=value),
                       Baseline(name="chance", metric="test_auc", value=0.5)]  # the first of a metric's
    records = [RunRecord.from_result("DP", r, ["test_auc", "baseline:test_auc", "baseline:nc_f1"]) for r in results]
    assert [r.metrics for r in records] == [{"test_auc": 0.8, "baseline:test_auc": 0.6},
                                            {"test_auc": 0.8, "baseline:test_auc": 0.7}]  # no nc_f1 baseline
    named = RunRecord.from_result("DP", results[1], ["baseline:test_auc@chance", "baseline:test_auc@input graph"])
    assert named.metrics == {"baseline:test_auc@chance": 0.5}  # the one of that name; none of an absent name
    text = runs_markdown(grid, [Cell(grid.rows[0], "g", records)], seeds=2, command="cmd", machine="m")
    assert "| baseline:test_auc |" in text and "| DP | g | 80.00 ± 0.00 | 2 | - | 65.00 ± 7.07 |" in text
    path = write_results(tmp_path / "t.csv", grid, records, meta={"command": "cmd"})
    assert read_results(path, grid)[0] == records  # through the committed results file unchanged


def test_runs_without_the_table_metric_are_left_out_not_a_crash():
    from graphpriv.experiments.tables import cells_from_records

    grid = RunsGrid(name="t", title="t", source="test", datasets=["g", "h"], rows=[GridRow(label="CN", method="cn")],
                    metric="lp_auc")
    results = [_result(method="cn", seed=s, auc=0.6) for s in (0, 1, 2)]
    results[0].metrics["lp_auc"], results[2].metrics["lp_auc"] = 0.7, 0.5  # seed 1: undefined, not stored
    records = _records(results)
    cells = cells_from_records(grid, records)
    assert [(c.dataset, len(c.records)) for c in cells] == [("g", 3)]
    text = runs_markdown(grid, cells, seeds=3, command="cmd", machine="m")
    assert "| CN | g | 60.00 ± 14.14 | 2 | - |" in text  # the two runs that have it
    only_missing = [r for r in records if r.seed == 1]
    assert cells_from_records(grid, only_missing) == []
