"""Sweeps: a grid of runs (methods x datasets x epsilons x seeds x overrides) on Dask distributed.

    graphpriv sweep SWEEP.yaml [--workers N | --scheduler ADDRESS]

A sweep file (YAML) is validated by :class:`SweepSpec` and expanded into runs; every run's config
is validated before anything runs (an unknown method or key is a :class:`ConfigError`). Runs
already in the results store (same method, dataset, seed and config hash) are skipped, so a
killed sweep restarts where it stopped. Each run is a Dask task that returns its result (or its
error) to this process, which commits it to the SQLite store as soon as it arrives: the store has
one writer, and nothing finished is lost when the sweep, or a worker, dies. A run that raises is
recorded with its error (status ``error``; a rerun tries it again) and does not stop the sweep.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from graphpriv.errors import ConfigError
from graphpriv.experiments.registry import make_config, method_spec
from graphpriv.experiments.store import ResultStore
from graphpriv.methods.base import Result

__all__ = ["SweepRun", "SweepSpec", "execute_run", "expand", "load_sweep", "make_run", "pending_runs", "run_runs",
           "run_sweep"]


class SweepSpec(BaseModel):
    """A sweep file.

    Attributes:
        methods: registry ids. datasets: registry ids or graph file paths.
        epsilons: target epsilons, crossed with every method that has an ``epsilon`` setting and is
            private by default (others run once per remaining cell); empty: the methods' defaults.
        seeds: n (seeds 0..n-1) or an explicit list.
        overrides: variants, each a dict of settings applied to every method (default: one, ``{}``).
        method_overrides: settings for one method only (``{method: {key: value}}``).
        store: the SQLite results store.
    """

    model_config = ConfigDict(extra="forbid")

    methods: list[str] = Field(min_length=1)
    datasets: list[str] = Field(min_length=1)
    epsilons: list[float] = Field(default_factory=list)
    seeds: int | list[int] = 1
    overrides: list[dict[str, Any]] = Field(default_factory=lambda: [{}], min_length=1)
    method_overrides: dict[str, dict[str, Any]] = Field(default_factory=dict)
    store: str = "runs/results.sqlite"

    @field_validator("epsilons")
    @classmethod
    def _positive(cls, values: list[float]) -> list[float]:
        if any(not e > 0 for e in values):
            raise ValueError(f"every epsilon must be > 0 (got {values})")
        return values

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, value: int | list[int]) -> int | list[int]:
        if isinstance(value, int) and value < 1:
            raise ValueError(f"seeds must be >= 1 (got {value})")
        return value

    def seed_list(self) -> list[int]:
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
        return dict(self.config)

    def label(self) -> str:
        extra = ", ".join(f"{k}={v}" for k, v in self.overrides)
        return f"{self.method} on {self.dataset}, seed {self.seed}" + (f" ({extra})" if extra else "")


def make_run(method: str, dataset: str, seed: int, overrides: dict[str, Any]) -> SweepRun:
    """A validated run (raises :class:`ConfigError` for an unknown key or a bad value)."""
    config = make_config(method, overrides).model_dump(mode="json")
    return SweepRun(method, dataset, seed, tuple(sorted(overrides.items())), tuple(sorted(config.items())))


def load_sweep(path: str | Path) -> SweepSpec:
    """Read and validate a YAML sweep file.

    Raises:
        ConfigError: unreadable YAML or an invalid spec (pydantic's message).
    """
    import yaml

    try:
        raw = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read sweep file {path}: {exc}") from None
    try:
        return SweepSpec.model_validate(raw or {})
    except ValueError as exc:
        raise ConfigError(f"invalid sweep file {path}: {exc}") from None


def _private_with_epsilon(method: str) -> bool:
    spec = method_spec(method)
    return "epsilon" in spec.config_cls.model_fields and spec.defaults.get("private", True) is not False


def expand(spec: SweepSpec) -> list[SweepRun]:
    """Every run of the grid, each config validated.

    Raises:
        ConfigError: an unknown method, an unknown key, an invalid value, or method_overrides for
            a method not in the sweep; raised before anything runs.
    """
    for method in spec.methods:
        method_spec(method)
    stray = set(spec.method_overrides) - set(spec.methods)
    if stray:
        raise ConfigError(f"method_overrides for methods not in the sweep: {', '.join(sorted(stray))}")
    runs = []
    for method in spec.methods:
        epsilons = spec.epsilons if spec.epsilons and _private_with_epsilon(method) else [None]
        for dataset in spec.datasets:
            for variant in spec.overrides:
                for epsilon in epsilons:
                    overrides = {**variant, **spec.method_overrides.get(method, {})}
                    if epsilon is not None:
                        overrides["epsilon"] = epsilon
                    for seed in spec.seed_list():
                        runs.append(make_run(method, dataset, seed, overrides))
    return list(dict.fromkeys(runs))  # identical cells (e.g. non-private methods x variants) once


def pending_runs(runs: Iterable[SweepRun], store: ResultStore) -> list[SweepRun]:
    """The runs without a successful result in ``store``."""
    return [r for r in runs if store.find(r.method, r.dataset, r.seed, r.config_dict) is None]


@lru_cache(maxsize=8)
def _dataset(name: str):
    from graphpriv.data import load

    return load(name)


def execute_run(run: SweepRun, threads: int = 1) -> tuple[str, str]:
    """Run one sweep cell (in a Dask worker): ``("ok", result JSON)`` or ``("error", traceback)``.
    Datasets are cached per worker process; the result's ``dataset`` is the sweep's name for it."""
    import torch

    torch.set_num_threads(threads)
    try:
        config = make_config(run.method, dict(run.overrides))
        result = method_spec(run.method).run(config, _dataset(run.dataset), seed=run.seed, method=run.method)
        # stored under the name the sweep gave (a file path stays a path), so a rerun finds it
        return "ok", result.model_copy(update={"dataset": run.dataset}).model_dump_json()
    except Exception:  # noqa: BLE001 -- recorded in the store, the sweep goes on
        return "error", traceback.format_exc(limit=20)


def run_sweep(spec: SweepSpec, *, workers: int = 2, scheduler: str | None = None, threads: int = 1,
              on_done: Callable[[SweepRun, str, int, int], None] | None = None) -> dict[str, int]:
    """Run every pending cell of ``spec`` on Dask (see :func:`run_runs`).

    Raises:
        ConfigError: an invalid grid (before anything runs).
    """
    return run_runs(expand(spec), spec.store, workers=workers, scheduler=scheduler, threads=threads,
                    on_done=on_done)


def run_runs(runs: list[SweepRun], store_path: str | Path, *, workers: int = 2, scheduler: str | None = None,
             threads: int = 1, on_done: Callable[[SweepRun, str, int, int], None] | None = None) -> dict[str, int]:
    """Run the runs not yet in the store on Dask; commit each result (or error) as it arrives.

    Args:
        runs: validated runs (:func:`expand`). store_path: the SQLite results store.
        workers: LocalCluster size (one process per worker, one thread each) when ``scheduler`` is
            None. scheduler: address of a running Dask scheduler (``tcp://host:8786``).
        threads: torch threads per run. on_done: called as ``on_done(run, status, done, total)``.

    Returns:
        ``{"total": len(runs), "skipped": already stored, "ok": ..., "error": ...}``.
    """
    from dask.distributed import Client, LocalCluster, as_completed

    store = ResultStore(store_path)
    todo = pending_runs(runs, store)
    counts = {"total": len(runs), "skipped": len(runs) - len(todo), "ok": 0, "error": 0}
    if not todo:
        return counts
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(scheduler or cluster)
    try:
        futures = {client.submit(execute_run, run, threads, key=f"graphpriv-run-{i}-{run.method}", pure=False): run
                   for i, run in enumerate(todo)}
        for done, future in enumerate(as_completed(futures), 1):
            run = futures[future]
            try:
                status, payload = future.result()
            except Exception:  # noqa: BLE001 -- the task itself was lost (a worker died too often)
                status, payload = "error", traceback.format_exc(limit=20)
            if status == "ok":
                store.append(Result.model_validate_json(payload))
            else:
                store.append_error(run.method, run.dataset, run.seed, run.config_dict, payload)
            counts[status] += 1
            if on_done is not None:
                on_done(run, status, done, len(todo))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return counts
