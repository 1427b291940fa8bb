"""``graphpriv report --store STORE``: privacy-utility curves, attack-vs-utility scatter plots and
a Markdown summary of every result in a results store.

- ``<name>_<metric>_epsilon.{png,svg}``: the metric against the target epsilon, one line per
  method and accounting mode (mean over seeds, ±1 std band), for every private method.
- ``<name>_attack_utility.{png,svg}``: for runs that measured the GAE+sim attack (publishing,
  synthesis), attack AUC against link-prediction AUC, one marker per method, a point per stored
  configuration (mean over seeds).
- ``summary.md``: per dataset, method, accounting and epsilon: the utility metric (mean ± std), n;
  it names each dataset's plot files and the store rows that were skipped.

``<name>`` is the dataset's registry id, or a graph file's name without its suffix, made safe for
file names (:func:`plot_names`); datasets whose names would collide (``g.txt`` and ``g.csv``,
``a/g.txt`` and ``b/g.txt``) get a short hash of the full dataset string, so no file overwrites
another. A store row that is not a valid result is skipped and named ("skipped row 17: reason").
"""

from __future__ import annotations

import hashlib
import logging
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from graphpriv.errors import ConfigError, StoreError
from graphpriv.experiments.plots import _band, _panels
from graphpriv.experiments.store import ResultStore, config_hash, one_line
from graphpriv.methods.base import Result

__all__ = ["UTILITY_METRICS", "Report", "plot_names", "utility_metric", "variant", "write_report"]

log = logging.getLogger(__name__)

#: The utility metric a result is summarised by: the first of these it has.
UTILITY_METRICS = ("test_auc", "accuracy", "auc_at_k", "lp_auc", "nc_f1", "precision_at_k")
ATTACK_METRIC = "attack_auc_gae-sim"


def utility_metric(result: Result) -> str | None:
    """The first of :data:`UTILITY_METRICS` in the result's metrics (None if none)."""
    return next((m for m in UTILITY_METRICS if m in result.metrics), None)


def variant(result: Result) -> str:
    """The settings where the result's config departs from its method's defaults (epsilon and
    accounting left out: they have their own columns; a delta other than the default is named, so
    runs at two deltas are never pooled): what distinguishes e.g. the rows of a sweep at one epsilon."""
    from graphpriv.experiments.registry import make_config

    try:
        defaults = make_config(result.method, {}).model_dump(mode="json")
    except ConfigError:
        defaults = {}
    return ", ".join(f"{k}={v}" for k, v in sorted(result.config.items())
                     if k not in ("epsilon", "accounting") and defaults.get(k, object()) != v)


def _label(result: Result) -> str:
    mode = result.privacy.accounting if result.privacy else "non-private"
    extra = variant(result)
    return f"{result.method} ({mode}{'; ' + extra if extra else ''})"


def _save(fig, base: Path) -> list[Path]:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    paths = [base.with_suffix(".png"), base.with_suffix(".svg")]
    try:
        for path in paths:
            fig.savefig(path, dpi=120)
    except OSError as exc:
        raise ConfigError(f"cannot write report file {base}.png/.svg ({one_line(exc, 200)}); choose a writable "
                         "--out folder") from None
    finally:
        plt.close(fig)
    return paths


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", text).strip("_") or "dataset"


def plot_names(datasets: list[str]) -> dict[str, str]:
    """A distinct file-name stem for every dataset.

    A registry id stays as it is; a graph file path gives its file name without the suffix; both
    reduced to letters, digits, ``_`` and ``-``. Where two datasets would get the same stem
    (compared without case, for case-insensitive file systems), each file path among them gets
    ``-`` and 8 hex digits of the SHA-256 of the full dataset string.

    Args:
        datasets: dataset strings as stored (registry ids or paths).

    Returns:
        ``{dataset: stem}``, the stems distinct (without case).
    """
    base = {}
    for d in dict.fromkeys(datasets):
        plain = re.fullmatch(r"[A-Za-z0-9_-]+", d) is not None
        base[d] = (plain, d if plain else _safe(Path(d).stem or Path(d).name or d))
    groups: dict[str, list[str]] = defaultdict(list)
    for d, (_, stem) in base.items():
        groups[stem.lower()].append(d)
    names = {}
    for members in groups.values():
        plain_kept = False
        for d in sorted(members):
            plain, stem = base[d]
            if len(members) > 1 and not (plain and not plain_kept):
                stem = f"{stem}-{hashlib.sha256(d.encode()).hexdigest()[:8]}"
            plain_kept = plain_kept or plain
            names[d] = stem
    used: set[str] = set()
    for d in sorted(names):  # a last guard: a hashed stem equal to another dataset's stem
        stem, n = names[d], 1
        while names[d].lower() in used:
            n += 1
            names[d] = f"{stem}-{n}"
        used.add(names[d].lower())
    return names


@dataclass
class Report:
    """What :func:`write_report` wrote.

    Attributes:
        files: the written files (distinct paths: their count is the count on disk).
        results: the successful results reported. skipped: ``(row id, reason)`` of every store row
            that was not a valid result and was skipped.
    """

    files: list[Path] = field(default_factory=list)
    results: int = 0
    skipped: list[tuple[int, str]] = field(default_factory=list)


def write_report(store: str | Path, out: str | Path, *,
                 timeout: float | None = None) -> Report:
    """Write the plots and ``summary.md`` for every stored successful result into ``out``.

    Rows that are not valid results are skipped, logged as ``skipped row N: reason``, listed in
    the summary and returned.

    Args:
        store: an existing results store (never created). out: the folder (created).
        timeout: seconds to wait for another process's lock on the store (default: the store's).

    Returns:
        A :class:`Report`.

    Raises:
        StoreError: no store at ``store``, a corrupt, foreign, future-version or locked store, a
            store without a successful result. ConfigError: an ``out`` folder that cannot be written.
    """
    results_store = (ResultStore.open_existing(store) if timeout is None
                     else ResultStore.open_existing(store, timeout=timeout))
    skipped: list[tuple[int, str]] = []
    results = results_store.results(bad_rows=skipped)
    for row_id, reason in skipped:
        log.warning("skipped row %d: %s", row_id, reason)
    if not results:
        extra = (f" ({len(skipped)} rows skipped as invalid, e.g. row {skipped[0][0]}: {skipped[0][1]})"
                 if skipped else "")
        raise StoreError(f"results store {store} holds no successful result{extra}; run `graphpriv sweep` or "
                         f"`graphpriv run --store {store}` first, or check --store")
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create report folder {out} ({one_line(exc, 200)}); choose a writable --out "
                         "folder") from None
    report = Report(results=len(results), skipped=skipped)
    written = report.files
    by_dataset: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by_dataset[r.dataset].append(r)
    names = plot_names(list(by_dataset))
    summary = [f"# Results in {store}", "", f"{len(results)} successful runs, {len(by_dataset)} datasets.", ""]
    if skipped:
        summary += [f"{len(skipped)} store rows skipped (not valid results):", ""]
        summary += [f"- skipped row {row_id}: {reason}" for row_id, reason in skipped] + [""]
    for dataset, rs in sorted(by_dataset.items()):
        name = names[dataset]
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
        summary += [f"## {dataset}", "", f"Plots: `{name}_*`.", "",
                    "| method | settings | accounting | epsilon | metric | mean ± std (%) | n |",
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
    try:
        path.write_text("\n".join(summary))
    except OSError as exc:
        raise ConfigError(f"cannot write {path} ({one_line(exc, 200)}); choose a writable --out folder") from None
    written.append(path)
    return report
