"""The synthesis leaderboard: four tables (one per query family) over the same runs."""

import pytest

from graphpriv.experiments.registry import METHODS
from graphpriv.experiments.reproduce import GROUPS, resolve, table_runs

TABLES = GROUPS["synthesis-leaderboard"]


def test_the_four_tables_share_every_run():
    keys = [{run.key for run in table_runs(resolve(name), resolve(name).seeds)} for name in TABLES]
    assert len(TABLES) == 4 and all(k == keys[0] for k in keys)
    assert len(keys[0]) == 6 * 5 * 7 * 5  # methods x epsilons x datasets x seeds


@pytest.mark.parametrize("name", TABLES)
def test_every_generator_runs_at_every_epsilon_on_every_graph(name):
    grid = resolve(name)
    assert grid.seeds == 5 and grid.plot == "epsilon"
    assert set(grid.datasets) == {"cora", "citeseer", "usair", "yeast", "facebook", "p2p_gnutella08",
                                  "fb100-amherst41"}
    by_method = {}
    for row in grid.rows:
        by_method.setdefault(row.method, set()).add(row.settings["epsilon"])
    assert set(by_method) == {"tmf", "dp-1k", "privgraph", "lapgraph-synthesis", "edgerand-synthesis", "privdpr"}
    assert all(eps == {0.5, 1.0, 2.0, 4.0, 8.0} for eps in by_method.values())
    assert {METHODS[m].unit for m in by_method} == {"edge", "node"}  # PrivDPR's rows are node level
