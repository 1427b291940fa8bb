"""Rich rendering of results and accountant answers."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from graphpriv.methods.base import Result


def result_table(result: Result) -> Table:
    """A two-column table: metrics, privacy (epsilon spent, delta, noise, accounting), timings."""
    table = Table(title=f"{result.method} on {result.dataset} (seed {result.seed})", show_header=True)
    table.add_column("quantity", style="bold")
    table.add_column("value", justify="right")
    for name, value in result.metrics.items():
        table.add_row(name.replace("_", " "), _metric(name, value))
    for baseline in result.baselines:
        verdict = {True: "beaten", False: "[bold red]not beaten[/bold red]", None: "reference"}[
            baseline.beaten_by(result.metrics.get(baseline.metric, float("nan")))]
        table.add_row(f"baseline: {baseline.name} ({baseline.metric.replace('_', ' ')})",
                      f"{_metric(baseline.metric, baseline.value)} ({verdict})")
    p = result.privacy
    if p is None:
        table.add_row("privacy", "none (non-private baseline)")
    else:
        table.add_row("epsilon spent", f"{p.epsilon:.4f}" + (f" (target {p.target_epsilon:g})" if p.target_epsilon else ""))
        table.add_row("delta", f"{p.delta:g}")
        for phase in p.phases:
            nm = f", noise multiplier {phase.noise_multiplier:.4g}" if phase.noise_multiplier else ""
            table.add_row(f"phase {phase.name}", f"eps {phase.epsilon:.4f}, {phase.steps} steps{nm}")
        table.add_row("privacy unit", p.unit)
        table.add_row("accounting", f"{p.accounting} ({p.accountant.upper()})")
    for key in ("dependency_bound_M", "group_size", "empirical_max_lsn", "noise_std", "num_train_examples",
                "depth", "gradient_bound", "gradient_norm_mean", "gradient_norm_max", "noise_norm",
                "rdp_epsilon_of_this_noise", "target_edges", "edge_count_source", "default_delta", "large_delta"):
        if key in result.info:
            value = result.info[key]
            if value is not None:
                table.add_row(key.replace("_", " "), f"{value:.4g}" if isinstance(value, float) else str(value))
    for change in result.info.get("input_normalisations") or []:
        table.add_row("input normalised", str(change))
    for name, seconds in result.timings.items():
        table.add_row(f"time {name}", f"{seconds:.2f} s")
    return table


def _metric(name: str, value: float) -> str:
    """An AUC, accuracy or F1 as a percentage, anything else to four digits."""
    percent = "auc" in name or name in ("accuracy", "nc_f1", "precision_at_k")
    return f"{100 * value:.2f} %" if percent else f"{value:.4g}"


def print_result(result: Result, console: Console | None = None) -> None:
    """Print :func:`result_table`, the one-line privacy statement and a warning for each trivial
    baseline the run does not beat (:meth:`Result.baseline_warnings`)."""
    console = console or Console()
    console.print(result_table(result))
    console.print(f"[bold]guarantee:[/bold] {result.privacy_statement}")
    for warning in result.baseline_warnings():
        console.print(f"[bold yellow]warning:[/bold yellow] no better than a trivial baseline: {warning}",
                      highlight=False)
