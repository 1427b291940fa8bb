import logging

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphpriv.data.validation import IF_PRESENT, check_data, check_seed
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.evaluation import link as link_protocol
from graphpriv.evaluation import node as node_protocol
from graphpriv.evaluation import publishing as publishing_protocol
from graphpriv.evaluation import ranking as ranking_protocol
from graphpriv.evaluation import synthesis as synthesis_protocol
from graphpriv.methods import dpar, dplp_rank, dplp_subgraph, heuristic, lapgraph_sgnn, mlp, ppgsl, privdpr, publishing
from graphpriv.testing.graphs import labelled_sbm, random_graph


def _edges(data):
    return sorted(map(tuple, data.edge_index.t().tolist()))


def _one_line(err):
    assert "\n" not in str(err.value)
    return str(err.value)


def test_clean_data_passes_through_unchanged():
    data = random_graph(60, 0.1, seed=1)
    before = data.edge_index.clone()
    out = check_data(data)
    assert out is data and out.normalisations == []
    assert torch.equal(out.edge_index, before)
    # an unsorted but undirected, simple edge_index is clean too: kept as given
    pairs = torch.tensor([[3, 0, 1], [4, 2, 2]])
    data = Data(edge_index=torch.cat([pairs, pairs.flip(0)], 1), num_nodes=5, name="mine")
    given = data.edge_index.clone()
    assert check_data(data) is data and torch.equal(data.edge_index, given) and data.normalisations == []


def test_a_nameless_data_gets_a_named_copy():
    pairs = torch.tensor([[3, 0, 1], [4, 2, 2]])
    data = Data(edge_index=torch.cat([pairs, pairs.flip(0)], 1), num_nodes=5)
    out = check_data(data)
    assert out is not data and out.name == "graph" and out.normalisations == []
    assert out.edge_index is data.edge_index and "name" not in data  # the user's object is left as it was


def test_earlier_normalisations_are_kept():
    data = random_graph(30, 0.2, seed=2)
    data.normalisations = ["line 1 skipped as a header: 'a b'"]
    assert check_data(data).normalisations == ["line 1 skipped as a header: 'a b'"]


def test_directed_duplicate_and_self_loop_edges_are_normalised_and_named(caplog):
    ei = torch.tensor([[0, 1, 1, 2, 2, 3, 3],
                       [1, 0, 2, 2, 0, 0, 0]])
    data = Data(edge_index=ei, num_nodes=5, name="mine", x=torch.ones(5, 2))
    with caplog.at_level(logging.WARNING, logger="graphpriv.data"):
        out = check_data(data, needs_features=True)
    assert _edges(out) == [(0, 1), (0, 2), (0, 3), (1, 0), (1, 2), (2, 0), (2, 1), (3, 0)]
    assert out.edge_index.dtype == torch.int64
    assert out.normalisations == ["1 self-loop dropped", "1 duplicate edge dropped",
                                  "3 directed edges (u, v) without (v, u) symmetrised"]
    assert [r.getMessage() for r in caplog.records if r.name == "graphpriv.data"] == [
        "mine: 1 self-loop dropped", "mine: 1 duplicate edge dropped",
        "mine: 3 directed edges (u, v) without (v, u) symmetrised"]
    # the user's object is not modified; other attributes are carried over
    assert torch.equal(data.edge_index, ei) and "normalisations" not in data
    assert out.x is data.x and out.num_nodes == 5 and out.name == "mine"


def test_int32_clean_edge_index_becomes_int64_without_a_note():
    data = random_graph(20, 0.3, seed=0)
    data32 = Data(edge_index=data.edge_index.int(), num_nodes=20)
    out = check_data(data32)
    assert out.edge_index.dtype == torch.int64 and torch.equal(out.edge_index, data.edge_index)
    assert out.normalisations == []


def _good(**extra):
    return Data(edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]), num_nodes=3, **extra)


