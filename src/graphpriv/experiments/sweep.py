"""Sweeps: a grid of runs (methods x datasets x epsilons x seeds x overrides) on Dask distributed.

    graphpriv sweep SWEEP.yaml [--workers N | --scheduler ADDRESS] [--dry-run] [--retry-failed]

A sweep file (YAML) is validated by :class:`SweepSpec` and expanded into runs; every run's config
and seed is validated before anything runs (an unknown method or key, or a seed outside
``[0, 2**32-1]``, is a :class:`ConfigError`); :func:`check_sweep` also loads every dataset and
lists each cell that would fail, for ``--dry-run``. Identical cells run once. Runs already in the
results store (same method, dataset, seed and config hash) are skipped, so a killed sweep
restarts where it stopped. Each run is a Dask task that returns its result (or its error) to this
process, which commits it to the SQLite store as soon as it arrives: the store has one writer, and
nothing finished is lost when the sweep, or a worker, dies.

A run that raises does not stop the sweep: it is a deterministic failure, recorded once (status
``error``, with the exception's type, one-line message and traceback, and whether it was a
graphpriv error, i.e. bad input) and not run again by a resumed sweep unless ``retry_failed``
(``--retry-failed``) asks. A task that was lost (its worker was killed) is recorded as ``lost`` and
is retried by the next sweep.
"""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from graphpriv.data.validation import MAX_SEED, check_seed
from graphpriv.errors import ConfigError, GraphPrivError, describe_validation_error
from graphpriv.experiments import DEFAULT_STORE
from graphpriv.experiments.registry import (
    apply_default_delta,
    check_delta_rule,
    check_epsilon_applies,
    is_private,
    make_config,
    method_spec,
    takes_default_delta,
)
from graphpriv.experiments.runner import prepare_run, run_prepared
from graphpriv.experiments.store import ResultStore, config_hash, one_line
from graphpriv.methods.base import Result

__all__ = ["MAX_SEED", "MAX_SEED_COUNT", "CellProblem", "SweepCheck", "SweepRun", "SweepSpec", "check_sweep",
           "execute_run", "expand", "load_sweep", "make_run", "pending_runs", "run_runs", "run_sweep", "split_runs"]

#: The largest ``seeds: N`` (seeds 0..N-1); list the seeds for anything else.
MAX_SEED_COUNT = 100_000


class SweepSpec(BaseModel):
    """A sweep file.

    Attributes:
        methods: registry ids. datasets: registry ids or graph file paths.
        epsilons: target epsilons, crossed with every (method, variant) that is private (others
            run once per remaining cell); empty: the methods' defaults.
        seeds: n (seeds 0..n-1) or an explicit list.
        overrides: variants, each a dict of settings applied to every method (default: one, ``{}``).
        method_overrides: settings for one method only (``{method: {key: value}}``).
        store: the SQLite results store.
        allow_large_delta: accept delta >= 1 / (number of privacy units) (``--dry-run`` checks the
            rule on every cell's loaded dataset).
    """

    model_config = ConfigDict(extra="forbid")

    methods: list[str] = Field(min_length=1)
    datasets: list[str] = Field(min_length=1)
    epsilons: list[float] = Field(default_factory=list)
    seeds: int | list[int] = 1
    overrides: list[dict[str, Any]] = Field(default_factory=lambda: [{}], min_length=1)
    method_overrides: dict[str, dict[str, Any]] = Field(default_factory=dict)
    store: str = str(DEFAULT_STORE)
    allow_large_delta: bool = False

    @field_validator("epsilons")
    @classmethod
    def _positive(cls, values: list[float]) -> list[float]:
        if any(not e > 0 for e in values):
            raise ValueError(f"every epsilon must be > 0 (got {values})")
        return values

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, value: int | list[int]) -> int | list[int]:
        if isinstance(value, int) and not 1 <= value <= MAX_SEED_COUNT:
            raise ValueError(f"seeds: N runs seeds 0..N-1 and must be in [1, {MAX_SEED_COUNT}] (got {value}); "
                             "list the seeds explicitly for others")
        return value

    def seed_list(self) -> list[int]:
        """The seeds: ``0..seeds-1``, or the explicit list."""
        return list(range(self.seeds)) if isinstance(self.seeds, int) else list(self.seeds)


