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


def test_leaderboard_means_average_each_cell_and_keep_only_the_generators(tmp_path):
    header = "row,dataset,method,seed,epsilon,degree_variance_re,community_nmi\n"
    rows = ["a,cora,tmf,0,0.99996,0.2,", "a,cora,tmf,1,0.99996,0.4,", "b,cora,privdpr,0,1.0,0.0,", "d,cora,dpar,0,1.0,0.5,",
            "c,cora,dp-1k,0,8.0,0.1,"]
    for table in gnm.TABLES:  # one table holds the runs, the others only their header
        body = rows if table == "degrees" else []
        (tmp_path / f"synthesis-leaderboard-{table}.csv").write_text("# comment\n" + header + "".join(r + "\n" for r in body))
    means = gnm.leaderboard_means(tmp_path)
    assert np.isclose(means[("cora", "tmf", "degree_variance_re", 1.0)], 0.3)
    assert means[("cora", "privdpr", "degree_variance_re", 1.0)] == 0.0
    assert ("cora", "dpar", "degree_variance_re", 1.0) not in means
    assert ("cora", "tmf", "community_nmi", 1.0) not in means  # empty: undefined on those runs
    assert means[("cora", "dp-1k", "degree_variance_re", 8.0)] == 0.1  # one run: its value
