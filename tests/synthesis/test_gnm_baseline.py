"""scripts/gnm_baseline.py: G(n, m) keeps N and m exactly, and the leaderboard files are read per cell."""

import importlib.util
from pathlib import Path

import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.utils import to_undirected

_SPEC = importlib.util.spec_from_file_location(
    "gnm_baseline", Path(__file__).parents[2] / "scripts" / "gnm_baseline.py")
gnm = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gnm)


def _ring_of_cliques(num_cliques: int = 6, size: int = 5) -> Data:
    edges = [(c * size + i, c * size + j) for c in range(num_cliques) for i in range(size) for j in range(i + 1, size)]
    edges += [(c * size, ((c + 1) % num_cliques) * size + 1) for c in range(num_cliques)]
    n = num_cliques * size
    return Data(edge_index=to_undirected(torch.tensor(edges).T, num_nodes=n), num_nodes=n)


def test_gnm_graph_has_the_input_node_and_edge_counts_and_no_community_structure():
    data = _ring_of_cliques()
    errors = gnm.gnm_errors(data, seed=0)
    assert errors["num_nodes_re"] == 0.0 and errors["num_edges_re"] == 0.0
    # 60 of the 36 * 29 / 2 = 435 pairs drawn uniformly: the cliques' triangles are gone, most of them
    assert errors["triangles_re"] > 0.5
    graph = gnm.PublishedGraph(data.edge_index, data.num_nodes)
    draw = gnm.gnm_graph(graph, np.random.default_rng(1))
    assert draw.num_edges == graph.num_edges and draw.num_nodes == graph.num_nodes


def test_graph_facts_are_the_80_percent_graphs_density_and_the_majority_share():
    data = _ring_of_cliques()  # 30 nodes, 66 edges: the 80% graph keeps 66 - round(0.2 * 66) = 53
    facts = gnm.graph_facts(data)
    assert facts["nodes"] == 30 and facts["edges"] == 53
    assert np.isclose(facts["density"], 53 / 435) and np.isclose(facts["ln_inverse_density"], np.log(435 / 53))
    assert np.isnan(facts["majority_share"])  # no labels
    data.y = torch.tensor([0] * 12 + [1] * 10 + [2] * 6 + [-1] * 2)  # two unlabelled nodes
    assert gnm.graph_facts(data)["majority_share"] == 12 / 28


def test_leaderboard_means_average_each_cell_by_series_and_nominal_epsilon(tmp_path):
    from graphpriv.experiments.grid import load_grid
    from graphpriv.experiments.results import write_results
    from graphpriv.experiments.tables import RunRecord

    def record(label, seed, epsilon, **metrics):
        return RunRecord(row=label, dataset="cora", method="tmf", seed=seed, config_hash="0", settings="{}",
                         metrics=metrics, epsilon=epsilon, delta=1e-5, accounting="rigorous", accountant="pld",
                         noise_multiplier=None, seconds=1.0)

    meta = {"command": "c", "machine": "m", "seeds": "5"}
    for table in gnm.TABLES:  # the degrees table holds the runs, the others none
        grid = load_grid(f"synthesis-leaderboard-{table}")
        records = [record("TmF, eps 1", 0, 0.99996, degree_variance_re=0.2),
                   record("TmF, eps 1", 1, 0.99996, degree_variance_re=0.4),
                   record("PrivDPR (node level), eps 1", 0, 1.0, degree_variance_re=0.0),
                   record("DP-1K, eps 8", 0, 8.0, degree_variance_re=0.1, triangles_re=0.5),
                   record("DP-1K, eps 8", 1, 8.0, degree_variance_re=0.3)] if table == "degrees" else []
        write_results(tmp_path / f"{grid.name}.csv", grid, records, meta=meta)
    means = gnm.leaderboard_means(tmp_path)
    assert np.isclose(means[("cora", "TmF", "degree_variance_re", 1.0)], 0.3)  # keyed by the row's epsilon
    assert means[("cora", "PrivDPR (node level)", "degree_variance_re", 1.0)] == 0.0
    assert np.isclose(means[("cora", "DP-1K", "degree_variance_re", 8.0)], 0.2)
    assert means[("cora", "DP-1K", "triangles_re", 8.0)] == 0.5  # undefined on seed 1: one run's value
    assert ("cora", "TmF", "triangles_re", 1.0) not in means


def test_the_generators_are_the_grids_series_with_node_level_apart():
    edge_level, node_level = gnm.generators()
    assert edge_level == ["TmF", "DP-1K", "PrivGraph", "LapGraph", "EdgeRand"]
    assert node_level == ["PrivDPR (node level)"]
