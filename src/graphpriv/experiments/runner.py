"""Run one method on one dataset: config, data, run, store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphpriv.data import load
from graphpriv.experiments.registry import make_config, method_spec
from graphpriv.experiments.store import ResultStore
from graphpriv.methods.base import Progress, Result, no_progress


def run_method(method: str, dataset: str, *, seed: int = 0, overrides: dict[str, Any] | None = None,
               store: str | Path | None = None, progress: Progress = no_progress) -> Result:
    """Validate the config, load the data, run, and append the result to ``store`` (if given).

    Args:
        method: Registry id (``graphpriv run --help`` lists them). dataset: registry id or path.
        seed: Run seed. overrides: Config values (e.g. ``{"epsilon": 4, "theta": 10}``).
        store: SQLite results file, or ``None`` not to store. progress: Progress callback.

    Returns:
        The :class:`Result`.

    Raises:
        ConfigError, DatasetError, PrivacyError: bad input, before any training.
    """
    spec = method_spec(method)
    config = make_config(method, dict(overrides or {}))
    data = load(dataset)
    result = spec.run(config, data, seed=seed, method=method, progress=progress)
    if store is not None:
        ResultStore(store).append(result)
    return result
