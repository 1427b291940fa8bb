"""The "which series wins where" section of a runs table (graphpriv.experiments.winners)."""

import math
import statistics

import pytest
from pydantic import ValidationError
from scipy import stats

from graphpriv.experiments.grid import GridRow, RunsGrid, WinnerRule
from graphpriv.experiments.reproduce import reproduce
from graphpriv.experiments.results import write_results
from graphpriv.experiments.tables import RunRecord, cells_from_records
from graphpriv.experiments.winners import CLEAR_P, standings, welch_p, winners_markdown


def _grid(**extra):
    rows = [GridRow(label=f"{s}, eps {e:g}", method="tmf", series=s, settings={"epsilon": e})
            for s in ("A", "B", "C") for e in (1.0, 4.0)]
    return RunsGrid(name="w", title="w", source="test", datasets=["g", "h"], metric="auc", columns=["err"],
                    rows=rows, **extra)


def _record(label, dataset, seed, **metrics):
    return RunRecord(row=label, dataset=dataset, method="tmf", seed=seed, config_hash="0", settings="{}",
                     metrics=metrics, epsilon=1.0, delta=0.0, accounting="pure", accountant="basic",
                     noise_multiplier=None, seconds=1.0)


def _records(values):
    """values: {(label, dataset): {metric: [per seed]}}."""
    out = []
    for (label, dataset), metrics in values.items():
        seeds = len(next(iter(metrics.values())))
        for seed in range(seeds):
            out.append(_record(label, dataset, seed, **{m: v[seed] for m, v in metrics.items() if v[seed] is not None}))
    return out


def test_welch_p_is_scipys_and_defined_where_scipys_is_not():
    a, b = [0.61, 0.64, 0.60, 0.66, 0.62], [0.55, 0.58, 0.61, 0.52, 0.57]
    assert welch_p(a, b) == pytest.approx(stats.ttest_ind(a, b, equal_var=False).pvalue, rel=1e-9)
    c = [0.60, 0.61, 0.70]
    assert welch_p(c, b) == pytest.approx(stats.ttest_ind(c, b, equal_var=False).pvalue, rel=1e-9)
    assert welch_p(b, a) == pytest.approx(welch_p(a, b))
    # both constant: scipy's statistic is undefined; different means are told apart for sure
    assert welch_p([1.0, 1.0], [0.0, 0.0]) == 0.0 and welch_p([0.0, 0.0], [1.0, 1.0]) == 0.0
    assert welch_p([1.0, 1.0], [1.0, 1.0]) == 1.0
    assert math.isnan(welch_p([1.0], [0.0, 0.5]))


def test_the_best_mean_wins_in_the_metrics_direction_and_a_lead_within_the_noise_is_not_clear():
    grid = _grid(winners=[{"metric": "auc", "better": "higher"}, {"metric": "err", "better": "lower"}])
    records = _records({
        ("A, eps 1", "g"): {"auc": [0.90, 0.91, 0.92], "err": [0.50, 0.10, 0.90]},
        ("B, eps 1", "g"): {"auc": [0.60, 0.61, 0.62], "err": [0.40, 0.45, 0.50]},
        ("C, eps 1", "g"): {"auc": [0.70, 0.50, 0.90], "err": [0.60, 0.61, 0.62]},
        ("A, eps 4", "g"): {"auc": [0.80, 0.80, 0.80], "err": [0.2, 0.2, 0.2]},
        ("B, eps 4", "g"): {"auc": [0.80, 0.80, 0.80], "err": [0.3, 0.3, 0.3]},
    })
    cells = cells_from_records(grid, records)
    auc = standings(grid, cells, WinnerRule(metric="auc", better="higher"))
    assert [(s.dataset, s.epsilon, s.winner, s.runner_up) for s in auc] == [("g", 1.0, "A", "C"), ("g", 4.0, "A", "B")]
    first = auc[0]
    assert first.ranking == ("A", "C", "B") and first.winner_mean == pytest.approx(0.91) and first.winner_seeds == 3
    assert first.p == pytest.approx(welch_p([0.90, 0.91, 0.92], [0.70, 0.50, 0.90]))
    assert first.p > CLEAR_P and not first.clear  # C's spread covers A's lead
    assert auc[1].p == 1.0 and not auc[1].clear  # an exact tie goes to the series listed first, not clear
    err = standings(grid, cells, WinnerRule(metric="err", better="lower"))
    assert [(s.winner, s.runner_up) for s in err] == [("B", "A"), ("A", "B")]
    assert err[1].p == 0.0 and err[1].clear  # constant seeds, 0.2 against 0.3
    assert err[0].p == pytest.approx(welch_p([0.40, 0.45, 0.50], [0.50, 0.10, 0.90])) and not err[0].clear


