"""Choose the node-classification leaderboard's hyperparameters on validation seeds, and write them
into its grids.

    python scripts/select_leaderboard.py [--methods gap-ndp ...] [--datasets cora ...] \
        [--seeds 100 101 102] [--out docs/results/selection] [--store runs/selection.sqlite] \
        [--write-grids]

For every private method of the two leaderboard tables (``node-leaderboard-edge``,
``node-leaderboard-node``) and every dataset, :data:`SEARCH` names the settings tried. Each
combination runs at the method's selection epsilon (:data:`SELECTION_EPSILON`: 4 at edge level,
8 at node level, the goals' budgets) on each selection seed through
``scripts/select_hyperparameters.py``'s :func:`select`. The score is the mean ``val_accuracy``
on the validation nodes, never on the reported seeds 0-4. The choice is then used at every
epsilon of the table. The scores go to ``OUT/<method>--<dataset>.json``. A pair whose file exists
is not run again, and every run of a pair not yet chosen is kept in ``--store`` (a graphpriv
results store, not committed) and read back, so the script resumes run by run. ``--write-grids`` sets each row's ``per_dataset`` to the
choice. Methods without a search space keep the registry's defaults: the non-private references,
and DPAR (its own tables chose its settings).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from select_hyperparameters import select

#: method -> (settings held fixed, settings searched): what is tried on every dataset.
SEARCH: dict[str, tuple[dict[str, Any], dict[str, list[Any]]]] = {
    "gap-edp": ({"model_selection": "best_val"}, {"hops": [1, 2, 3], "hidden": [16, 64]}),
    "progap-edp": ({"model_selection": "best_val"}, {"depth": [1, 2, 3], "hidden": [16, 64]}),
    "gap-ndp": ({"batch_size": 512}, {"max_degree": [10, 50, 100], "hidden": [8, 32], "encoder_epochs": [10, 30],
                                      "epochs": [10, 30], "sgd_noise_ratio": [1, 2]}),
    "progap-ndp": ({"batch_size": 512}, {"max_degree": [10, 50, 100], "hidden": [8, 16], "epochs": [10, 30],
                                         "sgd_noise_ratio": [1, 2]}),
    "sage-ndp": ({"batch_size": 512}, {"max_degree": [3, 10], "epochs": [10, 30]}),
    "dp-mlp-transductive": ({}, {"epochs": [10, 30, 100], "batch_size": [256, 512]}),
}

#: method -> the epsilon its settings are chosen at.
SELECTION_EPSILON = {"gap-edp": 4.0, "progap-edp": 4.0, "gap-ndp": 8.0, "progap-ndp": 8.0, "sage-ndp": 8.0,
                     "dp-mlp-transductive": 8.0}

GRIDS = ("node-leaderboard-edge", "node-leaderboard-node")


def choose(method: str, dataset: str, seeds: list[int], out: Path, store: Path | None = None) -> dict[str, Any]:
    """The chosen settings of ``method`` on ``dataset`` (fixed and searched), from ``out``'s file if
    it exists, else by :func:`select` (the file is written; the runs are kept in ``store``)."""
    path = out / f"{method}--{dataset}.json"
    if path.exists():
        return json.loads(path.read_text())["best"]
    fixed, grid = SEARCH[method]
    scored = select(method, dataset, grid, seeds=seeds, epsilon=SELECTION_EPSILON[method], fixed=fixed, store=store)
    best = {**fixed, **scored[0][1]}
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"method": method, "dataset": dataset, "epsilon": SELECTION_EPSILON[method],
                                "seeds": seeds, "fixed": fixed, "best": best,
                                "scores": [{"val_accuracy": s, "settings": c} for s, c in scored]},
                               indent=1, sort_keys=True) + "\n")
    return best


def write_grids(choices: dict[tuple[str, str], dict[str, Any]], grids_dir: Path) -> None:
    """Set ``per_dataset`` of every row whose method was chosen for, in each leaderboard grid file.
    A chosen value that the row's ``settings`` already hold (the fixed ``model_selection``) is left
    out. A file whose rows do not change is left as it is; a changed one keeps its first comment line
    and is rewritten by PyYAML (short lists and mappings inline, long text folded)."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=">" if len(value) > 100 else None)

    Dumper.add_representer(str, text)
    Dumper.ignore_aliases = lambda self, data: True  # each row's settings written out, no YAML anchors
    for name in GRIDS:
        path = grids_dir / f"{name}.yaml"
        header, body = path.read_text().split("\n", 1)
        spec = yaml.safe_load(body)
        before = json.dumps(spec, sort_keys=True)
        for row in spec["rows"]:
            chosen = {d: s for (m, d), s in choices.items() if m == row["method"] and d in spec["datasets"]}
            if chosen:  # a chosen value the row's own settings already hold is not repeated
                row["per_dataset"] = {d: {k: v for k, v in chosen[d].items() if row.get("settings", {}).get(k, object()) != v}
                                      for d in spec["datasets"] if d in chosen}
        if json.dumps(spec, sort_keys=True) != before:
            path.write_text(header + "\n" + yaml.dump(spec, Dumper=Dumper, sort_keys=False, width=100,
                                                       default_flow_style=None))


def main(argv: list[str] | None = None) -> None:
    from graphpriv.experiments.reproduce import resolve

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=list(SEARCH), choices=list(SEARCH))
    parser.add_argument("--datasets", nargs="+", default=None, help="default: the leaderboard's")
    parser.add_argument("--seeds", type=int, nargs="+", default=[100, 101, 102])
    parser.add_argument("--out", type=Path, default=Path("docs/results/selection"))
    parser.add_argument("--store", type=Path, default=Path("runs") / "selection.sqlite",
                        help="results store that keeps every selection run (resumed from)")
    parser.add_argument("--write-grids", action="store_true")
    args = parser.parse_args(argv)
    datasets = args.datasets or list(resolve(GRIDS[0]).datasets)
    choices = {}
    for method in args.methods:
        for dataset in datasets:
            choices[method, dataset] = choose(method, dataset, args.seeds, args.out, args.store)
            print(f"{method:22s} {dataset:16s} {json.dumps(choices[method, dataset], sort_keys=True)}", flush=True)
    if args.write_grids:
        from graphpriv.experiments import grid

        write_grids(choices, Path(grid.__file__).with_name("grids"))


if __name__ == "__main__":
    main(sys.argv[1:])
