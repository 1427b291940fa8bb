"""The ``graphpriv`` command line (Typer + Rich)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from graphpriv.errors import GraphPrivError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="graphpriv: privacy-preserving machine learning on graphs.")
datasets_app = typer.Typer(help="List the registry datasets, or show one (`graphpriv datasets info ID`).",
                           invoke_without_command=True)
app.add_typer(datasets_app, name="datasets")
console = Console()


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["k=3", "theta=auto"]`` -> ``{"k": 3, "theta": "auto"}`` (JSON values where they parse)."""
    out: dict[str, Any] = {}
    for item in items:
        for part in item.split():
            key, sep, value = part.partition("=")
            if not sep or not key:
                raise typer.BadParameter(f"--set expects key=value, got {part!r}")
            out[key] = _parse_value(value)
    return out


def _fail(exc: Exception) -> None:
    console.print(f"[bold red]error:[/bold red] {exc}")
    raise typer.Exit(code=2)


@app.command()
def run(
    method: str = typer.Argument(..., help="Method id, e.g. dplp-ps, dplp-ns, seal."),
    dataset: str = typer.Option(..., "--dataset", "-d", help="Registry id or path to a graph file."),
    epsilon: float | None = typer.Option(None, help="Target epsilon (private methods)."),
    delta: float | None = typer.Option(None, help="Delta (default: the method's, 1e-5)."),
    seed: int = typer.Option(0, help="Seed of split, sampling and noise."),
    accounting: str | None = typer.Option(None, help="rigorous (default) or paper."),
    set_: list[str] = typer.Option([], "--set", help="Config override key=value (repeatable)."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the full result as JSON."),
    store: Path = typer.Option(Path("runs/results.sqlite"), help="SQLite results store."),
    no_store: bool = typer.Option(False, "--no-store", help="Do not append to the store."),
    out: Path | None = typer.Option(None, "--out", help="Write the published graph (.txt/.csv/.tsv edge list or .npz)."),
) -> None:
    """Train or publish with METHOD on a dataset, print the result, store it."""
    from graphpriv.experiments.display import print_result
    from graphpriv.experiments.runner import run_method

    overrides = parse_overrides(set_)
    for key, value in (("epsilon", epsilon), ("delta", delta), ("accounting", accounting)):
        if value is not None:
            overrides[key] = value
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TextColumn("{task.fields[info]}"), TimeElapsedColumn(), TimeRemainingColumn(),
                  console=console, transient=False) as bar:
        task = bar.add_task(f"{method} training", total=None, info="")

        def progress(done: int, total: int, **info: float) -> None:
            text = "  ".join(f"{k} {v:.3f}" for k, v in info.items())
            bar.update(task, completed=done, total=total, info=text)

        try:
            result = run_method(method, dataset, seed=seed, overrides=overrides,
                                store=None if no_store else store, progress=progress)
        except GraphPrivError as exc:
            bar.stop()
            _fail(exc)
    print_result(result, console)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(result.model_dump_json(indent=2))
        console.print(f"result written to {json_path}")
    if out is not None:
        _write_release(result, out)


def _write_release(result, out: Path) -> None:
    from graphpriv.attacks.graph import PublishedGraph
    from graphpriv.data.files import write_released_graph

    if not isinstance(result.release, PublishedGraph):
        _fail(GraphPrivError(f"{result.method} does not publish a graph; --out is for graph-publishing "
                             "methods (random-perturb, dice, edgerand, lapgraph)"))
    try:
        write_released_graph(out, result.release.pairs, result.release.num_nodes)
    except GraphPrivError as exc:
        _fail(exc)
    console.print(f"published graph ({result.release.num_edges} edges, {result.release.num_nodes} nodes) "
                  f"written to {out}; attack it with `graphpriv attack --graph {out} --dataset "
                  f"{result.dataset} --seed {result.seed}`")