def test_a_series_that_failed_on_a_run_cannot_win_and_excluded_series_do_not_compete():
    grid = _grid(winners=[{"metric": "err", "better": "lower"}], winners_exclude=["C"])
    records = _records({
        ("A, eps 1", "g"): {"auc": [0.5, 0.5, 0.5], "err": [0.01, None, 0.01]},  # one run undefined: failed
        ("B, eps 1", "g"): {"auc": [0.5, 0.5, 0.5], "err": [0.3, 0.31, 0.32]},
        ("C, eps 1", "g"): {"auc": [0.5, 0.5, 0.5], "err": [0.0, 0.0, 0.0]},  # best, but excluded
        ("A, eps 4", "g"): {"auc": [0.5, 0.5, 0.5], "err": [math.inf, 0.1, 0.1]},  # an infinite run: failed
        ("B, eps 4", "g"): {"auc": [0.5, 0.5, 0.5], "err": [math.nan, 0.2, 0.2]},  # every series failed: no winner
        ("A, eps 1", "h"): {"auc": [0.5], "err": [0.2]},  # alone, one seed: named, never clear
        ("B, eps 4", "h"): {"auc": [0.5], "err": [0.2]},  # one seed against a failed series: not clear
        ("A, eps 4", "h"): {"auc": [0.5, 0.5], "err": [0.1, None]},
    })
    found = standings(grid, cells_from_records(grid, records), WinnerRule(metric="err", better="lower"))
    assert [(s.dataset, s.epsilon, s.winner, s.runner_up, s.clear) for s in found] == [
        ("g", 1.0, "B", "A", True), ("h", 1.0, "A", None, False), ("h", 4.0, "B", "A", False)]
    assert found[0].winner_mean == pytest.approx(0.31) and found[0].p == 0.0 and found[0].ranking == ("B", "A")
    assert found[0].runner_up_mean == pytest.approx(0.01)  # over A's defined runs
    assert math.isnan(found[1].p) and found[1].runner_up_mean is None
    text = winners_markdown(grid, cells_from_records(grid, records))
    assert "| g | **B** | - |" in text and "| h | A | B ~ A |" in text
    assert "Left out: C." in text


def test_the_section_marks_clear_leads_and_counts_wins():
    grid = _grid(winners=[{"metric": "auc", "better": "higher"}], winners_exclude=["C"])
    records = _records({
        ("A, eps 1", "g"): {"auc": [0.90, 0.91, 0.92]}, ("B, eps 1", "g"): {"auc": [0.60, 0.61, 0.62]},
        ("A, eps 4", "g"): {"auc": [0.70, 0.90, 0.50]}, ("B, eps 4", "g"): {"auc": [0.69, 0.70, 0.71]},
        ("B, eps 1", "h"): {"auc": [0.60, 0.61, 0.62]},
    })
    text = winners_markdown(grid, cells_from_records(grid, records))
    assert text.startswith("#### Which series wins where\n") and text.endswith("\n")
    assert "| dataset | eps 1 | eps 4 |" in text
    assert "| g | **A** | A ~ B |" in text and "| h | B | - |" in text
    assert "Cells won, of 3: A 2 (1 clear), B 1 (0 clear)." in text
    assert winners_markdown(_grid(), cells_from_records(_grid(), records)) == ""  # no winners asked
    # a metric no run has: no empty heading
    none = _grid(winners=[{"metric": "err", "better": "lower"}])
    assert winners_markdown(none, cells_from_records(none, records)) == ""


def test_the_section_renders_the_same_from_the_results_file(tmp_path):
    grid = _grid(winners=[{"metric": "auc", "better": "higher"}])
    records = _records({("A, eps 1", "g"): {"auc": [0.9, 0.8], "err": [0.1, 0.2]},
                        ("B, eps 1", "g"): {"auc": [0.6, 0.5], "err": [0.3, 0.2]}})
    docs = tmp_path / "docs"
    write_results(docs / "results" / "w.csv", grid, records, meta={"command": "c", "machine": "m", "seeds": "2"})
    out, _ = reproduce(grid, from_results=True, docs=docs)
    text = out.read_text()
    assert text.endswith(winners_markdown(grid, cells_from_records(grid, records)))
    assert "#### Which series wins where" in text and "| g | A ~ B |" in text  # p = 0.051 over two seeds a side