@pytest.mark.parametrize("make,kwargs,match", [
    (lambda: "graph", {}, "expected a torch_geometric.data.Data"),
    (lambda: Data(num_nodes=3), {}, "data.edge_index is missing"),
    (lambda: Data(edge_index=np.array([[0], [1]]), num_nodes=3), {}, "must be a torch tensor, got ndarray"),
    (lambda: Data(edge_index=torch.tensor([[0.0], [1.0]]), num_nodes=3), {}, r"integer tensor of shape \[2, E\]"),
    (lambda: Data(edge_index=torch.tensor([[0, 1], [1, 2], [2, 0]]), num_nodes=3), {}, r"shape \[2, E\], got .*\[3, 2\]"),
    (lambda: Data(edge_index=torch.zeros(2, 0, dtype=torch.long), num_nodes=3), {}, "has no edges"),
    (lambda: Data(edge_index=torch.tensor([[1, 2], [1, 2]]), num_nodes=3), {}, "no edges .*self-loops"),
    (lambda: Data(edge_index=torch.tensor([[0, -1], [1, 0]]), num_nodes=3), {}, r"node id -1 outside \[0, 3\)"),
    (lambda: Data(edge_index=torch.tensor([[0, 3], [3, 0]]), num_nodes=3), {}, r"node id 3 outside \[0, 3\)"),
    (lambda: Data(edge_index=torch.tensor([[0, 2**63 - 1], [1, 0]]), num_nodes=3), {},
     "node id 9223372036854775807 outside"),
    (lambda: Data(edge_index=torch.tensor([[0, 1], [1, 0]])), {}, "data.num_nodes is missing"),
    (lambda: Data(edge_index=torch.tensor([[0, 1], [1, 0]]), num_nodes=2.5), {}, "num_nodes must be an integer"),
    (lambda: Data(edge_index=torch.tensor([[0, 1], [1, 0]]), num_nodes=2**40), {}, "num_nodes must be in"),
    (lambda: _good(), {"needs_features": True}, "data.x is missing: dpar-gm needs node features"),
    (lambda: _good(x=torch.ones(2, 4)), {"needs_features": True}, r"data.x must be .*\[3, F\], got .*\[2, 4\]"),
    (lambda: _good(x=torch.ones(3)), {"needs_features": True}, r"shape \[N, F\]"),
    (lambda: _good(x=torch.tensor([[0.0], [float("inf")], [float("nan")]])), {"needs_features": True},
     "not finite .* at 2 nodes, the first node 1; impute"),
    (lambda: _good(x=torch.ones(3, 1)), {"needs_labels": True}, "data.y is missing: dpar-gm needs node labels"),
    (lambda: _good(y=torch.tensor([0.0, 1.0, 1.0])), {"needs_labels": True}, "data.y must be an integer tensor"),
    (lambda: _good(y=torch.tensor([[0], [1], [1]])), {"needs_labels": True}, r"shape \[N\] = \[3\]"),
    (lambda: _good(y=torch.tensor([0, 1, -2])), {"needs_labels": True}, "label -2; labels must be class ids"),
    (lambda: _good(y=torch.tensor([0, 1, 3])), {"needs_labels": True}, "label 3; labels must be class ids"),
    (lambda: _good(y=torch.tensor([-1, -1, -1])), {"needs_labels": True}, "no labelled node"),
    (lambda: _good(y=torch.tensor([1, 1, -1])), {"needs_labels": True}, r"one class \(1\) .* at least two"),
    (lambda: _good(y=torch.tensor([1, 1, -1])), {"needs_labels": IF_PRESENT}, r"or delete data.y"),
])
def test_bad_data_is_one_clear_dataset_error(make, kwargs, match):
    with pytest.raises(DatasetError, match=match) as err:
        check_data(make(), method="dpar-gm", **kwargs)
    _one_line(err)


