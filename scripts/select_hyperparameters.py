"""Choose a method's hyperparameters on validation accuracy, on seeds disjoint from the reported ones.

    python scripts/select_hyperparameters.py gap-edp -d fb100-mit8 --epsilon 4 \
        --grid hops=1,2,3 --grid hidden=16,64 [--seeds 100 101 102] [--json out.json] \
        [--store selection.sqlite]

Every combination of the ``--grid`` values runs through ``graphpriv.run_method`` (the same path as
``graphpriv run``) on each selection seed; the score of a combination is its mean
``val_accuracy`` (the transductive protocol's validation nodes: never the test accuracy, which is
not read). The selection seeds must not overlap the seeds tables report (0-99), so the chosen
setting is never fitted to a reported split. Prints one line per combination, best first, and the
best as ``--set`` flags; ``--json`` writes ``{"method", "dataset", "epsilon", "seeds", "best",
"scores"}``. With ``--store`` every run's result is kept in a graphpriv results store and read
back instead of run again (same method, dataset, seed and validated config), so a long selection
that is stopped resumes run by run.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import statistics
import sys
from pathlib import Path
from typing import Any

#: Seeds tables report are below this; selection seeds must be at or above it.
FIRST_SELECTION_SEED = 100


def parse_grid(items: list[str]) -> dict[str, list[Any]]:
    """``["hops=1,2", "lr=0.01,0.1"]`` -> ``{"hops": [1, 2], "lr": [0.01, 0.1]}`` (values read as
    JSON when they parse, else kept as strings).

    Raises:
        SystemExit: an item without ``=`` or without values (the message names it).
    """
    grid: dict[str, list[Any]] = {}
    for item in items:
        key, sep, values = item.partition("=")
        if not sep or not key or not values:
            raise SystemExit(f"--grid {item!r}: write KEY=V1,V2,... (e.g. --grid hops=1,2,3)")
        parsed = []
        for value in values.split(","):
            try:
                parsed.append(json.loads(value))
            except json.JSONDecodeError:
                parsed.append(value)
        grid[key] = parsed
    return grid


@functools.lru_cache(maxsize=4)
def _load(dataset: str) -> Any:
    from graphpriv.data import load

    return load(dataset)


def run_once(method: str, dataset: str, seed: int, settings: dict[str, Any], store: Any = None) -> Any:
    """The result of one selection run: read from ``store`` when it holds the same run (method,
    dataset, seed and validated config: the key of ``graphpriv sweep``), else run and appended.

    Args:
        method: registry id. dataset: registry id or graph file. seed: the run's seed.
        settings: config overrides. store: a :class:`graphpriv.experiments.store.ResultStore`, or
            None to run without keeping the result.

    Returns:
        The :class:`graphpriv.experiments.results.Result`.

    Raises:
        graphpriv errors: bad settings or data (the run's own error, before any training).
        StoreError: the store cannot be read or written.
    """
    from graphpriv.experiments.runner import prepare_run, run_prepared
    from graphpriv.experiments.sweep import make_run

    run = make_run(method, dataset, seed, settings)  # the validated config, as the run will build it
    found = store.find(run.method, run.dataset, run.seed, run.config_dict) if store is not None else None
    if found is not None:
        return found
    result = run_prepared(prepare_run(method, _load(dataset), seed=seed, overrides=settings))
    result = result.model_copy(update={"dataset": dataset})  # stored under the name given, as a sweep does
    if store is not None:
        store.append(result)
    return result


def select(method: str, dataset: str, grid: dict[str, list[Any]], *, seeds: list[int],
           epsilon: float | None = None, fixed: dict[str, Any] | None = None,
           store: str | Path | None = None) -> list[tuple[float, dict[str, Any]]]:
    """``[(mean val_accuracy, settings), ...]`` of every combination of ``grid``, best first.

    Args:
        method: a registry id whose results carry ``val_accuracy``. dataset: registry id or graph
            file. grid: setting -> values. seeds: selection seeds, each >= 100. epsilon: the
            budget (private methods). fixed: settings held in every run. store: a results store
            (SQLite file) that keeps every run and is read first (:func:`run_once`), or None.

    Raises:
        SystemExit: a seed below 100, or a method whose results have no ``val_accuracy``.
        graphpriv errors: what ``run_method`` raises for bad settings or data; StoreError for a bad
            store (before any run).
    """
    from graphpriv.experiments.store import ResultStore

    low = [s for s in seeds if s < FIRST_SELECTION_SEED]
    if low:
        raise SystemExit(f"selection seeds must be >= {FIRST_SELECTION_SEED} (disjoint from the reported ones); got "
                         f"{low}")
    opened = ResultStore(store) if store is not None else None
    keys = list(grid)
    scored = []
    for values in itertools.product(*(grid[k] for k in keys)):
        settings = {**(fixed or {}), **dict(zip(keys, values))}
        if epsilon is not None:
            settings["epsilon"] = epsilon
        scores = []
        for seed in seeds:
            result = run_once(method, dataset, seed, settings, opened)
            if "val_accuracy" not in result.metrics:
                raise SystemExit(f"{method} reports no val_accuracy: only the transductive protocol's methods can be "
                                 "selected on validation nodes")
            scores.append(result.metrics["val_accuracy"])
        scored.append((statistics.mean(scores), dict(zip(keys, values))))
    return sorted(scored, key=lambda item: -item[0])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("method")
    parser.add_argument("-d", "--dataset", required=True)
    parser.add_argument("--epsilon", type=float)
    parser.add_argument("--grid", action="append", default=[], help="KEY=V1,V2,... (repeatable)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[100, 101, 102])
    parser.add_argument("--json", type=Path, help="write the scores and the best setting here")
    parser.add_argument("--store", type=Path, help="keep every run in this results store and resume from it")
    args = parser.parse_args(argv)
    grid = parse_grid(args.grid)
    scored = select(args.method, args.dataset, grid, seeds=args.seeds, epsilon=args.epsilon, store=args.store)
    for score, settings in scored:
        print(f"{100 * score:6.2f}  {json.dumps(settings, sort_keys=True)}")
    best = scored[0][1]
    print("best:", " ".join(f"--set {k}={v}" for k, v in best.items()) or "(the defaults)")
    if args.json:
        args.json.write_text(json.dumps({"method": args.method, "dataset": args.dataset, "epsilon": args.epsilon,
                                         "seeds": args.seeds, "best": best,
                                         "scores": [{"val_accuracy": s, "settings": c} for s, c in scored]},
                                        indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
