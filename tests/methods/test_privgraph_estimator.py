"""PrivGraph as an estimator: fit / generate, the privacy report against dp-accounting, files,
twins and seeds, utility on planted communities, input handling and errors."""

import numpy as np
import pytest
import torch
from dp_accounting import dp_event
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from dp_accounting.privacy_accountant import NeighboringRelation
from sklearn.metrics import normalized_mutual_info_score
from torch_geometric.data import Data

from graphpriv.data.graph import undirected_pairs
from graphpriv.errors import ConfigError, DatasetError, ModelFileError, PrivacyError
from graphpriv.methods.dp_1k import DP1K
from graphpriv.methods.estimator import Estimator
from graphpriv.methods.generator import GraphGenerator
from graphpriv.methods.privgraph import PrivGraph
from graphpriv.synthesis import privgraph as mechanism
from graphpriv.synthesis.privgraph import PrivGraphRelease
from graphpriv.testing.graphs import labelled_sbm, random_graph, undirected_edge_set


@pytest.fixture(scope="module")
def graph():
    return random_graph(120, 0.08, seed=3)


def test_defaults_are_the_papers():
    config = PrivGraph().config
    assert config.split == pytest.approx((1 / 3, 1 / 3, 1 / 3)) and config.supernode_size == 20
    assert config.resolution == 1.0 and config.em_scale == "paper"


def test_fit_and_generate_give_fresh_simple_graphs_of_the_expected_size(graph):
    est = PrivGraph(epsilon=4.0, random_state=1)
    assert isinstance(est, GraphGenerator) and est.fit(graph) is est and est.is_fitted
    assert est.num_nodes_ == 120 and isinstance(est.released_, PrivGraphRelease)
    first = undirected_edge_set(est.generate(seed=5), 120)
    assert first == undirected_edge_set(est.generate(seed=5), 120)  # the same seed, the same graph
    assert undirected_edge_set(est.generate(), 120) == undirected_edge_set(est.generate(seed=est.random_state), 120)
    graphs = [undirected_edge_set(est.generate(seed=s), 120) for s in range(10)]
    assert len({frozenset(g) for g in graphs}) == 10  # every seed a fresh graph from one release
    info = est.info_
    sizes = [len(g) for g in graphs]
    assert abs(np.mean(sizes) - info["expected_edges"]) < 0.05 * info["expected_edges"]
    communities = est.released_.communities
    for g in graphs:  # exactly the noisy inter-community counts between communities
        assert sum(communities[u] != communities[v] for u, v in g) == info["noisy_inter_edges"]
    m = undirected_pairs(graph.edge_index).shape[1]
    assert 0.5 * m < np.mean(sizes) < 1.5 * m
    assert info["num_supernodes"] == 6 and info["num_communities"] == est.released_.num_communities
    assert info["eps_init"] == info["eps_adjust"] == info["eps_extract"] == pytest.approx(4 / 3)
    assert info["em_rate"] == pytest.approx(1 / 3)


def _pld_epsilon(events, delta):
    accountant = PLDAccountant(neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE)
    for event in events:
        accountant.compose(event)
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("params,eps", [
    ({"epsilon": 3.0}, (1.0, 1.0, 1.0)),
    ({"epsilon": 8.0, "split": (0.25, 0.25, 0.5), "delta": 1e-7, "em_scale": "monotone"}, (2.0, 2.0, 4.0)),
], ids=["default", "split-monotone"])
def test_privacy_report_is_what_dp_accounting_gives_for_the_same_events(graph, params, eps):
    est = PrivGraph(random_state=0, **params).fit(graph)
    report = est.privacy_report_
    delta = params.get("delta", 1e-5)
    eps1, eps2, eps3 = eps
    phases = [[dp_event.LaplaceDpEvent(1 / eps1)],
              [dp_event.DiscreteLaplaceDpEvent(eps2 / 2, 1)] * 2,
              [dp_event.LaplaceDpEvent(1 / eps3)]]
    events = [e for phase in phases for e in phase]
    assert report.unit == "edge" and report.neighboring_relation == "ADD_OR_REMOVE_ONE"
    assert report.delta == delta and report.target_epsilon == params["epsilon"]
    assert report.epsilon == pytest.approx(_pld_epsilon(events, delta), rel=1e-9)
    # pure epsilon-DP; the PLD accountant's pessimistic grid (1e-4) may state a hair above it
    # (8.00008 at epsilon 8, delta 1e-5), never more than 1e-4 per event
    assert 0.99 * params["epsilon"] < report.epsilon <= params["epsilon"] + 4e-4
    assert [p.name for p in report.phases] == ["community initialisation", "community adjustment",
                                               "information extraction"]
    for phase, expected in zip(report.phases, phases):
        assert phase.epsilon == pytest.approx(_pld_epsilon(expected, delta), rel=1e-9)
    assert report.phases[1].steps == 2  # two selections, never N
    assert est.epsilon_at(1e-3) == pytest.approx(_pld_epsilon(events, 1e-3), rel=1e-9)
    assert any(n.startswith(f"pure ({params['epsilon']:g}, 0)-DP") for n in report.notes)
    assert any("two selections of pure eps2/2-DP" in n for n in report.notes)
    assert "edge-level" in est.privacy_statement_


