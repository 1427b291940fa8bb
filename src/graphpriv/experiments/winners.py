"""Which series wins where: for each dataset and epsilon of a ``runs`` grid, the best series on a
metric, and whether its lead over the runner-up is clear of the seed-to-seed noise.

A grid asks for it with :attr:`~graphpriv.experiments.grid.RunsGrid.winners` (the metrics, each
with its direction) and :attr:`~graphpriv.experiments.grid.RunsGrid.winners_exclude` (series held
apart, e.g. a node-level generator beside edge-level ones: a stronger privacy unit at the same
epsilon is not a like-for-like comparison). The section is rendered from the same records as the
table (:mod:`graphpriv.experiments.tables`), so ``graphpriv reproduce TABLE --from-results`` gives
it byte for byte.

The rule for "clear" is a rough one, stated where it is printed: Welch's t statistic of the
winner's seeds against the runner-up's is at least 2 (about a two-sided 5% test for five seeds a
side, with no correction for the many cells compared). It says when a lead is larger than the
noise between seeds, not that the methods differ in general.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from graphpriv.experiments.grid import RunsGrid, WinnerRule
from graphpriv.experiments.tables import BASELINE_PREFIX, Cell

__all__ = ["CLEAR_T", "Standing", "standings", "welch_t", "winners_markdown"]

#: The Welch t statistic at or above which a lead counts as clear.
CLEAR_T = 2.0


@dataclass(frozen=True)
class Standing:
    """The best series of one (dataset, epsilon) cell on one metric.

    Attributes:
        dataset: the dataset. epsilon: the rows' ``epsilon`` setting. metric: the metric.
        winner: the series with the best mean. winner_mean: its mean over seeds (the metric's
            unit, a fraction for the x 100 metrics). runner_up: the second best (None when only one
            series has a value there). runner_up_mean: its mean (None likewise). t: Welch's t of
            the winner against the runner-up (``inf`` when both are constant and differ; nan when
            undefined: a side with fewer than two finite seeds, or no runner-up). clear: ``t >=``
            :data:`CLEAR_T`, or the runner-up's value is not finite and the winner's is.
        ranking: every series with a value there, best first.
        baseline_mean: the mean of the winner's runs' trivial baseline for the metric (the table's
            ``baseline:METRIC`` column, measured on each run's own split), None when the table has
            no such column.
    """

    dataset: str
    epsilon: float
    metric: str
    winner: str
    winner_mean: float
    runner_up: str | None
    runner_up_mean: float | None
    t: float
    clear: bool
    ranking: tuple[str, ...]
    baseline_mean: float | None = None


def welch_t(a: list[float], b: list[float]) -> float:
    """Welch's t statistic ``(mean(a) - mean(b)) / sqrt(var(a)/|a| + var(b)/|b|)`` (sample
    variances), for two lists of finite floats.

    Returns:
        The statistic; ``+-inf`` when both variances are 0 and the means differ, 0.0 when they are
        equal; nan when either list has fewer than two values.
    """
    if len(a) < 2 or len(b) < 2:
        return math.nan
    diff = statistics.mean(a) - statistics.mean(b)
    scale = math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))
    if scale == 0.0:
        return 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
    return diff / scale


def _series_values(cells: list[Cell], metric: str) -> dict[tuple[str, float, str], list[float]]:
    """{(dataset, epsilon, series): the metric per seed} over the cells of rows with a series; a
    seed whose value is missing (an undefined query) is left out, a non-finite one kept."""
    out: dict[tuple[str, float, str], list[float]] = {}
    for cell in cells:
        if cell.row.series is None or "epsilon" not in cell.row.settings:
            continue
        key = (cell.dataset, float(cell.row.settings["epsilon"]), cell.row.series)
        out.setdefault(key, []).extend(r.metrics[metric] for r in cell.records if metric in r.metrics)
    return {k: v for k, v in out.items() if v}


def _score(values: list[float], higher: bool) -> float:
    """The mean oriented so that larger is better; a non-finite seed makes the series worst."""
    if not all(math.isfinite(v) for v in values):
        return -math.inf
    mean = statistics.mean(values)
    return mean if higher else -mean


def standings(grid: RunsGrid, cells: list[Cell], rule: WinnerRule) -> list[Standing]:
    """The best series per (dataset, epsilon) on ``rule.metric``, in the grid's dataset order and
    increasing epsilon; series of ``grid.winners_exclude`` are left out.

    Args:
        grid: the table. cells: its cells (:func:`~graphpriv.experiments.tables.cells_from_records`).
        rule: the metric and whether ``higher`` or ``lower`` is better.

    Returns:
        One :class:`Standing` per (dataset, epsilon) where some series has a value. Ties in the
        mean go to the series listed first in the grid.
    """
    higher = rule.better == "higher"
    values = _series_values(cells, rule.metric)
    baselines = (_series_values(cells, BASELINE_PREFIX + rule.metric)
                 if BASELINE_PREFIX + rule.metric in grid.columns else {})
    order = list(dict.fromkeys(r.series for r in grid.rows if r.series is not None))
    out = []
    for dataset in grid.datasets:
        for epsilon in sorted({e for d, e, _ in values if d == dataset}):
            present = [s for s in order if s not in grid.winners_exclude and (dataset, epsilon, s) in values]
            if not present:
                continue
            ranked = sorted(present, key=lambda s: (-_score(values[(dataset, epsilon, s)], higher), order.index(s)))
            best = values[(dataset, epsilon, ranked[0])]
            second = values.get((dataset, epsilon, ranked[1])) if len(ranked) > 1 else None
            best_finite = all(math.isfinite(v) for v in best)
            if second is None:
                t, clear = math.nan, False
            elif best_finite and not all(math.isfinite(v) for v in second):
                t, clear = math.inf, True
            else:
                t = welch_t(best, second) if best_finite else math.nan
                t = t if higher else -t
                clear = not math.isnan(t) and t >= CLEAR_T
            out.append(Standing(dataset=dataset, epsilon=epsilon, metric=rule.metric, winner=ranked[0],
                                winner_mean=statistics.mean(best), runner_up=ranked[1] if second else None,
                                runner_up_mean=statistics.mean(second) if second else None, t=t, clear=clear,
                                ranking=tuple(ranked),
                                baseline_mean=(statistics.mean(baselines[(dataset, epsilon, ranked[0])])
                                               if (dataset, epsilon, ranked[0]) in baselines else None)))
    return out


def _epsilon_text(epsilon: float) -> str:
    return f"{epsilon:g}"


def winners_markdown(grid: RunsGrid, cells: list[Cell]) -> str:
    """The "which series wins" section of a ``runs`` table: per metric of ``grid.winners``, a
    dataset x epsilon table of the best series (``**bold**`` when its lead is clear, ``A ~ B``
    when the runner-up B is within the noise; with the winner's margin over the trivial baseline,
    x 100, where the table has a ``baseline:METRIC`` column), then each series' count of cells won.

    Args:
        grid: the table (with ``winners`` set). cells: its cells.

    Returns:
        Markdown (empty when ``grid.winners`` is empty).
    """
    if not grid.winners:
        return ""
    lines = ["#### Which series wins where", "",
             (f"The best mean over seeds in each (dataset, epsilon) cell. **Bold**: the lead over the "
              f"runner-up is clear (Welch's t >= {CLEAR_T:g} over the seeds, a rough rule with no "
              f"correction for the many cells); A ~ B: B is within the noise.")
             + (f" Left out: {', '.join(grid.winners_exclude)} (another privacy unit)." if grid.winners_exclude
                else ""), ""]
    for rule in grid.winners:
        found = standings(grid, cells, rule)
        if not found:
            continue
        epsilons = sorted({s.epsilon for s in found})
        by_key = {(s.dataset, s.epsilon): s for s in found}
        margin = any(s.baseline_mean is not None for s in found)
        lines += [f"`{rule.metric}` ({rule.better} is better"
                  + ("; in brackets the winner's mean minus its runs' trivial baseline, x 100" if margin else "")
                  + "):", "",
                  "| dataset |" + "".join(f" eps {_epsilon_text(e)} |" for e in epsilons),
                  "|---|" + "---|" * len(epsilons)]
        for dataset in grid.datasets:
            if not any((dataset, e) in by_key for e in epsilons):
                continue
            row = f"| {dataset} |"
            for e in epsilons:
                s = by_key.get((dataset, e))
                if s is None:
                    row += " - |"
                    continue
                name = (f"**{s.winner}**" if s.clear else f"{s.winner} ~ {s.runner_up}" if s.runner_up
                        else s.winner)
                if s.baseline_mean is not None:
                    name += f" ({100 * (s.winner_mean - s.baseline_mean):+.2f})"
                row += f" {name} |"
            lines.append(row)
        wins: dict[str, list[int]] = {}
        for s in found:
            won = wins.setdefault(s.winner, [0, 0])
            won[0] += 1
            won[1] += s.clear
        counts = ", ".join(f"{name} {won[0]} ({won[1]} clear)"
                           for name, won in sorted(wins.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0])))
        lines += ["", f"Cells won, of {len(found)}: {counts}.", ""]
    return "\n".join(lines)
