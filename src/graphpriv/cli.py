"""The ``graphpriv`` command line (Typer + Rich)."""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table
from typer.exceptions import TyperException

from graphpriv.errors import GraphPrivError
from graphpriv.experiments import DEFAULT_STORE
from graphpriv.startup import defer_torch_dynamo, exit_now

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="graphpriv: privacy-preserving machine learning on graphs.")
datasets_app = typer.Typer(help="List the registry datasets, or show one (`graphpriv datasets info ID`).",
                           invoke_without_command=True)
app.add_typer(datasets_app, name="datasets")
store_app = typer.Typer(help="Move runs between results stores: `graphpriv store export` writes a store's runs to "
                        "an archive file, `graphpriv store import` merges archives into a store.",
                        no_args_is_help=True)
app.add_typer(store_app, name="store")
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


#: Set by ``graphpriv --debug``: errors re-raised with their traceback.
_DEBUG = {"on": False}


@app.callback()
def _main(debug: bool = typer.Option(False, "--debug", help="Show the Python traceback of an error.")) -> None:
    """graphpriv: privacy-preserving machine learning on graphs."""
    _DEBUG["on"] = debug
    if debug:
        import logging

        logging.basicConfig(level=logging.INFO)


def _fail(exc: Exception) -> None:
    console.print(f"[bold red]error:[/bold red] {escape(str(exc))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2)


def _guarded(command: Callable) -> Callable:
    """Every command's one error path: a graphpriv error (bad input) is one line and exit code 2;
    any other exception is a bug, reported in one line with exit code 3; ``--debug`` re-raises
    both with their traceback. Typer's own exits and usage errors pass through."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort, TyperException, click.exceptions.ClickException, KeyboardInterrupt):
            raise  # typer's usage errors (its own click copy: TyperException) and exits
        except GraphPrivError as exc:
            if _DEBUG["on"]:
                raise
            _fail(exc)
        except Exception as exc:
            if _DEBUG["on"]:
                raise
            console.print(f"[bold red]internal error:[/bold red] {type(exc).__name__}: {escape(str(exc))}; this is a graphpriv bug: "
                          "rerun with `graphpriv --debug ...` for the traceback and report it", highlight=False,
                          soft_wrap=True)
            raise typer.Exit(code=3) from None

    return wrapper


@app.command()
@_guarded
def run(
    method: str = typer.Argument(..., help="Method id, e.g. dplp-ps, dplp-ns, seal."),
    dataset: str = typer.Option(..., "--dataset", "-d", help="Registry id or path to a graph file."),
    epsilon: float | None = typer.Option(None, help="Target epsilon (private methods only)."),
    delta: float | None = typer.Option(None, help="Delta (default: the method's); below 1 / (privacy units)."),
    seed: int = typer.Option(0, help="Seed of split, sampling and noise, in [0, 2^32 - 1]."),
    accounting: str | None = typer.Option(None, help="rigorous (default) or paper."),
    preset: str | None = typer.Option(None, "--preset", help="A named preset of the method (e.g. dplp-ps 'paper': the "
                                                              "paper's per-dataset settings); --set goes over it."),
    set_: list[str] = typer.Option([], "--set", help="Config override key=value (repeatable)."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the full result as JSON (.json)."),
    store: Path = typer.Option(DEFAULT_STORE, help="SQLite results store."),
    no_store: bool = typer.Option(False, "--no-store", help="Do not append to the store."),
    out: Path | None = typer.Option(None, "--out", help="Write the published graph (.txt/.csv/.tsv edge list or .npz)."),
    allow_large_delta: bool = typer.Option(False, "--allow-large-delta",
                                           help="Accept delta >= 1 / (number of privacy units)."),
    save: Path | None = typer.Option(None, "--save", help="Save the fitted estimator (.pt; Estimator.load reads it)."),
) -> None:
    """Train or publish with METHOD on a dataset, print the result, store it.

    Every input (settings, seed, output paths, store, dataset, delta) is checked before any work;
    the table, the JSON and the published graph are written before the result is stored."""
    from graphpriv.experiments.display import print_result
    from graphpriv.experiments.runner import (
        RELEASE_SUFFIXES,
        check_output_path,
        check_settings,
        prepare_data,
        run_prepared,
        store_result,
    )
    from graphpriv.experiments.store import ResultStore

    overrides = parse_overrides(set_)
    for key, value in (("epsilon", epsilon), ("delta", delta), ("accounting", accounting)):
        if value is not None:
            overrides[key] = value
    if preset is not None:
        from graphpriv.experiments.registry import method_spec, preset_settings

        method_spec(method)  # an unknown method is named as such, not as a missing preset
        overrides = {**preset_settings(method, preset, dataset), **overrides}
    settings = check_settings(method, seed=seed, overrides=overrides)  # nothing created before these pass
    spec = settings[0]
    if json_path is not None:
        check_output_path(json_path, option="--json", suffixes=(".json",))
    if out is not None:
        if not spec.publishes:
            raise GraphPrivError(f"--out writes a published graph, and {method} publishes none; drop --out, or use a "
                                 "publishing method (random-perturb, dice, edgerand, lapgraph, ppgsl, privdpr, dpr, tmf, dp-1k, privgraph)")
        check_output_path(out, option="--out", suffixes=RELEASE_SUFFIXES)
    if save is not None:
        check_output_path(save, option="--save", suffixes=(".pt",))
    results_store = None if no_store else ResultStore(store)  # opened, migrated, checked writable
    prepared = prepare_data(settings, dataset, allow_large_delta=allow_large_delta)
    with _phase_bars(method) as progress:
        result = run_prepared(prepared, progress=progress)
    print_result(result, console)
    failures = []
    if json_path is not None:
        try:
            json_path.write_text(result.model_dump_json(indent=2))
            console.print(f"result written to {json_path}")
        except OSError as exc:
            failures.append(f"--json {json_path}: not written ({exc.strerror or exc})")
    if out is not None:
        try:
            _write_release(result, out)
        except (GraphPrivError, OSError) as exc:
            failures.append(f"--out {out}: not written ({exc})")
    if save is not None:
        if result.estimator is None:
            failures.append(f"--save {save}: {method} does not keep a fitted estimator yet; nothing saved")
        else:
            try:
                result.estimator.save(save)
                console.print(f"fitted {type(result.estimator).__name__} saved to {save} (graphpriv.Estimator.load "
                              "reads it); besides what the guarantee covers it may hold the training graph and "
                              "facts of the data: keep it as private as the data", highlight=False)
            except (GraphPrivError, OSError) as exc:
                failures.append(f"--save {save}: not written ({exc})")
    if results_store is not None:
        try:
            store_result(results_store, result)
        except GraphPrivError as exc:
            failures.append(f"--store {store}: the result was not stored ({exc}); the table above"
                            + (" and the files written" if json_path or out or save else "") + " hold it")
    for failure in failures:
        console.print(f"[bold red]error:[/bold red] {escape(failure)}", highlight=False, soft_wrap=True)
    if failures:
        raise typer.Exit(code=1)


@contextlib.contextmanager
def _phase_bars(what: str, *, disable: bool = False) -> Iterator[Callable[..., None]]:
    """A Rich progress display with one bar per phase, and the :class:`~graphpriv.methods.base.Progress`
    callback that feeds it: ``progress(done, total, phase="attacks", **numbers)`` moves the bar of
    that phase (created on its first report; no ``phase``: training), with counts, the numbers
    given (e.g. the loss), the elapsed time and an estimate of the time left. ``disable``: draw
    nothing (output that must stay machine-readable, ``--json``)."""
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
               TextColumn("{task.fields[info]}"), TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=False, disable=disable) as bar:
        tasks: dict[str, Any] = {}

        def progress(done: int, total: int, **info: Any) -> None:
            phase = str(info.pop("phase", "training"))
            if phase not in tasks:
                tasks[phase] = bar.add_task(f"{what} {phase}", total=None, info="")
            text = "  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in info.items())
            bar.update(tasks[phase], completed=done, total=total, info=text)

        yield progress


def _write_release(result, out: Path) -> None:
    from graphpriv.data.files import write_released_graph

    release = result.release
    write_released_graph(out, release.pairs, release.num_nodes)
    console.print(f"published graph ({release.num_edges} edges, {release.num_nodes} nodes) "
                  f"written to {out}; attack it with `graphpriv attack --graph {out} --dataset "
                  f"{result.dataset} --seed {result.seed}`")


@app.command()
@_guarded
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
    from graphpriv.data.validation import check_seed

    check_seed(seed)
    data = load(dataset)
    protocol = SensitiveLinkProtocol(data, seed=seed, sensitive_ratio=sensitive_ratio, test_ratio=test_ratio)
    pairs = read_released_graph(graph, protocol.num_nodes)
    with _phase_bars(f"{graph.name} ({pairs.shape[1]} edges)", disable=as_json) as progress:
        report = protocol.evaluate(pairs, attacks=attacks, utility=utility, progress=progress)
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
@_guarded
def sweep(
    file: Path = typer.Argument(..., help="Sweep file (YAML): methods, datasets, epsilons, seeds, overrides, store."),
    workers: int = typer.Option(2, "--workers", "-w", help="LocalCluster worker processes (one thread each)."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Address of a running Dask scheduler."),
    threads: int = typer.Option(1, help="torch threads per run."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Validate every cell (config, seed, dataset loads) and "
                                 "the store; run nothing; exit 1 when a cell would fail."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Run again the runs whose stored attempt "
                                      "raised (by default a failure is recorded once and not retried)."),
    verbose: bool = typer.Option(False, "--verbose", help="Print Dask's INFO logs (cluster start, connections)."),
) -> None:
    """Run a grid of runs on Dask; each finished run is committed to the store, stored runs are skipped.

    Exit code 0 when every run has a result, 1 when a run failed (now, or earlier and not retried;
    with --dry-run: when a cell would fail), 2 for a bad sweep file, grid or store (nothing ran).
    """
    from graphpriv.errors import ConfigError, StoreError
    from graphpriv.experiments.store import ResultStore
    from graphpriv.experiments.sweep import check_sweep, load_sweep, run_runs, split_runs

    spec = load_sweep(file)
    check = check_sweep(spec, load_datasets=dry_run)
    total = len(check.runs) + len(check.problems)
    if dry_run:
        store_problem = None
        todo, skipped, failed_before = check.runs, 0, 0
        try:
            if Path(spec.store).exists():
                store = ResultStore.open_existing(spec.store)
                store.check_writable()
                todo, skipped, failed_before = split_runs(check.runs, store, retry_failed=retry_failed)
            else:
                ResultStore.check_path(spec.store)
        except StoreError as exc:
            store_problem = str(exc)
        console.print(f"sweep {file.name} (dry run): {total} runs, {len(check.problems)} would fail, {skipped} "
                      f"already in {spec.store}, {failed_before} failed before (not retried), {len(todo)} to run",
                      highlight=False, soft_wrap=True)
        for problem in check.problems:
            console.print(f"would fail: {escape(problem.label())}: {escape(problem.reason)}", highlight=False,
                          soft_wrap=True)
        if store_problem:
            console.print(f"store: {escape(store_problem)}", highlight=False, soft_wrap=True)
        if check.problems or store_problem:
            raise typer.Exit(code=1)
        return
    if check.problems:
        for problem in check.problems:
            console.print(f"invalid: {escape(problem.label())}: {escape(problem.reason)}", highlight=False,
                          soft_wrap=True)
        _fail(ConfigError(f"{len(check.problems)} of {total} runs of {file} are invalid (listed above); fix the "
                          "sweep file, then run it again (nothing ran)"))
    store = ResultStore(spec.store)  # opened, migrated and checked writable before any work
    runs = check.runs
    todo, skipped, failed_before = split_runs(runs, store, retry_failed=retry_failed)
    console.print(f"sweep {file.name}: {len(runs)} runs, {skipped} already in {spec.store}, {failed_before} failed "
                  f"before (not retried), {len(todo)} to run"
                  + ("" if scheduler or not todo else f" on a {workers}-worker local cluster"),
                  highlight=False, soft_wrap=True)
    counts = {"ok": 0, "error": 0, "skipped": skipped, "failed_before": failed_before}
    if todo:
        columns = (TextColumn("sweep"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                   TextColumn("{task.fields[errors]} errors"), TimeElapsedColumn(), TimeRemainingColumn())
        with Progress(*columns, console=console) as bar:
            task = bar.add_task("sweep", total=len(todo), errors=0)
            errors = 0

            def on_done(run, status, done, total):
                nonlocal errors
                errors += status != "ok"
                bar.update(task, completed=done, errors=errors)
                if status != "ok":
                    what = "lost (its worker died; retried next time)" if status == "lost" else "failed"
                    bar.console.print(f"[red]{what}[/red]: {escape(run.label())} (recorded in the store)",
                                      highlight=False, soft_wrap=True)

            counts = run_runs(runs, spec.store, workers=workers, scheduler=scheduler, threads=threads,
                              retry_failed=retry_failed, allow_large_delta=spec.allow_large_delta, on_done=on_done,
                              verbose=verbose)
    console.print(f"done: {counts['ok']} ok, {counts['error']} failed, {counts['skipped']} skipped (stored), "
                  f"{counts['failed_before']} failed before (not retried); store {spec.store}", highlight=False,
                  soft_wrap=True)
    failed = counts["error"] + counts["failed_before"]
    if failed:
        labels = {run.key: run.label() for run in runs}
        failures = [f for f in store.failures() if (f.method, f.dataset, f.seed, f.config_hash) in labels]
        for failure in failures[:10]:
            kind = (failure.error_type or "error").rsplit(".", 1)[-1]
            console.print(f"failed: {escape(labels[(failure.method, failure.dataset, failure.seed, failure.config_hash)])}"
                          f": {escape(kind)}: {escape(failure.error_message or '')}", highlight=False, soft_wrap=True)
        if len(failures) > 10:
            console.print(f"... and {len(failures) - 10} more", highlight=False)
        console.print(f"{failed} of {len(runs)} runs failed (tracebacks in {spec.store}); fix the input and rerun "
                      "with --retry-failed", highlight=False, soft_wrap=True)
        raise typer.Exit(code=1)


@app.command()
@_guarded
def reproduce(
    table: str = typer.Argument(..., help="A table of experiments/grids (e.g. dplp-table2, dplp-rank-table1, "
                                          "privdpr-lp, dpar-table1, audit-dplp, ppgsl-table1), a group "
                                          "(node-leaderboard: its edge and node tables), or 'list'."),
    seeds: int | None = typer.Option(None, help="Seeds per cell (default: the grid's, the committed table's count)."),
    quick: bool = typer.Option(False, "--quick", help="Smoke version: 1 seed, first dataset, at most 2 epochs."),
    store: Path = typer.Option(DEFAULT_STORE, help="SQLite results store (stored runs are reused)."),
    workers: int = typer.Option(2, "--workers", "-w", help="LocalCluster worker processes."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="Address of a running Dask scheduler."),
    from_store: bool = typer.Option(False, "--from-store", help="Run nothing: render the seeds stored so far."),
    from_results: bool = typer.Option(False, "--from-results",
                                      help="Run nothing, read no store: render docs/results/TABLE.csv."),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="Run again the cells whose stored run raised."),
    docs: Path = typer.Option(Path("docs"), "--docs", help="Docs folder (reproduction/, results/ under it)."),
    verbose: bool = typer.Option(False, "--verbose", help="Print Dask's INFO logs (cluster start, connections)."),
    datasets: str | None = typer.Option(None, "--datasets",
                                        help="Run only these of the table's datasets, comma-separated (the table "
                                             "still shows every dataset's stored runs)."),
) -> None:
    """Run a table's grid and write it beside the paper's numbers (docs/reproduction/TABLE.md) with the
    results it rests on (docs/results/TABLE.csv). `graphpriv reproduce list` names the tables.
    Exit code 1 when any cell failed (now, or before and not retried)."""
    from graphpriv.experiments.grid import grid_names
    from graphpriv.experiments.reproduce import ALIASES, GROUPS, resolve
    from graphpriv.experiments.reproduce import reproduce as run_reproduce

    if table == "list":
        for name in grid_names():
            grid = resolve(name)
            console.print(f"{name:22s} {grid.kind:9s} {grid.title}", highlight=False, soft_wrap=True)
        console.print("aliases: " + ", ".join(f"{a} -> {t}" for a, t in sorted(ALIASES.items())), highlight=False,
                      soft_wrap=True)
        console.print("groups: " + ", ".join(f"{g} -> {' + '.join(t)}" for g, t in sorted(GROUPS.items())),
                      highlight=False, soft_wrap=True)
        return
    grids = [resolve(name) for name in GROUPS.get(table, (table,))]  # unknown or bad grids fail before any work
    failed = False
    for grid in grids:
        columns = (TextColumn(grid.name), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                   TimeElapsedColumn(), TimeRemainingColumn())
        with Progress(*columns, console=console, disable=from_results) as bar:
            task = bar.add_task(grid.name, total=None)
            out, counts = run_reproduce(grid, seeds=seeds, quick=quick, store=store, workers=workers,
                                        scheduler=scheduler, run=not from_store, from_results=from_results,
                                        retry_failed=retry_failed, docs=docs, verbose=verbose,
                                        datasets=None if datasets is None else [d.strip() for d in datasets.split(",")
                                                                                if d.strip()],
                                        on_done=lambda run, status, done, total, bar=bar, task=task: bar.update(
                                            task, completed=done, total=total))
        console.print(out.read_text(), highlight=False, soft_wrap=True, markup=False)
        if from_results:
            from graphpriv.experiments.results import results_file

            console.print(f"rendered from {results_file(docs, grid.name)} ({counts['total']} records); "
                          f"written to {out}", highlight=False, soft_wrap=True)
            continue
        failed_before = counts.get("failed_before", 0)
        console.print(f"{counts['ok']} ran, {counts.get('skipped', 0)} reused, {counts.get('error', 0)} errors"
                      + (f", {failed_before} failed before (--retry-failed runs them)" if failed_before else "")
                      + f"; written to {out}", highlight=False, soft_wrap=True)
        failed = failed or bool(counts.get("error") or failed_before)
    if failed:
        raise typer.Exit(code=1)


@app.command()
@_guarded
def report(
    store: Path = typer.Option(DEFAULT_STORE, "--store", help="Existing SQLite results store."),
    out: Path = typer.Option(Path("runs/report"), "--out", help="Folder for the PNG/SVG plots and summary.md."),
) -> None:
    """Privacy-utility curves and attack-vs-utility plots (PNG and SVG) and a Markdown summary of a store.

    Store rows that are not valid results are skipped and named; a missing, corrupt or foreign store
    is an error (exit 2), and no store is created.
    """
    from graphpriv.experiments.report import write_report

    written = write_report(store, out)
    for row_id, reason in written.skipped:
        console.print(f"[yellow]skipped row {row_id}[/yellow]: {escape(reason)}", highlight=False, soft_wrap=True)
    files = [p for p in dict.fromkeys(written.files) if p.is_file()]  # the count on disk
    console.print(f"wrote {len(files)} files to {out} from {written.results} results"
                  + (f" ({len(written.skipped)} rows skipped)" if written.skipped else "") + ": "
                  + ", ".join(p.name for p in files[:8]) + (" ..." if len(files) > 8 else ""),
                  highlight=False, soft_wrap=True)


@app.command()
@_guarded
def plot(
    datasets: list[str] = typer.Option(..., "--datasets", help="Datasets, one panel each (repeat or space-separate)."),
    out: Path = typer.Option(..., "--out", help="The PNG to write."),
    store: Path = typer.Option(DEFAULT_STORE, "--store", help="Existing SQLite results store (never created)."),
    methods: list[str] = typer.Option([], "--methods", help="Method ids (epsilon sweep and --tradeoff)."),
    epsilons: list[float] = typer.Option([], "--epsilons", help="Epsilon sweep: only these target epsilons."),
    tradeoff: bool = typer.Option(False, "--tradeoff", help="Utility against the GAE+sim attack AUC (publishing)."),
    rank_sweeps: bool = typer.Option(False, "--rank-sweeps",
                                     help="DPLP-rank Fig. 3 on the first dataset (--methods ignored)."),
    curve: list[str] = typer.Option([], "--curve", metavar="LABEL=METHOD[:key=value,...]",
                                    help="One line per --curve: --metric against the target epsilon."),
    metric: str | None = typer.Option(None, "--metric", help="Metric of the --curve plot, e.g. accuracy."),
    xlabel: str = typer.Option("epsilon", "--xlabel", help="x-axis label of the --curve plot."),
) -> None:
    """One plot from a results store: test AUC against epsilon (default), --curve lines, a publishing
    --tradeoff, or DPLP-rank's --rank-sweeps. A missing or foreign store is an error (exit 2)."""
    from graphpriv.experiments import plots
    from graphpriv.experiments.store import ResultStore

    datasets = [d for item in datasets for d in item.split()]
    methods = [m for item in methods for m in item.split()]
    curves = [plots.parse_curve(c) for c in curve]  # a bad spec fails before the store is opened
    results = ResultStore.open_existing(store)
    if curves:
        plots.plot_curves(results, curves, datasets, out, metric=metric or "test_auc",
                          ylabel=f"{metric or 'test AUC'} (%)", xlabel=xlabel)
    elif rank_sweeps:
        console.print(plots.plot_rank_sweeps(results, datasets[0], out), highlight=False, markup=False)
    elif tradeoff:
        plots.plot_tradeoff(results, methods, datasets, out)
    else:
        plots.plot_epsilon_sweep(results, methods, datasets, out, epsilons or None, accounting="rigorous",
                                 backbone="gcn")
    console.print(f"wrote {out}", highlight=False, soft_wrap=True)


@app.command()
@_guarded
def audit(
    method: str = typer.Argument(..., help="edgerand, lapgraph, random-perturb, dplp-ps, dplp-ns, gap-edp (edge level); "
                                           "dp-mlp, dpar-em0/em1/gm/nodp, gap-ndp, progap-ndp, privdpr, dpr (node "
                                           "level)."),
    dataset: str = typer.Option(..., "--dataset", "-d", help="Registry id or graph file."),
    epsilon: float = typer.Option(1.0, help="Target epsilon of the private method."),
    canaries: int | None = typer.Option(None, help="Canaries, each inserted w.p. 1/2 (default: the audit's)."),
    epochs: int | None = typer.Option(None, help="Training epochs of model audits (default: the audit's)."),
    seed: int = typer.Option(0, help="Seed of canaries, coins and noise."),
    ratio: float | None = typer.Option(None, help="random-perturb only: share of edges rewired (0 publishes the "
                                                  "input; default: the method's)."),
    non_private: bool = typer.Option(False, "--non-private", help="Model audits: the same training without noise."),
    attack: str | None = typer.Option(None, help="privdpr only: gradient, node-embedding or node-graph."),
    as_json: bool = typer.Option(False, "--json", help="Print the reports as JSON."),
) -> None:
    """Audit a release with canaries: an empirical lower bound on epsilon against the claimed one."""
    from graphpriv.data import load
    from graphpriv.experiments.auditing import check_audit_options, run_audit

    check_audit_options(method, epsilon=epsilon, canaries=canaries, seed=seed, epochs=epochs, ratio=ratio,
                        attack=attack, private=not non_private)  # before the data is loaded
    data = load(dataset)
    with _phase_bars("audit", disable=as_json) as progress:
        reports = run_audit(method, data, epsilon=epsilon, canaries=canaries, seed=seed, epochs=epochs, ratio=ratio,
                            private=not non_private, attack=attack, progress=progress)
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
@_guarded
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
@_guarded
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


@store_app.command("export")
@_guarded
def store_export(
    archive: Path = typer.Argument(..., help="The archive to write (*.jsonl.gz)."),
    store: Path = typer.Option(DEFAULT_STORE, help="SQLite results store to read."),
    skip: list[Path] = typer.Option([], "--skip", help="Leave out the runs already in this archive (repeatable): "
                                    "export only what is new."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing archive file."),
) -> None:
    """Write a store's results and failures to a gzipped JSON-lines archive."""
    from graphpriv.experiments.store import ResultStore
    from graphpriv.experiments.store_archive import export_store

    count = export_store(ResultStore.open_existing(store), archive, skip=skip, overwrite=overwrite)
    console.print(f"wrote {count} run(s) of {store} to {archive}", highlight=False, soft_wrap=True)


@store_app.command("import")
@_guarded
def store_import(
    archives: list[Path] = typer.Argument(..., help="Archives written by `graphpriv store export`."),
    store: Path = typer.Option(DEFAULT_STORE, help="SQLite results store to merge into (created if missing)."),
) -> None:
    """Merge archives into a store: the newer run of a cell wins; a failure never replaces a result."""
    from graphpriv.experiments.store import ResultStore
    from graphpriv.experiments.store_archive import import_archives

    counts = import_archives(ResultStore(store), archives)
    console.print(f"{store}: {counts['added']} run(s) added, {counts['replaced']} replaced by newer ones, "
                  f"{counts['kept']} already there or older", highlight=False, soft_wrap=True)


@app.command()
@_guarded
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
    from graphpriv.errors import ConfigError, describe_validation_error
    from graphpriv.privacy.dpsgd_accounting import DpSgdSetting, epsilon_for, noise_multiplier_for, steps_for_epochs

    if (steps is None) == (epochs is None):
        raise typer.BadParameter("give exactly one of --steps and --epochs")
    if (noise_multiplier is None) == (target_epsilon is None):
        raise typer.BadParameter("give exactly one of --noise-multiplier and --target-epsilon")
    n_steps = steps if steps is not None else steps_for_epochs(epochs, dataset_size, batch_size)
    try:
        setting = DpSgdSetting(sampling=sampling, dataset_size=dataset_size, batch_size=batch_size,
                               steps=n_steps, delta=delta, group_size=group_size, accounting=accounting)
    except ValueError as exc:  # pydantic.ValidationError: one line per field
        raise ConfigError(f"invalid accountant setting: {describe_validation_error(exc)}") from None
    if target_epsilon is not None:
        noise_multiplier = noise_multiplier_for(setting, target_epsilon)
    eps, order = epsilon_for(setting, noise_multiplier)
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
    """Entry point of the ``graphpriv`` console script: :data:`app`, quicker to start and to end
    (:func:`graphpriv.startup.defer_torch_dynamo`, :func:`graphpriv.startup.exit_now`). An exception that escapes the app (``--debug``)
    ends the process as usual, with its traceback."""
    defer_torch_dynamo()
    try:
        app()
    except SystemExit as exc:
        exit_now(exc.code)
    exit_now(0)


if __name__ == "__main__":  # pragma: no cover
    main()
