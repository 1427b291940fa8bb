"""Privacy-utility plots from the results store (matplotlib, PNG); ``graphpriv plot`` draws them.

    graphpriv plot --methods dplp-ps lapgraph-sgnn --datasets yeast usair celegans pb \
        --out docs/dplp_eps_sweep.png
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from itertools import cycle
from pathlib import Path

import numpy as np

from graphpriv.errors import ConfigError
from graphpriv.experiments.grid import RunsGrid
from graphpriv.experiments.store import ResultStore
from graphpriv.experiments.tables import BASELINE_PREFIX, RunRecord


def epsilon_curves(store: ResultStore, method: str, dataset: str, metric: str = "test_auc",
                   **config_filter) -> dict[float, list[float]]:
    """{target epsilon: [metric per seed]} over the stored runs of ``method`` on ``dataset``.

    Only runs whose config matches ``config_filter`` (e.g. ``accounting="rigorous"``,
    ``backbone="gcn"``) are used.
    """
    curves: dict[float, list[float]] = defaultdict(list)
    for result in store.results(method=method, dataset=dataset):
        if all(result.config.get(k) == v for k, v in config_filter.items()) and result.privacy:
            curves[float(result.privacy.target_epsilon)].append(result.metrics[metric])
    return dict(sorted(curves.items()))


def _panels(rows: int, cols: int):
    """A headless matplotlib figure with a rows x cols grid of 4 x 3.4 inch panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(rows, cols, figsize=(4 * cols, 3.4 * rows), squeeze=False)


