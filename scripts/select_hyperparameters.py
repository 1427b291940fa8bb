"""Choose a method's hyperparameters on validation accuracy, on seeds disjoint from the reported ones.

    python scripts/select_hyperparameters.py gap-edp -d fb100-mit8 --epsilon 4 \
        --grid hops=1,2,3 --grid hidden=16,64 [--seeds 100 101 102] [--json out.json]

Every combination of the ``--grid`` values runs through ``graphpriv.run_method`` (the same path as
``graphpriv run``) on each selection seed; the score of a combination is its mean
``val_accuracy`` (the transductive protocol's validation nodes: never the test accuracy, which is
not read). The selection seeds must not overlap the seeds tables report (0-99), so the chosen
setting is never fitted to a reported split. Prints one line per combination, best first, and the
best as ``--set`` flags; ``--json`` writes ``{"method", "dataset", "epsilon", "seeds", "best",
"scores"}``.
"""

from __future__ import annotations

import argparse
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


def select(method: str, dataset: str, grid: dict[str, list[Any]], *, seeds: list[int],
           epsilon: float | None = None, fixed: dict[str, Any] | None = None) -> list[tuple[float, dict[str, Any]]]:
    """``[(mean val_accuracy, settings), ...]`` of every combination of ``grid``, best first.

    Args:
        method: a registry id whose results carry ``val_accuracy``. dataset: registry id or graph
            file. grid: setting -> values. seeds: selection seeds, each >= 100. epsilon: the
            budget (private methods). fixed: settings held in every run.

    Raises:
        SystemExit: a seed below 100, or a method whose results have no ``val_accuracy``.
        graphpriv errors: what ``run_method`` raises for bad settings or data.
    """
    from graphpriv.data import load
    from graphpriv.experiments.runner import run_method

    low = [s for s in seeds if s < FIRST_SELECTION_SEED]
    if low:
        raise SystemExit(f"selection seeds must be >= {FIRST_SELECTION_SEED} (disjoint from the reported ones); got "
                         f"{low}")
    data = load(dataset)
    keys = list(grid)
    scored = []
    for values in itertools.product(*(grid[k] for k in keys)):
        settings = {**(fixed or {}), **dict(zip(keys, values))}
        if epsilon is not None:
            settings["epsilon"] = epsilon
        scores = []
        for seed in seeds:
            result = run_method(method, data, seed=seed, overrides=settings)
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
    args = parser.parse_args(argv)
    grid = parse_grid(args.grid)
    scored = select(args.method, args.dataset, grid, seeds=args.seeds, epsilon=args.epsilon)
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