def test_labels_a_method_does_not_use_are_not_checked_but_features_always_are():
    data = _good(y=torch.tensor([1, 1, 1]), name="g")  # one class: only a method that uses labels cares
    assert check_data(data) is data
    with pytest.raises(DatasetError, match=r"data\.x must be a real tensor of shape \[N, F\] = \[3, F\]"):
        check_data(_good(x=torch.ones(2, 4)))  # features present are checked by every method
    with pytest.raises(DatasetError, match="not finite"):
        check_data(_good(x=torch.tensor([[1.0], [float("inf")], [0.0]])))
    assert check_data(_good(), needs_features=IF_PRESENT, needs_labels=IF_PRESENT).normalisations == []
    ok = check_data(_good(x=torch.ones(3, 2, dtype=torch.float64), y=torch.tensor([0, -1, 1])),
                    needs_features=True, needs_labels=True)
    assert ok.normalisations == []


@pytest.mark.parametrize("seed", [0, 7, 2**32 - 1, np.int64(5), np.uint32(9)])
def test_good_seeds(seed):
    assert check_seed(seed) == int(seed) and type(check_seed(seed)) is int


@pytest.mark.parametrize("seed", [-1, 2**32, 2**63, 1.5, True, "3", None])
def test_bad_seeds(seed):
    with pytest.raises(ConfigError, match=r"seed must be an integer in \[0, 4294967295\] .*pass a smaller "
                                          "non-negative seed") as err:
        check_seed(seed)
    assert f"(got {seed!r})" in _one_line(err)


ENTRY_POINTS = [
    (dpar.DPARConfig, node_protocol.run_dpar), (mlp.MLPConfig, node_protocol.run_mlp),
    (dplp_rank.RankConfig, ranking_protocol.run_rank),
    (dplp_subgraph.DPLPConfig, link_protocol.run_dplp), (dplp_subgraph.SEALConfig, link_protocol.run_seal),
    (heuristic.CommonNeighboursConfig, link_protocol.run_cn),
    (lapgraph_sgnn.LapGraphConfig, link_protocol.run_lapgraph_sgnn), (ppgsl.PPGSLConfig, publishing_protocol.run_ppgsl),
    (privdpr.PrivDPRConfig, synthesis_protocol.run_privdpr), (publishing.RandomPerturbConfig, publishing_protocol.run_random_perturb),
    (publishing.DiceConfig, publishing_protocol.run_dice), (publishing.EdgeRandConfig, publishing_protocol.run_edgerand),
    (publishing.LapGraphPublishConfig, publishing_protocol.run_lapgraph),
]


@pytest.mark.parametrize("config_cls,run", ENTRY_POINTS,
                         ids=[f"{run.__module__.rsplit('.', 1)[1]}.{run.__name__}" for _, run in ENTRY_POINTS])
def test_every_entry_point_checks_data_and_seed_first(config_cls, run):
    bad = Data(edge_index=torch.tensor([[0, 5], [1, 0]]), num_nodes=3)
    with pytest.raises(DatasetError, match="node id 5 outside"):
        run(config_cls(), bad, seed=0)
    good = labelled_sbm(40, 2, num_features=4, seed=0)
    with pytest.raises(ConfigError, match="seed must be an integer"):
        run(config_cls(), good, seed=2**32)


@pytest.mark.parametrize("run", [node_protocol.run_dpar, node_protocol.run_mlp])
def test_feature_and_label_methods_need_them(run):
    config = dpar.DPARConfig() if run is node_protocol.run_dpar else mlp.MLPConfig()
    with pytest.raises(DatasetError, match="data.x is missing"):
        run(config, random_graph(30, 0.2, seed=0), seed=0)
    data = labelled_sbm(40, 2, num_features=4, seed=0)
    data.y = torch.zeros(40, dtype=torch.long)
    with pytest.raises(DatasetError, match="one class"):
        run(config, data, seed=0)


def test_the_entry_runs_on_the_validated_graph():
    clean = random_graph(80, 0.1, seed=4)
    pairs = clean.edge_index[:, clean.edge_index[0] < clean.edge_index[1]]
    loops = torch.tensor([[5, 9], [5, 9]])
    directed = Data(edge_index=torch.cat([pairs, pairs[:, :3], loops], 1), num_nodes=80, name=clean.name)
    config = heuristic.CommonNeighboursConfig()
    assert link_protocol.run_cn(config, directed, seed=3).metrics == link_protocol.run_cn(config, clean, seed=3).metrics