def _save(fig, out: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def _band(ax, points: dict[float, list[float]], label: str, color: str | None = None, *, alpha: float = 0.2,
          **line: object):
    """Mean (x 100) against x with a ±1 std band, one point per key of ``points`` (``color``: a
    matplotlib colour, default the axes' next; ``alpha``: the band's; ``line``: more of
    ``ax.plot``'s styles, the marker ``"o"`` unless given). Returns the line (a legend handle)."""
    x = np.array(list(points))
    mean = np.array([np.mean(v) for v in points.values()]) * 100
    std = np.array([np.std(v) for v in points.values()]) * 100
    (handle,) = ax.plot(x, mean, label=label, color=color, **{"marker": "o", **line})
    ax.fill_between(x, mean - std, mean + std, alpha=alpha, color=handle.get_color())
    return handle


def plot_epsilon_sweep(store: ResultStore, methods: list[str], datasets: list[str], out: Path,
                       epsilons: list[float] | None = None, **config_filter) -> Path:
    """One panel per dataset: mean metric vs epsilon per method, with a ±1 std band."""
    fig, axes = _panels(1, len(datasets))
    for ax, dataset in zip(axes[0], datasets):
        for method in methods:
            curve = epsilon_curves(store, method, dataset, **config_filter)
            if epsilons is not None:
                curve = {e: v for e, v in curve.items() if e in epsilons}
            if not curve:
                continue
            _band(ax, curve, method)
        ax.set_title(dataset)
        ax.set_xlabel("epsilon (edge-level, delta = 1e-5)")
        ax.set_ylabel("test AUC (%)")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    return _save(fig, out)


def parse_curve(spec: str) -> tuple[str, str, dict]:
    """``LABEL=METHOD[:key=value,...]`` (values as JSON: 1, 0.5, null, "paper" or bare words) ->
    (label, method, config filter).

    Raises:
        ConfigError: a spec without ``=``.
    """
    import json

    if "=" not in spec.split(":", 1)[0]:
        raise ConfigError(f"curve spec {spec!r} must look like LABEL=METHOD[:key=value,...]")
    label, rest = spec.split("=", 1)
    method, _, filters = rest.partition(":")
    config = {}
    for item in filter(None, filters.split(",")):
        key, _, value = item.partition("=")
        try:
            config[key] = json.loads(value)
        except json.JSONDecodeError:
            config[key] = value
    return label, method, config


def plot_curves(store: ResultStore, curves: list[tuple[str, str, dict]], datasets: list[str], out: Path, *,
                metric: str, ylabel: str, xlabel: str = "epsilon") -> Path:
    """One panel per dataset: mean ``metric`` (x 100, ±1 std band) against the target epsilon, one
    line per (label, method, config filter) in ``curves``."""
    fig, axes = _panels(1, len(datasets))
    for ax, dataset in zip(axes[0], datasets):
        for label, method, config in curves:
            curve = epsilon_curves(store, method, dataset, metric, **config)
            if curve:
                _band(ax, curve, label)
        ax.set_title(dataset)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    return _save(fig, out)


#: The knob each publishing method sweeps (alpha for PPGSL, the baseline's own knob otherwise).
KNOBS = {"ppgsl": "alpha", "random-perturb": "ratio", "dice": "ratio", "edgerand": "epsilon", "lapgraph": "epsilon"}


def tradeoff_points(store: ResultStore, method: str, dataset: str, utility: str = "lp_auc",
                    attack: str = "attack_auc_gae-sim", **config_filter) -> list[tuple[float, float, float, int]]:
    """``[(knob, mean utility, mean attack AUC, seeds)]`` over the stored runs, sorted by knob.

    Args:
        utility: ``lp_auc`` or ``nc_f1``. attack: the attack metric (GAE+sim by default, the
            paper's main figures). config_filter: config values runs must have (e.g. ``k=1``).
    """
    knob = KNOBS[method]
    groups: dict[float, list[tuple[float, float]]] = defaultdict(list)
    for result in store.results(method=method, dataset=dataset):
        if not all(result.config.get(k) == v for k, v in config_filter.items()):
            continue
        if utility in result.metrics and attack in result.metrics:
            groups[float(result.config[knob])].append((result.metrics[utility], result.metrics[attack]))
    return [(k, float(np.mean([u for u, _ in v])), float(np.mean([a for _, a in v])), len(v))
            for k, v in sorted(groups.items())]


#: Runs a trade-off curve keeps: features released, and PPGSL at its defaults (the ablation
#: runs with other k, mu, protocol or head sit in the same store and are not on the curve).
TRADEOFF_FILTERS = {"ppgsl": {"k": 1, "mu": 50, "protocol": "sitp", "head": "cos", "parameterization": "sparse"}}


def plot_tradeoff(store: ResultStore, methods: list[str], datasets: list[str], out: Path, *,
                  utilities: tuple[str, ...] = ("lp_auc", "nc_f1")) -> Path:
    """PPGSL Fig. 2/3 style: one panel per (utility, dataset), utility (x) against the GAE+sim
    attack AUC (y), one curve per method through its knob values (runs filtered by
    :data:`TRADEOFF_FILTERS` and ``use_features=True``); 50% is the ideal attack AUC."""
    fig, axes = _panels(len(utilities), len(datasets))
    for row, utility in zip(axes, utilities):
        for ax, dataset in zip(row, datasets):
            for method in methods:
                points = tradeoff_points(store, method, dataset, utility, use_features=True,
                                         **TRADEOFF_FILTERS.get(method, {}))
                if points:
                    ax.plot([100 * p[1] for p in points], [100 * p[2] for p in points], marker="o",
                            label=f"{method} ({KNOBS[method]})")
            ax.axhline(50, color="grey", lw=0.8, ls="--")
            ax.set_title(dataset)
            ax.set_xlabel({"lp_auc": "LP AUC (%)", "nc_f1": "NC micro-F1 (%)"}.get(utility, utility))
            ax.set_ylabel("GAE+sim attack AUC (%)")
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    return _save(fig, out)


#: DPLP-rank's Fig. 3 curves: method ids in the legend's order.
RANK_SWEEP_METHODS = ("rank-nonprivate", "dplp-rank", "dplp-rank-lin", "rank-staircase", "rank-laplace",
                      "rank-exponential")


def rank_sweep_points(store: ResultStore, method: str, dataset: str, base: str, knob: str,
                      metric: str = "auc_at_k") -> dict[float, list[float]]:
    """{knob value: [metric per seed]} for one DPLP-rank sweep line (paper Fig. 3).

    ``knob`` is ``sigma_prot`` (runs at eps_p = 0.1) or ``epsilon_p`` (runs at sigma_prot = 0.3);
    runs with other K or accounting than the defaults (30, rigorous) are left out.
    """
    fixed = {"sigma_prot": ("epsilon_p", 0.1), "epsilon_p": ("sigma_prot", 0.3)}[knob]
    points: dict[float, list[float]] = defaultdict(list)
    for result in store.results(method=method, dataset=dataset):
        c = result.config
        if (c.get("base") == base and c.get("top_k") == 30 and c.get("accounting") == "rigorous"
                and (method == "rank-nonprivate" and knob == "sigma_prot" or c.get(fixed[0]) == fixed[1])):
            points[float(c[knob])].append(result.metrics[metric])
    return dict(sorted(points.items()))


def plot_rank_sweeps(store: ResultStore, dataset: str, out: Path, bases: tuple[str, ...] = ("aa", "gcn"),
                     metric: str = "auc_at_k") -> str:
    """Paper Fig. 3: AUC@K against sigma_prot (top row) and eps_p (bottom row), one column per base
    score, mean ± std band over seeds. Writes ``out`` (PNG) and returns the numbers as Markdown."""
    knobs = ("sigma_prot", "epsilon_p")
    fig, axes = _panels(len(knobs), len(bases))
    lines = []
    for row, knob in zip(axes, knobs):
        for ax, base in zip(row, bases):
            table: dict[str, dict[float, list[float]]] = {}
            for method in RANK_SWEEP_METHODS:
                points = rank_sweep_points(store, method, dataset, base, knob, metric)
                if not points:
                    continue
                table[method] = points
                if method == "rank-nonprivate" and knob == "epsilon_p":  # no epsilon: a level line
                    level = 100 * np.mean([v for vals in points.values() for v in vals])
                    ax.axhline(level, color="C0", ls="--", lw=1, label=method)
                    continue
                _band(ax, points, method, color=f"C{RANK_SWEEP_METHODS.index(method)}")  # one colour per method
            ax.set_title(f"{dataset}, base {base.upper()}")
            ax.set_xlabel(knob + (" (eps_p = 0.1)" if knob == "sigma_prot" else " (sigma_prot = 0.3)"))
            ax.set_ylabel("AUC@K (%)")
            ax.grid(alpha=0.3)
            values = sorted({v for points in table.values() for v in points})
            lines += [(f"\n{dataset}, base {base.upper()}, {metric} (%) against {knob} (mean ± std over seeds, "
                       "seeds in brackets):\n"), "| method | " + " | ".join(f"{v:g}" for v in values) + " |",
                      "|---" * (len(values) + 1) + "|"]
            for method, points in table.items():
                cells = [f"{100 * np.mean(points[v]):.1f} ± {100 * np.std(points[v]):.1f} ({len(points[v])})"
                         if v in points else "-" for v in values]
                lines.append(f"| {method} | " + " | ".join(cells) + " |")
    axes[0][0].legend(fontsize=7)
    _save(fig, out)
    return "\n".join(lines).lstrip() + "\n"


def baseline_lines(grid: RunsGrid, records: Iterable[RunRecord]) -> dict[str, float]:
    """The baselines of a ``runs`` table's metric that its plot draws, over one dataset's records.

    Each column ``baseline:METRIC`` (labelled "trivial baseline") or ``baseline:METRIC@NAME``
    (labelled NAME, e.g. "input graph") of the table, METRIC its main metric, averaged over the
    records of series rows that carry it (a reference row's own baseline, e.g. CN's chance, may
    differ, and is not drawn).

    Args:
        grid: the table. records: one dataset's runs.

    Returns:
        ``{label: mean}`` as fractions, in the table's column order; a column no record carries is
        left out.
    """
    by_label = {row.label: row for row in grid.rows}
    found: dict[str, float] = {}
    for column, label in _baseline_columns(grid).items():
        values = [r.metrics[column] for r in records
                  if column in r.metrics and r.row in by_label and by_label[r.row].series is not None]
        if values:
            found[label] = float(np.mean(values))
    return found


def _baseline_columns(grid: RunsGrid) -> dict[str, str]:
    """``{column: label}``: the table's ``baseline:METRIC`` ("trivial baseline") and
    ``baseline:METRIC@NAME`` (NAME) columns of its main metric, in column order."""
    prefix = f"{BASELINE_PREFIX}{grid.metric}"
    return {c: c.partition("@")[2] or "trivial baseline" for c in grid.columns
            if c == prefix or c.startswith(prefix + "@")}


#: Colours of a grid plot's series, in the table's order; past 20, the markers tell them apart.
GRID_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
                "tab:olive", "tab:cyan", "navy", "darkgoldenrod", "lime", "crimson", "indigo", "sienna",
                "hotpink", "teal", "slategray", "gold", "maroon")