def test_bad_winners_settings_fail_with_the_field_named():
    with pytest.raises(ValidationError, match="winners metric 'f1' is not shown by the table"):
        _grid(winners=[{"metric": "f1", "better": "higher"}])
    with pytest.raises(ValidationError, match="winners_exclude names series 'D', which no row has"):
        _grid(winners=[{"metric": "auc", "better": "higher"}], winners_exclude=["D"])
    with pytest.raises(ValidationError, match="better"):
        _grid(winners=[{"metric": "auc", "better": "closer"}])
    with pytest.raises(ValidationError, match="sets no epsilon"):
        RunsGrid(name="w", title="w", source="test", datasets=["g"], metric="auc",
                 winners=[{"metric": "auc", "better": "higher"}],
                 rows=[GridRow(label="A", method="tmf", series="A")])
    rows = [GridRow(label=label, method="tmf", series="A", settings={"epsilon": 1.0}) for label in ("A1", "A2")]
    with pytest.raises(ValidationError, match="one row per series and epsilon; repeated: \\['A at epsilon 1.0'\\]"):
        RunsGrid(name="w", title="w", source="test", datasets=["g"], metric="auc", rows=rows,
                 winners=[{"metric": "auc", "better": "higher"}])
    RunsGrid(name="w", title="w", source="test", datasets=["g"], metric="auc", rows=rows)  # fine without winners


def test_the_winners_margin_over_the_trivial_baseline_is_over_the_same_runs_and_beside_the_winner():
    rows = [GridRow(label=f"{s}, eps 4", method="dplp-ps", series=s, settings={"epsilon": 4.0}) for s in ("A", "B")]
    grid = RunsGrid(name="w", title="w", source="test", datasets=["g", "h"], metric="auc", columns=["baseline:auc"],
                    rows=rows, winners=[{"metric": "auc", "better": "higher"}])
    records = _records({("A, eps 4", "g"): {"auc": [0.93, 0.95, 0.97], "baseline:auc": [0.90, 0.91, None]},
                        ("B, eps 4", "g"): {"auc": [0.50, 0.52, 0.51], "baseline:auc": [0.80, 0.80, 0.80]},
                        ("A, eps 4", "h"): {"auc": [0.60, 0.70], "baseline:auc": [0.50, 0.50]},
                        ("B, eps 4", "h"): {"auc": [0.61, 0.60], "baseline:auc": [0.50, 0.50]}})
    cells = cells_from_records(grid, records)
    g, h = standings(grid, cells, WinnerRule(metric="auc", better="higher"))
    assert g.winner == "A" and g.margin == pytest.approx(0.035)  # the two runs with a baseline, not 0.95 - 0.905
    assert h.winner == "A" and h.margin == pytest.approx(0.15) and not h.clear
    text = winners_markdown(grid, cells)
    assert "| g | **A** (+3.50) |" in text and "| h | A (+15.00) ~ B |" in text
    assert "minus its runs' trivial baseline" in text
    assert standings(_grid(), cells_from_records(_grid(), _records({("A, eps 1", "g"): {"auc": [0.9]}})),
                     WinnerRule(metric="auc", better="higher"))[0].margin is None


def test_of_runners_up_tied_in_the_mean_the_lead_is_judged_against_the_closest():
    # B and C tie in the mean behind A; A is clearly ahead of B (tight seeds) but not of C (wide
    # seeds): the lead is not clear, and C is named as the runner-up, whatever the grid's order
    grid = _grid(winners=[{"metric": "auc", "better": "higher"}])
    a, b, c = [0.875, 0.90625, 0.9375], [0.71875, 0.75, 0.78125], [0.5, 0.75, 1.0]  # binary fractions: exact means
    assert statistics.mean(b) == statistics.mean(c)
    assert welch_p(a, b) < CLEAR_P < welch_p(a, c)
    records = _records({("A, eps 1", "g"): {"auc": a}, ("B, eps 1", "g"): {"auc": b},
                        ("C, eps 1", "g"): {"auc": c}})
    (standing,) = standings(grid, cells_from_records(grid, records), WinnerRule(metric="auc", better="higher"))
    assert standing.winner == "A" and standing.runner_up == "C" and not standing.clear
    assert standing.p == pytest.approx(welch_p(a, c)) and standing.ranking == ("A", "C", "B")
    # a tie up to the last bit of the mean is a tie: B a hair ahead of C still leaves C the runner-up
    b_hair = [0.71875, 0.75, 0.78125 + 4e-16]
    assert statistics.mean(b_hair) > statistics.mean(c)
    records = _records({("A, eps 1", "g"): {"auc": a}, ("B, eps 1", "g"): {"auc": b_hair},
                        ("C, eps 1", "g"): {"auc": c}})
    (standing,) = standings(grid, cells_from_records(grid, records), WinnerRule(metric="auc", better="higher"))
    assert standing.runner_up == "C" and not standing.clear