@dataclass(frozen=True)
class SweepRun:
    """One run of a sweep: its key in the store and the overrides that build its config."""

    method: str
    dataset: str
    seed: int
    overrides: tuple[tuple[str, Any], ...]
    config: tuple[tuple[str, Any], ...]  # the validated config (JSON values): the store key

    @property
    def config_dict(self) -> dict[str, Any]:
        """The validated config as a dict."""
        return dict(self.config)

    @property
    def key(self) -> tuple[str, str, int, str]:
        """``(method, dataset, seed, config hash)``: the run's cell in the results store."""
        return self.method, self.dataset, self.seed, config_hash(self.config_dict)

    def label(self) -> str:
        """``METHOD on DATASET, seed N (key=value, ...)``."""
        return _label(self.method, self.dataset, self.seed, self.overrides)


def _label(method: str, dataset: str, seed: Any, overrides: Iterable[tuple[str, Any]]) -> str:
    extra = ", ".join(f"{k}={v}" for k, v in overrides)
    return f"{method} on {dataset}, seed {seed}" + (f" ({extra})" if extra else "")


@dataclass(frozen=True)
class CellProblem:
    """A cell of a sweep that would fail, and why.

    Attributes:
        method, dataset, seed, overrides: the cell (the seed as written in the sweep file).
        reason: one line.
    """

    method: str
    dataset: str
    seed: Any
    overrides: tuple[tuple[str, Any], ...]
    reason: str

    def label(self) -> str:
        """``METHOD on DATASET, seed N (key=value, ...)``."""
        return _label(self.method, self.dataset, self.seed, self.overrides)


@dataclass
class SweepCheck:
    """What :func:`check_sweep` found.

    Attributes:
        runs: the valid runs (identical cells once). problems: the cells that would fail.
    """

    runs: list[SweepRun] = field(default_factory=list)
    problems: list[CellProblem] = field(default_factory=list)


def make_run(method: str, dataset: str, seed: int, overrides: dict[str, Any]) -> SweepRun:
    """A validated run.

    Args:
        method: registry id. dataset: registry id or graph file path. seed: in ``[0, 2**32-1]``.
        overrides: config settings.

    Returns:
        The :class:`SweepRun` (its config validated and completed with the method's defaults, the
        default delta lowered by the rule as the run will: :func:`apply_default_delta`).

    Raises:
        ConfigError: an unknown method or key, an invalid value, a bad seed, or an epsilon for a
            non-private setting.
    """
    seed = check_seed(seed)
    check_epsilon_applies(method, overrides)
    validated = make_config(method, overrides)
    check_epsilon_applies(method, overrides, validated)
    if takes_default_delta(method, validated):  # only then is the dataset's size read
        validated, _ = apply_default_delta(method, validated, _size_source(dataset))  # as the run will
    config = validated.model_dump(mode="json")
    return SweepRun(method, dataset, seed, tuple(sorted(overrides.items())), tuple(sorted(config.items())))


def load_sweep(path: str | Path) -> SweepSpec:
    """Read and validate a YAML sweep file.

    Args:
        path: the YAML file.

    Returns:
        The :class:`SweepSpec`.

    Raises:
        ConfigError: an unreadable file or YAML, or an invalid spec (one line per file, naming the
            fields).
    """
    import yaml

    try:
        raw = yaml.safe_load(Path(path).read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read sweep file {path} ({one_line(exc, 200)}); check the path and its "
                          "YAML") from None
    if raw is not None and not isinstance(raw, dict):
        raise ConfigError(f"invalid sweep file {path}: expected a mapping of methods, datasets, epsilons, seeds, "
                          f"overrides, store (got {type(raw).__name__})")
    try:
        return SweepSpec.model_validate(raw or {})
    except ValueError as exc:  # pydantic.ValidationError
        detail = "; ".join(describe_validation_error(exc).splitlines())
        raise ConfigError(f"invalid sweep file {path}: {one_line(detail)}") from None


