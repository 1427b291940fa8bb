"""Which series wins where: for each dataset and epsilon of a ``runs`` grid, the best series on a
metric, and whether its lead over the runner-up is clear of the seed-to-seed noise.

A grid asks for it with :attr:`~graphpriv.experiments.grid.RunsGrid.winners` (the metrics, each
with its direction) and :attr:`~graphpriv.experiments.grid.RunsGrid.winners_exclude` (series held
apart, e.g. a node-level generator beside edge-level ones: a stronger privacy unit at the same
epsilon is not a like-for-like comparison). The section is rendered from the same records as the
table (:mod:`graphpriv.experiments.tables`), so ``graphpriv reproduce TABLE --from-results`` gives
it byte for byte.

A series competes in a cell only when the metric is defined and finite on every one of its runs
there: a run whose value is missing (an undefined query, e.g. the modularity of an edgeless
synthetic graph, stored as missing) or infinite is a failure of the series, not a seed to drop.
The lead of the winner over the runner-up is "clear" when Welch's two-sided t-test over their
seeds gives p < :data:`CLEAR_P` (both with at least two seeds; the runner-up is beaten outright
when it failed on some run). That says the lead is larger than the noise between seeds in that
cell; it is not corrected for the many cells and series compared, so the best of many similar
series is favoured by chance (the winner's curse), and a single bold cell proves little.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from scipy import stats

from graphpriv.experiments.grid import RunsGrid, WinnerRule
from graphpriv.experiments.tables import BASELINE_PREFIX, Cell

__all__ = ["CLEAR_P", "Standing", "standings", "welch_p", "winners_markdown"]

#: A lead is clear when Welch's two-sided p-value is below this.
CLEAR_P = 0.05


@dataclass(frozen=True)
class Standing:
    """The best series of one (dataset, epsilon) cell on one metric.

    Attributes:
        dataset: the dataset. epsilon: the rows' ``epsilon`` setting. metric: the metric.
        winner: the series with the best mean among those defined and finite on every run there.
        winner_mean: its mean over seeds (the metric's unit, a fraction for the x 100 metrics).
        winner_seeds: how many seeds that mean is over. runner_up: the next series (a complete
            one by its mean, else one that failed on some run; None when the winner is alone).
        runner_up_mean: its mean over its finite values (None when it has none, or no runner-up).
        p: Welch's two-sided p-value of the winner against a complete runner-up (0.0 against one
            that failed on some run; nan when undefined: fewer than two seeds on a side, or no
            runner-up). clear: ``p <`` :data:`CLEAR_P` and the winner has at least two seeds.
        ranking: the complete series, best first, then those that failed on some run.
        margin: the mean over the winner's runs of its value minus the run's trivial baseline for
            the metric (the table's ``baseline:METRIC`` column, measured on each run's own split),
            over the runs that have both; None when the table has no such column.
    """

    dataset: str
    epsilon: float
    metric: str
    winner: str
    winner_mean: float
    winner_seeds: int
    runner_up: str | None
    runner_up_mean: float | None
    p: float
    clear: bool
    ranking: tuple[str, ...]
    margin: float | None = None


def welch_p(a: list[float], b: list[float]) -> float:
    """Welch's two-sided p-value for equal means of two lists of finite floats (scipy's
    ``ttest_ind(equal_var=False)``, Welch-Satterthwaite degrees of freedom).

    Returns:
        The p-value in [0, 1]; 0.0 when both variances are 0 and the means differ, 1.0 when they
        are equal (where scipy's statistic is undefined); nan when either list has fewer than two
        values.
    """
    if len(a) < 2 or len(b) < 2:
        return math.nan
    if statistics.variance(a) == 0.0 and statistics.variance(b) == 0.0:
        return 1.0 if statistics.mean(a) == statistics.mean(b) else 0.0
    return float(stats.ttest_ind(a, b, equal_var=False).pvalue)


@dataclass
class _Series:
    values: list[float]  # the finite values, in seed order
    margins: list[float]  # value minus the run's baseline, over the runs that have both
    complete: bool  # the metric defined and finite on every run


def _series(cells: list[Cell], metric: str, baseline: str | None) -> dict[tuple[str, float, str], _Series]:
    """{(dataset, epsilon, series): its runs' values} over the cells of rows with a series."""
    out: dict[tuple[str, float, str], _Series] = {}
    for cell in cells:
        if cell.row.series is None or "epsilon" not in cell.row.settings:
            continue
        found = out.setdefault((cell.dataset, float(cell.row.settings["epsilon"]), cell.row.series),
                               _Series([], [], True))
        for record in cell.records:
            value = record.metrics.get(metric)
            if value is None or not math.isfinite(value):
                found.complete = False
                continue
            found.values.append(value)
            if baseline is not None and baseline in record.metrics:
                found.margins.append(value - record.metrics[baseline])
    return out


def _closest_first(winner: str, rest: list[str], values: dict[str, list[float]]) -> list[str]:
    """``rest`` (ranked by mean) with, among the series tied in the mean with its first (to a
    relative 1e-9), the one the winner is least clearly ahead of (largest Welch p; an undefined p
    counts as largest) moved to the front: a lead is clear only if it is clear of every tied
    runner-up."""
    first = statistics.mean(values[rest[0]])
    # tied: equal up to rounding (relative errors of equal integer deviations can differ in the last bit)
    tied = [s for s in rest if math.isclose(statistics.mean(values[s]), first, rel_tol=1e-9, abs_tol=1e-12)]

    def p(series: str) -> float:
        value = welch_p(values[winner], values[series])
        return math.inf if math.isnan(value) else value

    closest = max(tied, key=p)  # the first of equal p-values: the grid's order
    return [closest] + [s for s in rest if s != closest]


def standings(grid: RunsGrid, cells: list[Cell], rule: WinnerRule) -> list[Standing]:
    """The best series per (dataset, epsilon) on ``rule.metric``, in the grid's dataset order and
    increasing epsilon; series of ``grid.winners_exclude`` are left out.

    Args:
        grid: the table. cells: its cells (:func:`~graphpriv.experiments.tables.cells_from_records`).
        rule: the metric and whether ``higher`` or ``lower`` is better.

    Returns:
        One :class:`Standing` per (dataset, epsilon) where some series not excluded has the metric
        defined and finite on every run. Ties in the mean go to the series listed first in the grid,
        except among the runners-up: of those tied in the mean (to a relative 1e-9), the runner-up
        is the one with the largest Welch p-value against the winner (the lead is clear only if it
        is clear of each).
    """
    sign = 1.0 if rule.better == "higher" else -1.0
    baseline = BASELINE_PREFIX + rule.metric if BASELINE_PREFIX + rule.metric in grid.columns else None
    found = _series(cells, rule.metric, baseline)
    order = list(dict.fromkeys(r.series for r in grid.rows if r.series is not None))
    out = []
    for dataset in grid.datasets:
        for epsilon in sorted({e for d, e, _ in found if d == dataset}):
            present = [s for s in order if s not in grid.winners_exclude and (dataset, epsilon, s) in found]
            complete = [s for s in present if found[(dataset, epsilon, s)].complete]
            if not complete:
                continue
            # a stable sort: equal means keep the grid's order
            ranked = sorted(complete, key=lambda s: -sign * statistics.mean(found[(dataset, epsilon, s)].values))
            if len(ranked) > 2:
                ranked[1:] = _closest_first(ranked[0], ranked[1:], {s: found[(dataset, epsilon, s)].values
                                                                    for s in ranked})
            ranked += [s for s in present if s not in complete]
            best = found[(dataset, epsilon, ranked[0])]
            second = found[(dataset, epsilon, ranked[1])] if len(ranked) > 1 else None
            if second is None:
                p = math.nan
            elif not second.complete:
                p = 0.0
            else:
                p = welch_p(best.values, second.values)
            out.append(Standing(
                dataset=dataset, epsilon=epsilon, metric=rule.metric, winner=ranked[0],
                winner_mean=statistics.mean(best.values), winner_seeds=len(best.values),
                runner_up=ranked[1] if second is not None else None,
                runner_up_mean=statistics.mean(second.values) if second is not None and second.values else None,
                p=p, clear=len(best.values) >= 2 and not math.isnan(p) and p < CLEAR_P, ranking=tuple(ranked),
                margin=statistics.mean(best.margins) if best.margins else None))
    return out


def _cell_text(s: Standing | None) -> str:
    if s is None:
        return "-"
    name = f"**{s.winner}**" if s.clear else s.winner
    if s.margin is not None:
        name += f" ({100 * s.margin:+.2f})"
    return name if s.clear or s.runner_up is None else f"{name} ~ {s.runner_up}"


def winners_markdown(grid: RunsGrid, cells: list[Cell]) -> str:
    """The "which series wins" section of a ``runs`` table: per metric of ``grid.winners``, a
    dataset x epsilon table of the best series (``**bold**`` when its lead is clear, ``A ~ B``
    when it is not shown to be ahead of the runner-up B; with the winner's margin over the trivial
    baseline, x 100, where the table has a ``baseline:METRIC`` column), then each series' count of
    cells won.

    Args:
        grid: the table (with ``winners`` set). cells: its cells.

    Returns:
        Markdown ending in a newline; empty when ``grid.winners`` is empty or no metric of it has
        a winner anywhere.
    """
    parts = []
    for rule in grid.winners:
        found = standings(grid, cells, rule)
        if not found:
            continue
        epsilons = sorted({s.epsilon for s in found})
        by_key = {(s.dataset, s.epsilon): s for s in found}
        margin = any(s.margin is not None for s in found)
        lines = [f"`{rule.metric}` ({rule.better} is better"
                 + ("; in brackets the winner's mean minus its runs' trivial baseline, x 100" if margin else "")
                 + "):", "",
                 "| dataset |" + "".join(f" eps {e:g} |" for e in epsilons),
                 "|---|" + "---|" * len(epsilons)]
        for dataset in grid.datasets:
            if any((dataset, e) in by_key for e in epsilons):
                lines.append(f"| {dataset} |" + "".join(f" {_cell_text(by_key.get((dataset, e)))} |"
                                                        for e in epsilons))
        wins: dict[str, list[int]] = {}
        for s in found:
            won = wins.setdefault(s.winner, [0, 0])
            won[0] += 1
            won[1] += s.clear
        counts = ", ".join(f"{name} {won[0]} ({won[1]} clear)"
                           for name, won in sorted(wins.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0])))
        parts.append("\n".join([*lines, "", f"Cells won, of {len(found)}: {counts}.", ""]))
    if not parts:
        return ""
    intro = ("The best mean over seeds in each (dataset, epsilon) cell, among the series whose metric is "
             "defined and finite on every run there (-: none). **Bold**: the lead over the runner-up is clear "
             f"(Welch's two-sided t-test over the seeds, p < {CLEAR_P:g}, or the runner-up failed on some run); "
             "A ~ B: A is not shown to be ahead of B (within the noise, or too few seeds to tell). No "
             "correction for the many cells and series compared: the best of several similar series is "
             "favoured by chance.")
    if grid.winners_exclude:
        intro += f" Left out: {', '.join(grid.winners_exclude)}."
    return "\n".join(["#### Which series wins where", "", intro, "", *parts])
