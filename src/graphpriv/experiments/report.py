"""``graphpriv report --store STORE``: privacy-utility curves, attack-vs-utility scatter plots and
a Markdown summary of every result in a results store.

- ``<dataset>_<metric>_epsilon.{png,svg}``: the metric against the target epsilon, one line per
  method and accounting mode (mean over seeds, ±1 std band), for every private method.
- ``<dataset>_attack_utility.{png,svg}``: for runs that measured the GAE+sim attack (publishing,
  synthesis), attack AUC against link-prediction AUC, one marker per method, a point per stored
  configuration (mean over seeds).
- ``summary.md``: per dataset, method, accounting and epsilon: the utility metric (mean ± std), n.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

import numpy as np

from graphpriv.experiments.plots import _band, _panels
from graphpriv.experiments.store import ResultStore, config_hash
from graphpriv.methods.base import Result

__all__ = ["UTILITY_METRICS", "utility_metric", "variant", "write_report"]

#: The utility metric a result is summarised by: the first of these it has.
UTILITY_METRICS = ("test_auc", "accuracy", "auc_at_k", "lp_auc", "nc_f1", "precision_at_k")
ATTACK_METRIC = "attack_auc_gae-sim"


def utility_metric(result: Result) -> str | None:
    """The first of :data:`UTILITY_METRICS` in the result's metrics (None if none)."""
    return next((m for m in UTILITY_METRICS if m in result.metrics), None)


def variant(result: Result) -> str:
    """The settings where the result's config departs from its method's defaults (epsilon,
    accounting and delta left out): what distinguishes e.g. the rows of a sweep at one epsilon."""
    from graphpriv.errors import ConfigError
    from graphpriv.experiments.registry import make_config

    try:
        defaults = make_config(result.method, {}).model_dump(mode="json")
    except ConfigError:
        defaults = {}
    return ", ".join(f"{k}={v}" for k, v in sorted(result.config.items())
                     if k not in ("epsilon", "accounting", "delta") and defaults.get(k, object()) != v)


def _label(result: Result) -> str:
    mode = result.privacy.accounting if result.privacy else "non-private"
    extra = variant(result)
    return f"{result.method} ({mode}{'; ' + extra if extra else ''})"


def _save(fig, base: Path) -> list[Path]:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    paths = [base.with_suffix(".png"), base.with_suffix(".svg")]
    for path in paths:
        fig.savefig(path, dpi=120)
    plt.close(fig)
    return paths


def write_report(store: str | Path, out: str | Path) -> list[Path]:
    """Write the plots and ``summary.md`` for every stored successful result into ``out``.

    Returns:
        The written files.

    Raises:
        ValueError: the store holds no successful result.
    """
    results = ResultStore(store).results()
    if not results:
        raise ValueError(f"{store} holds no successful result")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    by_dataset: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by_dataset[r.dataset].append(r)
    summary = [f"# Results in {store}", "", f"{len(results)} successful runs, {len(by_dataset)} datasets.", ""]
    for dataset, rs in sorted(by_dataset.items()):
        name = Path(dataset).stem if "/" in dataset else dataset
        # curves: metric vs target epsilon per (method, accounting), one figure per metric
        curves: dict[str, dict[str, dict[float, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
        for r in rs:
            metric = utility_metric(r)
            if metric and r.privacy is not None and r.privacy.target_epsilon:
                curves[metric][_label(r)][float(r.privacy.target_epsilon)].append(r.metrics[metric])
        for metric, lines in curves.items():
            fig, axes = _panels(1, 1)
            ax = axes[0][0]
            for label, points in sorted(lines.items()):
                _band(ax, dict(sorted(points.items())), label)
            ax.set_xscale("log", base=2)
            ax.set_xlabel("target epsilon")
            ax.set_ylabel(f"{metric} (%)")
            ax.set_title(f"{name}: {metric} against epsilon")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=6)
            written += _save(fig, out / f"{name}_{metric}_epsilon")
        # attack vs utility: one point per stored configuration, mean over its seeds
        points: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
        for r in rs:
            if ATTACK_METRIC in r.metrics and "lp_auc" in r.metrics:
                points[r.method][config_hash(r.config)].append((r.metrics["lp_auc"], r.metrics[ATTACK_METRIC]))
        if points:
            fig, axes = _panels(1, 1)
            ax = axes[0][0]
            for method, configs in sorted(points.items()):
                xy = np.array([np.mean(v, axis=0) for v in configs.values()]) * 100
                ax.scatter(xy[:, 0], xy[:, 1], label=method, s=18)
            ax.set_xlabel("link-prediction AUC (%)")
            ax.set_ylabel("GAE+sim attack AUC (%)")
            ax.set_title(f"{name}: attack against utility")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=6)
            written += _save(fig, out / f"{name}_attack_utility")
        # summary rows
        summary += [f"## {dataset}", "", "| method | settings | accounting | epsilon | metric | mean ± std (%) | n |",
                    "|---|---|---|---|---|---|---|"]
        cells: dict[tuple, list[float]] = defaultdict(list)
        for r in rs:
            metric = utility_metric(r)
            if metric is None:
                continue
            mode = r.privacy.accounting if r.privacy else "non-private"
            eps = float(r.privacy.target_epsilon) if r.privacy and r.privacy.target_epsilon else -1.0
            cells[(r.method, variant(r) or "defaults", mode, eps, metric)].append(100 * r.metrics[metric])
        for (method, settings, mode, eps, metric), values in sorted(cells.items()):
            std = statistics.stdev(values) if len(values) > 1 else 0.0
            summary.append(f"| {method} | {settings} | {mode} | {'-' if eps < 0 else f'{eps:g}'} | {metric} | {statistics.mean(values):.2f} ± "
                           f"{std:.2f} | {len(values)} |")
        summary.append("")
    path = out / "summary.md"
    path.write_text("\n".join(summary))
    return [*written, path]