def _crossed_with_epsilons(method: str, overrides: dict[str, Any]) -> bool:
    """Whether the sweep's epsilons apply to ``method`` with ``overrides``: a private setting
    (:func:`graphpriv.experiments.registry.is_private`); an invalid one is named by :func:`make_run`."""
    try:
        return is_private(method, make_config(method, overrides))
    except ConfigError:
        return False


def _check_stray(spec: SweepSpec) -> None:
    stray = set(spec.method_overrides) - set(spec.methods)
    if stray:
        raise ConfigError(f"method_overrides for methods not in the sweep: {', '.join(sorted(stray))}; remove "
                          "them or add the methods")


def _grid(spec: SweepSpec) -> Iterable[tuple[str, str, Any, dict[str, Any]]]:
    """Every (method, dataset, seed, overrides) cell of the grid, unvalidated; the epsilons are
    crossed with each private (method, variant) only."""
    for method in spec.methods:
        for dataset in spec.datasets:
            for variant in spec.overrides:
                merged = {**variant, **spec.method_overrides.get(method, {})}
                crossed = bool(spec.epsilons) and _crossed_with_epsilons(method, merged)
                for epsilon in spec.epsilons if crossed else [None]:
                    overrides = dict(merged)
                    if epsilon is not None:
                        overrides["epsilon"] = epsilon
                    for seed in spec.seed_list():
                        yield method, dataset, seed, overrides


def _unique(runs: Iterable[SweepRun]) -> list[SweepRun]:
    """Identical cells (same store key) once, in order."""
    out: dict[tuple[str, str, int, str], SweepRun] = {}
    for run in runs:
        out.setdefault(run.key, run)
    return list(out.values())


def expand(spec: SweepSpec) -> list[SweepRun]:
    """Every run of the grid, each config and seed validated; identical cells once.

    Args:
        spec: the sweep.

    Returns:
        The runs.

    Raises:
        ConfigError: an unknown method, an unknown key, an invalid value, a seed outside
            ``[0, 2**32-1]``, or method_overrides for a method not in the sweep; raised before
            anything runs (the first one found).
    """
    for method in spec.methods:
        method_spec(method)
    _check_stray(spec)
    return _unique(make_run(*cell) for cell in _grid(spec))


def _load(dataset: str) -> tuple[Any, str | None]:
    """``(data, None)``, or ``(None, reason)`` when the dataset cannot be loaded."""
    from graphpriv.data import load

    try:
        return load(dataset), None
    except GraphPrivError as exc:
        return None, one_line(exc)
    except Exception as exc:  # noqa: BLE001 -- any failure to load is reported for the cell
        return None, one_line(f"cannot load dataset {dataset!r}: {type(exc).__name__}: {exc}")


