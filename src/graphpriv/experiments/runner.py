"""Run one method on one dataset: every input checked before any work, then config, data, run, store.

Order (nothing computed is lost): the store is opened (and migrated, and checked writable) and
every output path is checked before the data is loaded or anything is trained; the result is
stored last, after the caller has shown and written it (:func:`run_method` with ``store`` stores
it itself and, if that fails, raises a :class:`StoreError` that carries the result).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torch_geometric.data import Data

from graphpriv.data import load
from graphpriv.data.files import EDGE_LIST_SUFFIXES
from graphpriv.data.validation import check_data, check_seed
from graphpriv.errors import ConfigError, GraphPrivError, StoreError
from graphpriv.experiments.registry import (
    MethodSpec,
    apply_default_delta,
    check_delta_rule,
    check_epsilon_applies,
    make_config,
    method_spec,
)
from graphpriv.experiments.store import ResultStore
from graphpriv.methods.base import MethodConfig, Progress, Result, no_progress

__all__ = ["PreparedRun", "check_output_path", "check_settings", "prepare_data", "prepare_run", "run_method",
           "run_prepared", "store_result"]

#: Suffixes a published graph can be written to (``--out``).
RELEASE_SUFFIXES = (".npz", *EDGE_LIST_SUFFIXES)


@dataclass
class PreparedRun:
    """A run whose every input has been checked: the method, its validated config, the loaded graph."""

    spec: MethodSpec
    config: MethodConfig
    data: Data
    seed: int
    #: One sentence when the default delta was lowered by the rule (:func:`apply_default_delta`).
    delta_note: str | None = None
    #: One sentence when ``allow_large_delta`` kept a delta at or above the rule's bound.
    large_delta_note: str | None = None


def check_output_path(path: str | Path, *, option: str, suffixes: tuple[str, ...]) -> Path:
    """Check, before any work, that a file can be written at ``path``.

    Args:
        path: where a result will be written. option: the CLI option named in errors (``--json``).
        suffixes: accepted suffixes (lower case, with the dot).

    Returns:
        ``path`` as a :class:`Path` (its parent folder is created).

    Raises:
        ConfigError: wrong suffix, a folder at ``path``, a parent that is a file, or no write
            permission.
    """
    path = Path(path)
    if path.suffix.lower() not in suffixes:
        raise ConfigError(f"{option} {path}: the file must end in {' or '.join(suffixes)}")
    if path.is_dir():
        raise ConfigError(f"{option} {path} is a folder; give a file path")
    parent = path.parent
    existing = next((p for p in (parent, *parent.parents) if p.exists()), Path("."))
    if not existing.is_dir():
        raise ConfigError(f"{option} {path}: {existing} is a file, not a folder; choose another path")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{option} {path}: cannot create its folder ({exc.strerror}); choose another path") from None
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ConfigError(f"{option} {path}: no permission to write there; choose another path")
    return path


def check_settings(method: str, *, seed: int = 0,
                   overrides: dict[str, Any] | None = None) -> tuple[MethodSpec, MethodConfig, int]:
    """The cheapest checks of a run, with no side effect: the method, its settings, the seed.

    Returns:
        ``(registry entry, validated config, seed as an int)``.

    Raises:
        ConfigError: unknown method or setting, a bad value, epsilon for a non-private run, a seed
            outside [0, 2^32 - 1].
    """
    overrides = dict(overrides or {})
    spec = method_spec(method)
    check_epsilon_applies(method, overrides)  # before the config: cn has no epsilon setting to refuse
    config = make_config(method, overrides)
    check_epsilon_applies(method, overrides, config)
    return spec, config, check_seed(seed)


def prepare_run(method: str, dataset: str | Path | Data, *, seed: int = 0, overrides: dict[str, Any] | None = None,
                allow_large_delta: bool = False) -> PreparedRun:
    """Check everything a run needs, cheapest first, before any training.

    Args:
        method: registry id. dataset: registry id, graph file path, or a PyG ``Data``.
        seed: run seed, an integer in [0, 2^32 - 1]. overrides: config values.
        allow_large_delta: accept delta >= 1 / (number of privacy units).

    Returns:
        The :class:`PreparedRun`.

    Raises:
        ConfigError: unknown method or setting, a bad value, a bad seed, epsilon for a non-private
            run. DatasetError: the graph cannot be loaded. PrivacyError: delta too large.
    """
    return prepare_data(check_settings(method, seed=seed, overrides=overrides), dataset,
                        allow_large_delta=allow_large_delta)


def prepare_data(settings: tuple[MethodSpec, MethodConfig, int], dataset: str | Path | Data, *,
                 allow_large_delta: bool = False) -> PreparedRun:
    """The second half of :func:`prepare_run`: load the graph of a run whose settings passed
    :func:`check_settings`, lower a default delta that is not below 1 / (privacy units) to the
    rule's (:func:`~graphpriv.experiments.registry.apply_default_delta`) and check the delta rule.

    Raises:
        ConfigError: ``dataset`` of another type. DatasetError: the graph cannot be loaded.
        PrivacyError: delta too large.
    """
    spec, config, seed = settings
    if not isinstance(dataset, (str, Path, Data)):
        raise ConfigError(f"dataset must be a registry id, a graph file path or a torch_geometric Data, got a "
                          f"{type(dataset).__name__}")
    data = check_data(dataset, method=spec.id) if isinstance(dataset, Data) else load(dataset)  # edges normalised
    config, delta_note = apply_default_delta(spec.id, config, data)
    large_delta_note = check_delta_rule(spec.id, config, data, allow_large_delta=allow_large_delta)
    return PreparedRun(spec, config, data, seed, delta_note, large_delta_note)


def run_prepared(run: PreparedRun, *, progress: Progress = no_progress) -> Result:
    """Run a :class:`PreparedRun`; the result's info records how the input graph was normalised
    (``input_normalisations``: one sentence per change, empty when none)."""
    result = run.spec.run(run.config, run.data, seed=run.seed, method=run.spec.id, progress=progress)
    result.info["input_normalisations"] = list(getattr(run.data, "normalisations", None) or [])
    if run.delta_note is not None:
        result.info["default_delta"] = run.delta_note
    if run.large_delta_note is not None:
        result.info["large_delta"] = run.large_delta_note
    return result


def store_result(store: ResultStore, result: Result) -> int:
    """Append ``result`` to ``store``; returns its row id.

    Raises:
        StoreError: the write failed; the error's ``result`` attribute holds the result.
    """
    try:
        return store.append(result)
    except StoreError as exc:
        exc.result = result
        raise
    except (OSError, GraphPrivError) as exc:  # sqlite3 errors are re-raised by the store as StoreError
        error = StoreError(f"the result was not stored in {store.path}: {exc}")
        error.result = result
        raise error from None


def run_method(method: str, dataset: str | Path | Data, *, seed: int = 0, overrides: dict[str, Any] | None = None,
               store: str | Path | None = None, progress: Progress = no_progress,
               allow_large_delta: bool = False) -> Result:
    """Check every input, open the store, run, and append the result to ``store`` (if given).

    Args:
        method: Registry id (``graphpriv run --help`` lists them). dataset: registry id, path or
            a PyG ``Data``. seed: Run seed in [0, 2^32 - 1]. overrides: Config values (e.g.
            ``{"epsilon": 4, "theta": 10}``). store: SQLite results file, or ``None`` not to store.
        progress: Progress callback. allow_large_delta: accept delta >= 1 / (privacy units).

    Returns:
        The :class:`Result`.

    Raises:
        ConfigError, DatasetError, PrivacyError, StoreError: bad input, before any training.
        StoreError: the finished result could not be stored (``error.result`` holds it).
    """
    settings = check_settings(method, seed=seed, overrides=overrides)  # before the store is created
    opened = ResultStore(store) if store is not None else None  # opened, migrated, checked writable
    prepared = prepare_data(settings, dataset, allow_large_delta=allow_large_delta)
    result = run_prepared(prepared, progress=progress)
    if opened is not None:
        store_result(opened, result)
    return result