#: Colours of its rows without a series (the non-private references), apart from the series' ones;
#: past 8, the dash patterns tell them apart.
REFERENCE_COLOURS = ("black", "dimgray", "saddlebrown", "darkviolet", "darkgreen", "deeppink", "darkorange",
                     "steelblue")
GRID_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
GRID_DASHES = ((4, 2), (8, 2), (2, 2), (8, 2, 2, 2))


def grid_styles(grid: RunsGrid) -> dict[str, dict[str, object]]:
    """Each series and each non-private row of a ``runs`` table, with its matplotlib style: the same
    in every panel of :func:`plot_grid`, a different (colour, marker) or (colour, dashes) for each.

    Args:
        grid: the table.

    Returns:
        ``{label: {"color", "marker"}}`` for a series (its name), ``{label: {"color", "dashes"}}``
        for a row without a series (its label), in the table's row order.
    """
    series = list(dict.fromkeys(row.series for row in grid.rows if row.series is not None))
    lines = [row.label for row in grid.rows if row.series is None]
    styles: dict[str, dict[str, object]] = {}
    for i, name in enumerate(series):
        styles[name] = {"color": GRID_COLOURS[i % len(GRID_COLOURS)],
                        "marker": GRID_MARKERS[(i // len(GRID_COLOURS)) % len(GRID_MARKERS)]}
    for i, label in enumerate(lines):
        styles[label] = {"color": REFERENCE_COLOURS[i % len(REFERENCE_COLOURS)],
                         "dashes": GRID_DASHES[(i // len(REFERENCE_COLOURS)) % len(GRID_DASHES)]}
    return styles


#: Colours of a grid plot's baselines (dotted), in the table's column order.
BASELINE_COLOURS = ("grey", "rosybrown", "darkkhaki", "lightslategray")


def draw_grid(grid: RunsGrid, records: Iterable[RunRecord]):
    """The figure of :func:`plot_grid`, not saved: one panel per dataset with runs and one legend
    for them all, below the panels, naming each entry once in the table's order.

    Args:
        grid: the table. records: its runs.

    Returns:
        A ``matplotlib.figure.Figure`` (not registered with pyplot: nothing to close, and the
        user's backend is left as it is).

    Raises:
        ConfigError: no record of the grid's metric to plot.
    """
    from matplotlib.figure import Figure

    by_label = {row.label: row for row in grid.rows}
    metric = grid.metric
    usable = [r for r in records if r.row in by_label and metric in r.metrics]
    datasets = [d for d in grid.datasets if any(r.dataset == d for r in usable)]
    if not datasets:
        raise ConfigError(f"{grid.name}: no run with {metric} to plot")
    styles = grid_styles(grid)
    baseline_colour = dict(zip(_baseline_columns(grid).values(), cycle(BASELINE_COLOURS)))
    cols = min(3, len(datasets))
    rows = -(-len(datasets) // cols)
    entries = len(styles) + len(baseline_colour)
    ncol = min(4, max(entries, 1))
    legend_inches = 0.16 * -(-entries // ncol) + 0.2
    fig = Figure(figsize=(4.4 * cols, 3.6 * rows + legend_inches))
    axes = fig.subplots(rows, cols, squeeze=False)
    handles: dict[str, object] = {}
    for i, dataset in enumerate(datasets):
        ax = axes[i // cols][i % cols]
        series: dict[str, dict[float, list[float]]] = {}
        lines: dict[str, list[float]] = {}
        for record in (r for r in usable if r.dataset == dataset):
            row = by_label[record.row]
            if row.series is None:
                lines.setdefault(row.label, []).append(record.metrics[metric])
            else:
                epsilon = float(row.settings["epsilon"])
                series.setdefault(row.series, defaultdict(list))[epsilon].append(record.metrics[metric])
        for name in (n for n in styles if n in series):
            handles.setdefault(name, _band(ax, dict(sorted(series[name].items())), name, styles[name]["color"],
                                           alpha=0.12, marker=styles[name]["marker"], markersize=4, linewidth=1.2))
        for label in (n for n in styles if n in lines):
            handle = ax.axhline(100 * float(np.mean(lines[label])), linewidth=1, color=styles[label]["color"],
                                dashes=styles[label]["dashes"], label=label)
            handles.setdefault(label, handle)
        for label, value in baseline_lines(grid, [r for r in usable if r.dataset == dataset]).items():
            handles.setdefault(label, ax.axhline(100 * value, linestyle=":", linewidth=1.2,
                                                 color=baseline_colour[label], label=label))
        ax.set_xscale("log", base=2)
        ax.set(title=dataset, xlabel="epsilon", ylabel=f"{metric} (%)")
    for j in range(len(datasets), axes.size):
        axes[j // cols][j % cols].set_visible(False)
    order = [name for name in [*styles, *baseline_colour] if name in handles]  # the table's order
    fig.legend([handles[name] for name in order], order, loc="lower center", ncol=ncol, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, legend_inches / fig.get_size_inches()[1], 1, 1))
    return fig


def plot_grid(grid: RunsGrid, records: Iterable[RunRecord], out: Path) -> Path:
    """A ``runs`` table's plot (:attr:`~graphpriv.experiments.grid.RunsGrid.plot` ``epsilon``): one
    panel per dataset with runs, the table's metric (x 100) against epsilon (log 2 axis) for every
    series of rows (mean and a ±1 std band over the seeds), each row without a series as a dashed
    horizontal line at its mean (a non-private model), and the baselines of the metric the table
    shows (:func:`baseline_lines`) as dotted lines. Each entry keeps its style in every panel
    (:func:`grid_styles`), and one legend below the panels names each once.

    Args:
        grid: the table. records: its runs (from the store or from ``docs/results/``). out: the PNG.

    Returns:
        ``out``.

    Raises:
        ConfigError: no record of the grid's metric to plot.
    """
    fig = draw_grid(grid, records)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    return out