def check_sweep(spec: SweepSpec, *, load_datasets: bool = True) -> SweepCheck:
    """Validate every cell of the grid without running anything: the method and config, the seed
    (an integer in ``[0, 2**32-1]``), no epsilon for a non-private setting and, with
    ``load_datasets``, the dataset (loaded once each with :func:`graphpriv.data.load`: a registry id
    must be known and its files found, a file must exist and parse) and the delta rule on it
    (:func:`graphpriv.experiments.registry.check_delta_rule`, unless ``allow_large_delta``).

    Args:
        spec: the sweep. load_datasets: also load every dataset (``--dry-run``).

    Returns:
        A :class:`SweepCheck`: the valid runs (identical cells once) and one
        :class:`CellProblem` per cell that would fail.

    Raises:
        ConfigError: method_overrides for a method not in the sweep (not a cell's problem).
    """
    _check_stray(spec)
    loaded: dict[str, tuple[Any, str | None]] = {}
    check = SweepCheck()
    seen: set[str] = set()
    for method, dataset, seed, overrides in _grid(spec):
        try:
            run = make_run(method, dataset, seed, overrides)
            reason = None
        except ConfigError as exc:
            run, reason = None, one_line(exc)
        if reason is None and load_datasets:
            if dataset not in loaded:
                loaded[dataset] = _load(dataset)
            data, reason = loaded[dataset]
            if reason is None:
                try:
                    check_delta_rule(method, make_config(method, dict(run.config_dict)), data,  # the run's delta
                                     allow_large_delta=spec.allow_large_delta)
                except GraphPrivError as exc:
                    reason = one_line(exc)
        if reason is None:
            check.runs.append(run)
            continue
        key = json.dumps([method, dataset, seed, overrides], sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            check.problems.append(CellProblem(method, dataset, seed, tuple(sorted(overrides.items())), reason))
    check.runs = _unique(check.runs)
    return check


def split_runs(runs: Iterable[SweepRun], store: ResultStore, *,
               retry_failed: bool = False) -> tuple[list[SweepRun], int, int]:
    """Sort runs by what the store holds for them.

    Args:
        runs: validated runs. store: the results store.
        retry_failed: count the runs whose stored attempt raised as to do (by default they are not
            run again); lost runs (a killed worker) are always to do.

    Returns:
        ``(runs to do, stored successes skipped, stored failures skipped)``.

    Raises:
        StoreError: the store cannot be read.
    """
    statuses = store.statuses()
    todo, skipped, failed = [], 0, 0
    for run in runs:
        status = statuses.get(run.key)
        if status == "ok":
            skipped += 1
        elif status == "error" and not retry_failed:
            failed += 1
        else:  # not stored, lost, or a failure to retry
            todo.append(run)
    return todo, skipped, failed


def pending_runs(runs: Iterable[SweepRun], store: ResultStore, *, retry_failed: bool = False) -> list[SweepRun]:
    """The runs a sweep would run now.

    Args:
        runs: validated runs. store: the results store.
        retry_failed: also the runs whose stored attempt raised (deterministic failures, skipped
            by default); lost runs (a killed worker) are always pending.

    Returns:
        The runs without a successful result (and, unless ``retry_failed``, without a recorded
        failure) in ``store``, in order.

    Raises:
        StoreError: the store cannot be read.
    """
    return split_runs(runs, store, retry_failed=retry_failed)[0]


def _size_source(dataset: str):
    """What :func:`apply_default_delta` reads a dataset's size from: a registry id as it is (the
    data registry states its size), a graph file loaded (cached), or the name when the file cannot
    be read (the run then fails with the loader's error)."""
    from graphpriv.data.registry import REGISTRY

    if dataset in REGISTRY:
        return dataset
    try:
        return _dataset(dataset)
    except Exception:  # noqa: BLE001 - any loader failure is the run's to report, cell by cell
        return dataset


@lru_cache(maxsize=8)
def _dataset(name: str):
    from graphpriv.data import load

    return load(name)


def execute_run(run: SweepRun, threads: int = 1, allow_large_delta: bool = True) -> tuple[str, Any]:
    """Run one sweep cell (in a Dask worker). Datasets are cached per worker process; the
    result's ``dataset`` is the sweep's name for it.

    Args:
        run: the cell. threads: torch threads. allow_large_delta: False applies the delta rule
            (:func:`graphpriv.experiments.registry.check_delta_rule`) to the loaded dataset; the paper
            tables keep their papers' deltas (True).

    Returns:
        ``("ok", result JSON)``, or ``("error", {"type", "message", "traceback", "bad_input"})``
        when the run raised: the exception's qualified type, its one-line message, the traceback,
        and whether it was a graphpriv error (bad input). Never raises for a failing run.
    """
    import torch

    torch.set_num_threads(threads)
    try:
        prepared = prepare_run(run.method, _dataset(run.dataset), seed=run.seed, overrides=dict(run.overrides),
                               allow_large_delta=allow_large_delta)
        result = run_prepared(prepared)
        # stored under the name the sweep gave (a file path stays a path), so a rerun finds it
        return "ok", result.model_copy(update={"dataset": run.dataset}).model_dump_json()
    except Exception as exc:  # noqa: BLE001 -- recorded in the store, the sweep goes on
        kind = type(exc)
        name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
        return "error", {"type": name, "message": one_line(exc) or name, "traceback": traceback.format_exc(limit=20),
                         "bad_input": isinstance(exc, GraphPrivError)}


def run_sweep(spec: SweepSpec, *, workers: int = 2, scheduler: str | None = None, threads: int = 1,
              retry_failed: bool = False,
              on_done: Callable[[SweepRun, str, int, int], None] | None = None) -> dict[str, int]:
    """Run every pending cell of ``spec`` on Dask (see :func:`run_runs`).

    Args:
        spec: the sweep; other arguments as :func:`run_runs`.

    Returns:
        The counts of :func:`run_runs`.

    Raises:
        ConfigError: an invalid grid (before anything runs).
        StoreError: a bad results store (before anything runs).
    """
    return run_runs(expand(spec), spec.store, workers=workers, scheduler=scheduler, threads=threads,
                    retry_failed=retry_failed, allow_large_delta=spec.allow_large_delta, on_done=on_done)


def run_runs(runs: list[SweepRun], store_path: str | Path, *, workers: int = 2, scheduler: str | None = None,
             threads: int = 1, retry_failed: bool = False, allow_large_delta: bool = True,
             on_done: Callable[[SweepRun, str, int, int], None] | None = None,
             verbose: bool = False) -> dict[str, int]:
    """Run the runs not yet in the store on Dask; commit each result (or failure) as it arrives.

    Args:
        runs: validated runs (:func:`expand`). store_path: the SQLite results store (opened, and
            checked writable, before anything runs).
        workers: LocalCluster size (one process per worker, one thread each) when ``scheduler`` is
            None. scheduler: address of a running Dask scheduler (``tcp://host:8786``).
        threads: torch threads per run. retry_failed: run again the runs whose stored attempt
            raised (by default they are skipped and counted in ``failed_before``).
        allow_large_delta: False refuses (records as a bad-input failure) a run whose delta is at
            or above 1 / (privacy units of its dataset); the paper tables keep True.
        on_done: called as ``on_done(run, status, done, total)``, status ``ok``, ``error`` (the
            run raised) or ``lost`` (its task was lost).
        verbose: let Dask's INFO logs through (scheduler and worker start, connections); by
            default only its warnings and errors are printed.

    Returns:
        ``{"total": len(runs), "skipped": stored results, "failed_before": stored failures not
        retried, "ok": ..., "error": runs that failed now (raised or lost)}``.

    Raises:
        StoreError: the store cannot be opened or written.
    """
    from dask.distributed import Client, LocalCluster, as_completed

    # importing distributed sets its logger to INFO (dask's logging config); a sweep's own bar says
    # what happens, so Dask speaks only of warnings and errors unless asked
    logging.getLogger("distributed").setLevel(logging.INFO if verbose else logging.WARNING)
    store = ResultStore(store_path)
    todo, skipped, failed_before = split_runs(runs, store, retry_failed=retry_failed)
    counts = {"total": len(runs), "skipped": skipped, "failed_before": failed_before, "ok": 0, "error": 0}
    if not todo:
        return counts
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0",  # any free port: never fails on a busy 8787
                               silence_logs=logging.INFO if verbose else logging.WARNING)
    client = Client(scheduler or cluster)
    try:
        futures = {client.submit(execute_run, run, threads, allow_large_delta, key=f"graphpriv-run-{i}-{run.method}", pure=False): run
                   for i, run in enumerate(todo)}
        for done, future in enumerate(as_completed(list(futures)), 1):
            run = futures.pop(future)  # no reference kept: a finished run is never recomputed
            try:
                status, payload = future.result()
            except Exception as exc:  # noqa: BLE001 -- the task itself was lost (a worker died too often)
                kind = type(exc)
                store.append_error(run.method, run.dataset, run.seed, run.config_dict,
                                   traceback.format_exc(limit=20), error_type=f"{kind.__module__}.{kind.__qualname__}",
                                   message=one_line(exc) or kind.__name__, bad_input=False, lost=True)
                status = "lost"
            else:
                if status == "ok":
                    store.append(Result.model_validate_json(payload))
                else:
                    store.append_error(run.method, run.dataset, run.seed, run.config_dict, payload["traceback"],
                                       error_type=payload["type"], message=payload["message"],
                                       bad_input=payload["bad_input"])
            # release the result: while a future is referenced, dask recomputes it on another worker
            # whenever the worker holding it dies, so one restart used to redo every finished run
            future.release()
            counts["ok" if status == "ok" else "error"] += 1
            if on_done is not None:
                on_done(run, status, done, len(todo))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return counts
