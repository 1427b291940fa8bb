"""The numbers in docs/ are reproducible from the repository: every table with a results file in
docs/results/ renders from it, with no store, byte for byte as committed in docs/reproduction/,
and a runs table's results are exactly the runs its grid names."""

import re
from pathlib import Path

import pytest

from graphpriv.experiments.grid import RunsGrid, grid_names, load_grid
from graphpriv.experiments.reproduce import render_results
from graphpriv.experiments.results import read_results
from graphpriv.experiments.tables import settings_json

DOCS = Path(__file__).resolve().parents[2] / "docs"
RESULTS = sorted(p.stem for p in (DOCS / "results").glob("*.csv"))


def test_every_results_file_belongs_to_a_grid():
    assert set(RESULTS) <= set(grid_names())


@pytest.mark.parametrize("name", RESULTS)
def test_the_committed_table_renders_from_its_results_file(name):
    assert render_results(name, docs=DOCS) == (DOCS / "reproduction" / f"{name}.md").read_text()


@pytest.mark.parametrize("name", [n for n in RESULTS if isinstance(load_grid(n), RunsGrid)])
def test_a_runs_tables_results_are_the_runs_of_its_grid(name):
    grid = load_grid(name)
    records, meta = read_results(DOCS / "results" / f"{name}.csv", grid)
    rows = {row.label: row for row in grid.rows}
    seeds = int(meta["seeds"])
    for record in records:
        row = rows[record.row]
        assert record.method == row.method and record.dataset in grid.datasets
        # the grid file's own settings for the row (a default the methods gained since does not
        # void the committed results; a changed row does)
        assert record.settings == settings_json(row.settings_for(record.dataset))
        assert grid.first_seed <= record.seed < grid.first_seed + row.seeds_on(record.dataset, seeds)
    cells = {(r.row, r.dataset, r.seed) for r in records}
    assert len(cells) == len(records)  # one run per cell and seed


def test_reproduction_md_names_which_tables_have_their_results_here():
    text = (DOCS / "reproduction.md").read_text()
    section = text[text.index("## Where the numbers live"):text.index("## DPLP-subgraph")]
    here, elsewhere = section.split("Not run yet")
    named_here = set(re.findall(r"`([a-z0-9-]+)`", here.split("Tables with their results\nhere:")[1]))
    # the waiting list ends where the prose on waiting tables starts (none may be waiting)
    named_elsewhere = set(re.findall(r"`([a-z0-9-]+)`", re.split("They wait|A new table waits", elsewhere)[0]))
    assert named_here == set(RESULTS)
    assert named_elsewhere == set(grid_names()) - set(RESULTS)
