"""Run graphpriv's bad-input suite outside pytest and print its counts.

Usage: python scripts/reliability.py [--markdown docs/reliability.md] [--category NAME] [--case SUBSTRING]
                                     [--slow] [--verbose]

Runs every case of ``tests/reliability/matrix.py`` (the same cases ``python -m pytest
tests/reliability`` runs) in this process, in a temporary folder, and prints a table of counts:
cases tried, clear errors, handled (documented normalisations and lossless store failures),
tracebacks, silent accepts, results lost (and unclear errors), per category and in total, then
every case whose outcome differs from the one it declares, with what it did instead. Exits 1 when
any case differs, 0 otherwise.

With ``--markdown PATH`` the counts table is also written into PATH, between the markers
``<!-- reliability-counts:begin -->`` and ``<!-- reliability-counts:end -->`` (appended at the end
when the markers are missing). Cases that read a registry dataset are skipped (and counted as
skipped) when the dataset mirror (``GRAPHPRIV_DATA``) is not available; ``--slow`` also runs the
cases marked slow.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from graphpriv.experiments.reproduce import replace_marked_block

BEGIN = "<!-- reliability-counts:begin -->"
END = "<!-- reliability-counts:end -->"
COLUMNS = [("tried", None), ("clear errors", "clear_error"), ("handled", "handled"), ("tracebacks", "traceback"),
           ("silent accepts", "silent_accept"), ("results lost", "result_lost"), ("unclear errors", "unclear_error")]


def _mirror() -> bool:
    if "GRAPHPRIV_DATA" not in os.environ and (ROOT.parent / "shared" / "datasets").is_dir():
        os.environ["GRAPHPRIV_DATA"] = str(ROOT.parent / "shared" / "datasets")
    path = os.environ.get("GRAPHPRIV_DATA")
    return bool(path) and Path(path).is_dir()


def counts_table(rows: dict[str, Counter], differ: int, skipped: int) -> str:
    """The Markdown counts table: one row per category and a total row."""
    head = "| category | " + " | ".join(name for name, _ in COLUMNS) + " | not as declared |"
    lines = [head, "|" + "---|" * (len(COLUMNS) + 2)]
    total: Counter = Counter()
    for category, counter in rows.items():
        total.update(counter)
        cells = [str(counter["tried"])] + [str(counter[key]) for _, key in COLUMNS[1:]]
        lines.append(f"| {category} | " + " | ".join(cells) + f" | {counter['differ']} |")
    cells = [str(total["tried"])] + [str(total[key]) for _, key in COLUMNS[1:]]
    lines.append("| **total** | " + " | ".join(f"**{c}**" for c in cells) + f" | **{differ}** |")
    if skipped:
        lines.append("")
        lines.append(f"{skipped} cases skipped (no dataset mirror, or slow without --slow).")
    return "\n".join(lines)


def write_markdown(path: Path, table: str, stamp: str) -> None:
    """Put ``table`` between the markers in ``path`` (appended with the markers when absent)."""
    replace_marked_block(path, BEGIN, END, f"{stamp}\n\n{table}", title="# Reliability")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", type=Path, help="write the counts table into this file's marked section")
    parser.add_argument("--category", help="run only this category")
    parser.add_argument("--case", help="run only the cases whose id contains this")
    parser.add_argument("--slow", action="store_true", help="also run the cases marked slow")
    parser.add_argument("--verbose", "-v", action="store_true", help="print every case's outcome")
    args = parser.parse_args(argv)

    mirror = _mirror()
    import torch

    torch.set_num_threads(1)  # small training loops: one thread is fastest on a busy machine
    from tests.reliability.harness import run_case
    from tests.reliability.matrix import CASES

    rows: dict[str, Counter] = {}
    differ: list[tuple[str, str, str, str]] = []
    skipped = 0
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="graphpriv-reliability-") as tmp:
        for index, case in enumerate(CASES):
            if (args.category and case.category != args.category) or (args.case and args.case not in case.id):
                continue
            if (case.needs_data and not mirror) or (case.slow and not args.slow):
                skipped += 1
                continue
            observed = run_case(case, Path(tmp) / f"case{index}")  # a neutral name: never a word of a message
            counter = rows.setdefault(case.category, Counter())
            counter["tried"] += 1
            counter[observed.outcome] += 1
            if observed.outcome != case.expect:
                counter["differ"] += 1
                differ.append((case.id, case.expect, observed.outcome, observed.detail))
            if args.verbose:
                mark = "ok  " if observed.outcome == case.expect else "DIFF"
                print(f"{mark} {case.id}: {observed.outcome}: {observed.detail}", flush=True)
    seconds = time.perf_counter() - start
    table = counts_table(rows, len(differ), skipped)
    print(table)
    print(f"\n{sum(c['tried'] for c in rows.values())} cases in {seconds:.1f} s; {len(differ)} not as declared")
    for case_id, expect, outcome, detail in differ:
        print(f"- {case_id}: expected {expect}, got {outcome}: {detail}")
    if args.markdown:
        scope = " (" + ", ".join(f"{k} {v}" for k, v in (("category", args.category), ("case", args.case)) if v) + ")" \
            if args.category or args.case else ""
        stamp = (f"Generated by `python scripts/reliability.py --markdown {args.markdown}`{scope}: "
                 f"{sum(c['tried'] for c in rows.values())} cases, {len(differ)} not as declared.")
        write_markdown(args.markdown, table, stamp)
        print(f"\ncounts written to {args.markdown}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
