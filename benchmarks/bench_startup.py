"""Start-up of the command line: `graphpriv --help` and `graphpriv run cn` against `import torch`.

    python benchmarks/bench_startup.py [--repeats 5] [--dataset usair] [--entry script|module]

Each command runs in a fresh process (wall clock: interpreter start, imports, work and exit), once
to warm up (the OS file cache, numba's kernel cache), then ``--repeats`` times; the best time is
printed with its ratio to ``python -c "import torch"`` measured the same way, the floor of any
command that trains. ``run cn`` writes to a temporary store (``--store``). The dataset is read as
``graphpriv`` reads it (``$GRAPHPRIV_DATA``, the cache, else a download). Goals (the issue's "Fast
start"): ``--help`` under 0.5 s, ``run cn -d usair`` under 2 s. ``--entry module`` runs
``python -m graphpriv.cli`` (:func:`graphpriv.cli.main`) instead of the installed ``graphpriv`` script.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _wall(command: list[str], repeats: int) -> float:
    """Best wall time of ``repeats`` fresh runs of ``command`` after one warm-up run (seconds)."""
    times = []
    for i in range(repeats + 1):
        t0 = time.perf_counter()
        done = subprocess.run(command, check=False, capture_output=True, text=True)
        elapsed = time.perf_counter() - t0
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} exited with {done.returncode}:\n{done.stderr[-2000:]}")
        if i:  # the first run warms up
            times.append(elapsed)
    return min(times)


def _graphpriv(entry: str) -> tuple[list[str], str]:
    """The command that starts graphpriv, and what it calls: the console script beside this
    interpreter (as a user runs it; ``--entry script``), else ``python -m graphpriv.cli``."""
    script = Path(sys.executable).with_name("graphpriv")
    if entry == "script" and script.is_file():
        target = next((line.split("import", 1)[1].strip() for line in script.read_text().splitlines()
                       if line.startswith("from graphpriv")), "?")
        return [str(script)], f"the console script {script} (it calls graphpriv.cli:{target})"
    return [sys.executable, "-m", "graphpriv.cli"], "python -m graphpriv.cli (graphpriv.cli:main)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per command (after one warm-up)")
    parser.add_argument("--dataset", default="usair", help="dataset of the `run cn` command")
    parser.add_argument("--entry", choices=("script", "module"), default="script",
                        help="script: the installed `graphpriv`; module: `python -m graphpriv.cli`")
    args = parser.parse_args()
    graphpriv, started_by = _graphpriv(args.entry)
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "results.sqlite")
        rows = [
            ('python -c "import torch"', _wall([sys.executable, "-c", "import torch"], args.repeats), None),
            ("graphpriv --help", _wall([*graphpriv, "--help"], args.repeats), 0.5),
            (f"graphpriv run cn -d {args.dataset}",
             _wall([*graphpriv, "run", "cn", "-d", args.dataset, "--store", store], args.repeats), 2.0),
        ]
    torch_time = rows[0][1]
    print(f"## Start-up: fresh processes, best of {args.repeats} after one warm-up ({os.cpu_count()} cores)\n")
    print(f"graphpriv started by {started_by}\n")
    print("| command | wall time (s) | / import torch | goal | |\n|---|---|---|---|---|")
    for name, wall, goal in rows:
        verdict = "-" if goal is None else ("met" if wall < goal else "NOT met")
        print(f"| `{name}` | {wall:.2f} | {wall / torch_time:.2f} | {'-' if goal is None else f'< {goal:g} s'} "
              f"| {verdict} |")
    missed = [name for name, wall, goal in rows if goal is not None and wall >= goal]
    print(f"\ngoals: {'all met' if not missed else 'NOT met: ' + ', '.join(missed)}")


if __name__ == "__main__":
    main()