@app.command()
def attack(
    graph: Path = typer.Option(..., "--graph", "-g", help="Published graph: edge list (dataset node ids) or .npz."),
    dataset: str = typer.Option(..., "--dataset", "-d", help="Dataset the graph was published from."),
    attacks: str = typer.Option("all", "--attacks", "-a", help="'all' or ids: cn,aa,ra,seal,n2v-sim,gae-sim,n2v-ml,gae-ml."),
    seed: int = typer.Option(0, help="Seed of the sensitive-link split (use the seed the graph was published with)."),
    utility: bool = typer.Option(False, "--utility/--no-utility", help="Also measure LP AUC (GAE) and NC F1 (GCN)."),
    sensitive_ratio: float = typer.Option(0.10, help="Share of edges hidden as sensitive links."),
    test_ratio: float = typer.Option(0.10, help="Share of edges held out as LP test edges."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Attack a published graph: AUC of each attack on the dataset's sensitive links (0.5 = guessing)."""
    from graphpriv.attacks.protocol import SensitiveLinkProtocol
    from graphpriv.data import load
    from graphpriv.data.files import read_released_graph

    try:
        data = load(dataset)
        protocol = SensitiveLinkProtocol(data, seed=seed, sensitive_ratio=sensitive_ratio, test_ratio=test_ratio)
        pairs = read_released_graph(graph, protocol.num_nodes)
        with console.status(f"attacking {graph.name} ({pairs.shape[1]} edges) ..."):
            report = protocol.evaluate(pairs, attacks=attacks, utility=utility)
    except (GraphPrivError, ValueError) as exc:
        _fail(exc)
    if as_json:
        print(report.model_dump_json(indent=2))
        return
    table = Table(title=f"attacks on {graph.name} ({data.name}, seed {seed})")
    table.add_column("attack", style="bold")
    table.add_column("AUC", justify="right")
    table.add_column("time", justify="right")
    for name, auc in report.attack_auc.items():
        table.add_row(name, f"{100 * auc:.2f} %", f"{report.attack_seconds[name]:.2f} s")
    if report.lp_auc is not None:
        table.add_row("utility: LP AUC (GAE)", f"{100 * report.lp_auc:.2f} %", "")
    if report.nc_f1 is not None:
        table.add_row("utility: NC micro-F1 (GCN)", f"{100 * report.nc_f1:.2f} %", "")
    console.print(table)
    console.print(f"published edges {report.published_edges} (publisher's input {report.input_edges}); "
                  f"sensitive links present in the published graph: {report.sensitive_published} of "
                  f"{protocol.sensitive_links.shape[1]}")


@app.command()
def sweep(
    file: Path = typer.Argument(..., help="Sweep file (YAML): methods, datasets, epsilons, seeds, overrides, store."),
    workers: int = typer.Option(2, "--workers", "-w", help="LocalCluster worker processes (one thread each)."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Address of a running Dask scheduler."),
    threads: int = typer.Option(1, help="torch threads per run."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Validate and count the runs; run nothing."),
) -> None:
    """Run a grid of runs on Dask; each finished run is committed to the store, stored runs are skipped."""
    from graphpriv.experiments.store import ResultStore
    from graphpriv.experiments.sweep import expand, load_sweep, pending_runs, run_sweep

    try:
        spec = load_sweep(file)
        runs = expand(spec)
        todo = pending_runs(runs, ResultStore(spec.store))
    except GraphPrivError as exc:
        _fail(exc)
    console.print(f"sweep {file.name}: {len(runs)} runs, {len(runs) - len(todo)} already in {spec.store}, "
                  f"{len(todo)} to run" + ("" if scheduler else f" on a {workers}-worker local cluster"))
    if dry_run or not todo:
        return
    columns = (TextColumn("sweep"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
               TextColumn("{task.fields[errors]} errors"), TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console) as bar:
        task = bar.add_task("sweep", total=len(todo), errors=0)
        errors = 0

        def on_done(run, status, done, total):
            nonlocal errors
            errors += status == "error"
            bar.update(task, completed=done, errors=errors)
            if status == "error":
                bar.console.print(f"[red]error[/red] in {run.label()} (recorded in the store)")

        counts = run_sweep(spec, workers=workers, scheduler=scheduler, threads=threads, on_done=on_done)
    console.print(f"done: {counts['ok']} ok, {counts['error']} errors, {counts['skipped']} skipped; store {spec.store}")


@app.command()
def reproduce(
    table: str = typer.Argument(..., help="Named paper table, e.g. dplp-table2, dplp-rank-table1, privdpr-lp, dpar-table1."),
    seeds: int = typer.Option(5, help="Seeds per cell (cells with a max_seeds limit run fewer)."),
    quick: bool = typer.Option(False, "--quick", help="Smoke version: 1 seed, first dataset, at most 2 epochs."),
    store: Path = typer.Option(Path("runs/results.sqlite"), help="SQLite results store (stored runs are reused)."),
    workers: int = typer.Option(2, "--workers", "-w", help="LocalCluster worker processes."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Address of a running Dask scheduler."),
    from_store: bool = typer.Option(False, "--from-store", help="Run nothing: render the seeds stored so far."),
) -> None:
    """Run a paper table's grid on Dask and write ours beside the paper's numbers (docs/reproduction)."""
    from graphpriv.experiments.reproduce import reproduce as run_reproduce

    columns = (TextColumn(table), BarColumn(), TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn())
    try:
        with Progress(*columns, console=console) as bar:
            task = bar.add_task(table, total=None)
            out, counts = run_reproduce(table, seeds=seeds, quick=quick, store=store, workers=workers,
                                        scheduler=scheduler, run=not from_store,
                                        on_done=lambda run, status, done, total: bar.update(task, completed=done,
                                                                                             total=total))
    except GraphPrivError as exc:
        _fail(exc)
    console.print(out.read_text())
    console.print(f"{counts['ok']} ran, {counts['skipped']} reused, {counts['error']} errors; written to {out}")


@app.command()
def report(
    store: Path = typer.Option(Path("runs/results.sqlite"), "--store", help="SQLite results store."),
    out: Path = typer.Option(Path("runs/report"), "--out", help="Folder for the PNG/SVG plots and summary.md."),
) -> None:
    """Privacy-utility curves and attack-vs-utility plots (PNG and SVG) and a Markdown summary of a store."""
    from graphpriv.experiments.report import write_report

    try:
        files = write_report(store, out)
    except (GraphPrivError, ValueError) as exc:
        _fail(exc)
    console.print(f"wrote {len(files)} files to {out}: " + ", ".join(p.name for p in files[:8])
                  + (" ..." if len(files) > 8 else ""))


@app.command()
def audit(
    method: str = typer.Argument(..., help="edgerand, lapgraph, random-perturb, dplp-ps, dplp-ns (edge level); "
                                           "dp-mlp, dpar-em0/em1/gm/nodp, privdpr, dpr (node level)."),
    dataset: str = typer.Option(..., "--dataset", "-d", help="Registry id or graph file."),
    epsilon: float = typer.Option(1.0, help="Target epsilon of the private method."),
    canaries: int | None = typer.Option(None, help="Canaries, each inserted w.p. 1/2 (default: the audit's)."),
    epochs: int | None = typer.Option(None, help="Training epochs of model audits (default: the audit's)."),
    seed: int = typer.Option(0, help="Seed of canaries, coins and noise."),
    ratio: float = typer.Option(0.0, help="random-perturb only: share of edges rewired (0 publishes the input)."),
    non_private: bool = typer.Option(False, "--non-private", help="Model audits: the same training without noise."),
    attack: str | None = typer.Option(None, help="privdpr only: gradient, node-embedding or node-graph."),
    as_json: bool = typer.Option(False, "--json", help="Print the reports as JSON."),
    test_noise_factor: float = typer.Option(1.0, hidden=True, help="TEST ONLY: scale the mechanism's noise."),
) -> None:
    """Audit a release with canaries: an empirical lower bound on epsilon against the claimed one."""
    from graphpriv.data import load
    from graphpriv.privacy.audits import run_audit
    from graphpriv.testing.broken import broken_noise

    try:
        data = load(dataset)
        with broken_noise(test_noise_factor):
            reports = run_audit(method, data, epsilon=epsilon, canaries=canaries, seed=seed, epochs=epochs,
                                ratio=ratio, private=not non_private, attack=attack)
    except GraphPrivError as exc:
        _fail(exc)
    if as_json:
        print(json.dumps([r.model_dump(mode="json") for r in reports], indent=2))
    for report in [] if as_json else reports:
        level = f"{report.confidence:.1%}".replace(".0%", "%")
        table = Table(title=f"audit of {report.method} on {report.dataset} (seed {seed})", show_header=False)
        table.add_row("claimed epsilon", f"{report.claimed_epsilon:.4g} ({report.accounting})")
        table.add_row(f"empirical lower bound (one run, {level})", f"{report.epsilon_lower_bound:.4g}")
        table.add_row(f"Clopper-Pearson lower bound ({level})", f"{report.epsilon_lower_bound_cp:.4g}")
        table.add_row("point estimate", f"{report.epsilon_estimate:.4g}")
        table.add_row("attack", report.attack)
        table.add_row("canaries (inserted)", f"{report.canaries} ({report.inserted})")
        table.add_row("TPR / FPR", f"{report.tpr:.4f} / {report.fpr:.4f}")
        for note in report.notes:
            table.add_row("note", note)
        console.print(table)
        verdict = "[green]passed[/green]" if report.passed else "[bold red]FAILED[/bold red]"
        console.print(f"{verdict}: lower bound {report.epsilon_lower_bound:.4g} vs claimed {report.claimed_epsilon:.4g}")
    if not all(r.passed for r in reports):
        raise typer.Exit(code=1)


@datasets_app.callback()
def datasets_list(ctx: typer.Context) -> None:
    """List every registry dataset with its size."""
    if ctx.invoked_subcommand is not None:
        return
    from graphpriv.data import REGISTRY

    table = Table(title="graphpriv datasets")
    for col in ("id", "nodes", "edges", "features", "classes", "description"):
        table.add_column(col, justify="right" if col in ("nodes", "edges", "features", "classes") else "left")
    for spec in REGISTRY.values():
        table.add_row(spec.id, f"{spec.num_nodes:,}", f"{spec.num_edges:,}", str(spec.num_features or "-"),
                      str(spec.num_classes or "-"), spec.description)
    console.print(table)


@datasets_app.command("info")
def datasets_info(name: str = typer.Argument(..., help="Registry id or graph file path.")) -> None:
    """Load a dataset and print its counts and where its files were found."""
    from graphpriv.data import REGISTRY, load, locate_files, num_undirected_edges

    try:
        data = load(name)
        files = locate_files(name) if name in REGISTRY else {Path(name).name: Path(name).resolve()}
    except GraphPrivError as exc:
        _fail(exc)
    table = Table(title=f"dataset {name}", show_header=False)
    table.add_row("nodes", f"{data.num_nodes:,}")
    table.add_row("undirected edges", f"{num_undirected_edges(data):,}")
    table.add_row("features", str(tuple(data.x.shape)) if data.x is not None else "none")
    table.add_row("labels", f"{int(data.y.max()) + 1} classes" if getattr(data, "y", None) is not None else "none")
    for fname, path in files.items():
        table.add_row(f"file {fname}", str(path))
    console.print(table)


@app.command()
def accountant(
    noise_multiplier: float | None = typer.Option(None, "--noise-multiplier", "-z", help="z; omit with --target-epsilon."),
    target_epsilon: float | None = typer.Option(None, help="Inverse: the noise multiplier meeting this epsilon."),
    sampling: str = typer.Option("poisson", help="poisson (rate m/N) or wor (m of N without replacement)."),
    batch_size: int = typer.Option(..., "--batch-size", "-m", help="m (expected batch size for Poisson)."),
    dataset_size: int = typer.Option(..., "--dataset-size", "-n", help="N training examples."),
    steps: int | None = typer.Option(None, help="Number of noisy steps."),
    epochs: float | None = typer.Option(None, help="Alternative to --steps: steps = ceil(epochs N / m)."),
    delta: float = typer.Option(1e-5, help="Delta."),
    group_size: int = typer.Option(1, "--group-size", "-K", help="Examples one unit changes (multi-term bound: hypergeometric for wor, binomial for poisson)."),
    accounting: str = typer.Option("rigorous", help="rigorous or paper (paper: DPLP's effective rate, wor only)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON for scripts."),
) -> None:
    """Epsilon of DP-SGD (compute_dp_sgd_privacy), or the noise multiplier for a target epsilon."""
    from graphpriv.privacy.dpsgd_accounting import DpSgdSetting, epsilon_for, noise_multiplier_for, steps_for_epochs

    try:
        if (steps is None) == (epochs is None):
            raise typer.BadParameter("give exactly one of --steps and --epochs")
        if (noise_multiplier is None) == (target_epsilon is None):
            raise typer.BadParameter("give exactly one of --noise-multiplier and --target-epsilon")
        n_steps = steps if steps is not None else steps_for_epochs(epochs, dataset_size, batch_size)
        setting = DpSgdSetting(sampling=sampling, dataset_size=dataset_size, batch_size=batch_size,
                               steps=n_steps, delta=delta, group_size=group_size, accounting=accounting)
        if target_epsilon is not None:
            noise_multiplier = noise_multiplier_for(setting, target_epsilon)
        eps, order = epsilon_for(setting, noise_multiplier)
    except (ValueError, GraphPrivError) as exc:
        _fail(exc)
    out = {**setting.model_dump(mode="json"), "noise_multiplier": noise_multiplier, "epsilon": eps,
           "optimal_order": order, "sample_rate": batch_size / dataset_size,
           "noise_std_per_unit_clip": noise_multiplier * setting.sampler().sensitivity(1.0, group_size)}
    if as_json:
        typer.echo(json.dumps(out))
        return
    table = Table(title="DP-SGD privacy (graphpriv accountant, RDP)", show_header=False)
    for key, value in out.items():
        table.add_row(key.replace("_", " "), f"{value:.6g}" if isinstance(value, float) else str(value))
    console.print(table)
    console.print(f"DP-SGD with these settings is ({eps:.4g}, {delta:g})-DP.")


def main() -> None:  # pragma: no cover
    """Entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
