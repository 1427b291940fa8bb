"""The synthesis leaderboard: four tables (one per query family) over the same runs."""

import pytest

from graphpriv.data import load
from graphpriv.data.splits import link_split
from graphpriv.evaluation.generators import EdgeRandSynthesisConfig
from graphpriv.experiments.registry import METHODS
from graphpriv.experiments.reproduce import GROUPS, resolve, table_runs
from graphpriv.methods.publishing import expected_edgerand_edges
from tests.conftest import needs_data

TABLES = GROUPS["synthesis-leaderboard"]


def test_the_four_tables_share_every_run():
    keys = [{run.key for run in table_runs(resolve(name), resolve(name).seeds)} for name in TABLES]
    assert len(TABLES) == 4 and all(k == keys[0] for k in keys)
    # methods x epsilons x datasets x seeds, less the 15 EdgeRand cells not run (five seeds each)
    assert len(keys[0]) == 6 * 5 * 7 * 5 - 15 * 5


@needs_data
def test_edgerand_skips_exactly_the_cells_it_would_refuse():
    # a release expected above max_edges is refused by the method (a failed cell, exit code 1), so
    # every table leaves those cells out (max_seeds 0) and runs every other one; each graph is read once
    grids = [resolve(name) for name in TABLES]
    rows = {grid.name: [row for row in grid.rows if row.method == "edgerand-synthesis"] for grid in grids}
    assert all(len(found) == 5 for found in rows.values())
    test_ratio = EdgeRandSynthesisConfig().test_ratio
    skipped = set()
    for dataset in grids[0].datasets:
        data = load(dataset)
        train = link_split(data, val_ratio=0.0, test_ratio=test_ratio, seed=0).train_edge_index
        for grid in grids:
            for row in rows[grid.name]:
                epsilon, cap = row.settings["epsilon"], row.settings["max_edges"]
                refused = expected_edgerand_edges(train.shape[1], int(data.num_nodes), epsilon) > cap
                assert (row.seeds_on(dataset, grid.seeds) == 0) == refused, (grid.name, dataset, epsilon)
                if refused:
                    skipped.add((dataset, epsilon))
    assert len(skipped) == 15


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