def test_save_load_keeps_the_release_and_never_the_input(graph, tmp_path):
    est = PrivGraph(epsilon=3.0, random_state=4).fit(graph)
    path = est.save(tmp_path / "privgraph.pt")
    loaded = Estimator.load(path)
    assert type(loaded) is PrivGraph and loaded.get_params() == est.get_params()
    assert loaded.privacy_report_ == est.privacy_report_ and loaded.info_ == est.info_
    assert loaded.num_nodes_ == 120 and loaded.released_.equals(est.released_)
    assert torch.equal(loaded.generate(seed=9).edge_index, est.generate(seed=9).edge_index)
    state = torch.load(path, weights_only=True)["state"]
    assert set(state) == {"released", "num_nodes", "info"}
    k = est.released_.num_communities
    assert state["released"].shape == (1 + 2 * 120 + k * (k - 1) // 2,)  # partition, degrees, counts only
    assert loaded.ledger_ is None
    with pytest.raises(PrivacyError, match="read from a file"):
        loaded.epsilon_at(1e-3)
    with pytest.raises(ModelFileError):
        DP1K.load(path)


def test_twins_and_seeds(graph):
    a = PrivGraph(epsilon=3.0, random_state=7).fit(graph)
    twin = PrivGraph(**a.get_params()).fit(graph)
    other = PrivGraph(epsilon=3.0, random_state=8).fit(graph)
    assert a.released_.equals(twin.released_) and a.info_ == twin.info_
    assert not a.released_.equals(other.released_)


def test_planted_communities_are_found_at_high_epsilon():
    """Three planted blocks (94% of edges inside them), one node per super-node, epsilon 40: the
    released partition is the blocks and the synthetic graph keeps the intra-block share."""
    data = labelled_sbm(300, 3, p_in=0.15, p_out=0.005, seed=1)
    y = data.y.numpy()
    est = PrivGraph(epsilon=40.0, supernode_size=1, random_state=0).fit(data)
    assert normalized_mutual_info_score(y, est.released_.communities) > 0.95
    ei = est.generate(seed=1).edge_index.numpy()
    assert (y[ei[0]] == y[ei[1]]).mean() > 0.85
    true = data.edge_index.numpy()
    assert 0.85 < ei.shape[1] / true.shape[1] < 1.15


def test_isolated_nodes_are_kept_and_directed_input_is_symmetrised(graph):
    pairs = undirected_pairs(graph.edge_index)
    wider = Data(edge_index=torch.from_numpy(pairs.copy()), num_nodes=150)  # 30 isolated nodes, one direction
    est = PrivGraph(epsilon=3.0, random_state=1).fit(wider)
    assert est.num_nodes_ == 150 and est.released_.communities.shape == (150,)
    assert est.generate(seed=0).num_nodes == 150
    assert any("symmetrised" in n for n in est.privacy_report_.notes)


@pytest.mark.parametrize("edge_index", [torch.empty(2, 0, dtype=torch.long), torch.tensor([[3, 4], [3, 4]])],
                         ids=["no-edges", "self-loops-only"])
def test_a_graph_without_edges_is_a_clear_error(edge_index):
    with pytest.raises(DatasetError, match="PrivGraph needs a graph with at least one edge.*pass the graph's edges"):
        PrivGraph(epsilon=1.0, random_state=0).fit(Data(edge_index=edge_index, num_nodes=6))


@pytest.mark.parametrize("params,match", [
    ({"epsilon": 0.0}, "epsilon: Input should be greater than 0"),
    ({"epsilon": -1.0}, "epsilon: Input should be greater than 0"),
    ({"split": (0.5, 0.5, 0.5)}, r"split: Value error, the shares must sum to 1, got 1.5; e.g. split=\(1/3"),
    ({"split": (0.5, 0.5, 0.0)}, ("split: Value error, every share must be a finite number > 0, got 0.0 for "
                                 "information extraction")),
    ({"split": (1.2, -0.1, -0.1)}, "split: .*got -0.1 for community adjustment"),
    ({"split": (0.5, 0.5)}, "split: "),
    ({"supernode_size": 0}, "supernode_size: Input should be greater than or equal to 1"),
    ({"resolution": 0.0}, "resolution: Input should be greater than 0"),
    ({"em_scale": "loose"}, "em_scale: Input should be 'paper' or 'monotone'"),
    ({"count_fraction": 0.5}, "unknown hyperparameter.*count_fraction"),
])
def test_bad_hyperparameters(params, match):
    with pytest.raises(ConfigError, match=match):
        PrivGraph(random_state=0, **params)


def test_supernode_sizes_the_graph_cannot_take(graph, monkeypatch):
    with pytest.raises(DatasetError, match=r"supernode_size=121 is above the graph's N=120 nodes.*use "
                                           r"supernode_size <= 120"):
        PrivGraph(epsilon=1.0, supernode_size=121, random_state=0).fit(graph)
    PrivGraph(epsilon=1.0, supernode_size=120, random_state=0).fit(graph)  # one super-node: allowed
    monkeypatch.setattr("graphpriv.methods.privgraph.MAX_SUPERGRAPH_CELLS", 100)  # S <= 14
    with pytest.raises(DatasetError, match=r"supernode_size=2 splits the N=120 nodes into 60 super-nodes, whose "
                                           r"noisy super-graph has 1770 cells.*use supernode_size >= 9"):
        PrivGraph(epsilon=1.0, supernode_size=2, random_state=0).fit(graph)
    assert -(-120 // 9) * (-(-120 // 9) - 1) // 2 <= 100 < -(-120 // 8) * (-(-120 // 8) - 1) // 2
    assert mechanism.MAX_SUPERGRAPH_CELLS == 10_000_000
