"""Every registry method's result carries its task's trivial baseline, measured on the run's split.

Each baseline is checked against an independent computation on the same cell (seed 0, the graph of
``cells.graph()``): the majority class by counting labels, common neighbours by the ``cn`` run
itself (same seed, same split), the input graph by the sensitive-link protocol run by hand.
"""

from collections import Counter

import numpy as np
import pytest

from tests.regression.cells import CELLS, graph, run_cell

pytestmark = pytest.mark.usefixtures("one_thread")

NODE = {"dpar-em0", "dpar-em1", "dpar-gm", "dpar-nodp", "dp-mlp", "mlp"}
TRANSDUCTIVE = {"gap-edp", "gap-inf", "gap-ndp", "gcn", "progap-edp", "progap-inf", "progap-ndp", "sage-ndp",
                "dp-mlp-transductive", "mlp-transductive"}
LINK = {"dplp-ps", "dplp-ns", "seal", "seal-gcn", "lapgraph-sgnn", "gae", "edgerand-gae", "lapgraph-gae", "dp-heuristic-mix"}
RANK = {"dplp-rank", "dplp-rank-lin", "rank-exponential", "rank-laplace", "rank-staircase", "rank-nonprivate"}
PUBLISH = {"ppgsl", "random-perturb", "dice", "edgerand", "lapgraph"}
SYNTH = {"privdpr", "privdpr-tight", "dpr", "tmf", "dp-1k", "privgraph", "edgerand-synthesis", "lapgraph-synthesis"}


def test_the_families_cover_the_registry():
    from graphpriv.experiments.registry import METHODS

    assert NODE | TRANSDUCTIVE | LINK | RANK | PUBLISH | SYNTH | {"cn", "aa", "ra", "ra3"} == set(METHODS) == set(CELLS)


@pytest.mark.parametrize("method", sorted(CELLS))
def test_every_result_carries_a_baseline_of_its_own_metrics(method):
    result = run_cell(method)
    assert result.baselines, f"{method}: no baseline"
    for baseline in result.baselines:
        assert baseline.metric in result.metrics, (method, baseline)
        assert np.isfinite(baseline.value) and 0.0 <= baseline.value <= 1.0, (method, baseline)
    compared = [b for b in result.baselines if b.better != "reference"]
    assert compared, f"{method}: every baseline is a reference; nothing says whether the run beats one"


@pytest.mark.parametrize("method", sorted(NODE))
def test_node_classification_baseline_is_the_majority_class(method):
    from graphpriv.evaluation.node import inductive_sides

    (baseline,) = run_cell(method).baselines
    sides = inductive_sides(graph(), test_ratio=0.2, seed=0)
    train = [int(v) for v in sides.train.y if v >= 0]
    test = [int(v) for v in sides.test.y if v >= 0]
    top = max(Counter(train).items(), key=lambda kv: (kv[1], -kv[0]))[0]
    assert (baseline.name, baseline.metric, baseline.better) == ("majority class", "accuracy", "higher")
    assert baseline.value == sum(t == top for t in test) / len(test)


@pytest.mark.parametrize("method", sorted(TRANSDUCTIVE))
def test_transductive_baseline_is_the_majority_class_of_the_training_labels(method):
    from graphpriv.data.splits import node_split

    (baseline,) = run_cell(method).baselines
    y = graph().y.numpy()
    split = node_split(graph(), train_ratio=0.75, val_ratio=0.10, seed=0)
    train = [int(v) for v in y[split.train_idx] if v >= 0]
    test = [int(v) for v in y[split.test_idx] if v >= 0]
    top = max(Counter(train).items(), key=lambda kv: (kv[1], -kv[0]))[0]
    assert (baseline.name, baseline.metric, baseline.better) == ("majority class", "accuracy", "higher")
    assert baseline.value == sum(t == top for t in test) / len(test)


@pytest.mark.parametrize("method", sorted(LINK | {"aa", "ra", "ra3"}))
def test_link_prediction_baseline_is_common_neighbours_on_the_same_split(method):
    result = run_cell(method)
    (baseline,) = result.baselines
    assert (baseline.name, baseline.metric) == ("common neighbours", "test_auc")
    assert baseline.value == run_cell("cn").metrics["test_auc"]
    assert ("not private" in baseline.note) == (result.privacy is not None)


def test_common_neighbours_is_compared_with_chance():
    (baseline,) = run_cell("cn").baselines
    assert (baseline.name, baseline.metric, baseline.value) == ("chance", "test_auc", 0.5)


@pytest.mark.parametrize("method", sorted(RANK))
def test_ranking_baseline_is_chance_on_the_same_queries(method):
    from graphpriv.evaluation.baselines import ranking_chance
    from graphpriv.experiments.registry import make_config
    from graphpriv.ranking.protocol import ranking_split

    config = make_config(method, CELLS[method])
    split = ranking_split(graph(), sigma_prot=config.sigma_prot, query_fraction=config.query_fraction,
                          holdout=config.holdout, seed=0)
    want = ranking_chance(split.test_ptr, split.test_labels, config.top_k)
    assert run_cell(method).baselines == want
    # the chance of precision@K is the share of positives among each query's candidates
    shares = [split.test_labels[a:b].mean() for a, b in zip(split.test_ptr[:-1], split.test_ptr[1:])]
    assert want[1].value == pytest.approx(float(np.mean(shares)), abs=1e-12)


@pytest.mark.parametrize("method", sorted(PUBLISH))
def test_publishing_baseline_is_the_input_graph_released_unchanged(method):
    from graphpriv.attacks.protocol import SensitiveLinkProtocol

    result = run_cell(method)
    config = result.config
    protocol = SensitiveLinkProtocol(graph(), seed=0, sensitive_ratio=config["sensitive_ratio"],
                                     test_ratio=config["test_ratio"], use_features=config["use_features"])
    unchanged = protocol.evaluate(protocol.input_graph, attacks=config["attacks"], utility=config["utility"])
    got = {(b.name, b.metric, b.better): b.value for b in result.baselines}
    assert got[("input graph", "attack_auc_cn", "lower")] == unchanged.attack_auc["cn"]
    assert got[("input graph", "lp_auc", "reference")] == unchanged.lp_auc
    assert got[("input graph", "nc_f1", "reference")] == unchanged.nc_f1
    assert got[("chance", "lp_auc", "higher")] == 0.5


@pytest.mark.parametrize("method", sorted(SYNTH))
def test_synthesis_baseline_is_chance_with_the_input_graph_as_ceiling(method):
    result = run_cell(method)
    got = {(b.name, b.metric, b.better): b.value for b in result.baselines}
    assert got[("chance", "lp_auc", "higher")] == 0.5
    assert {k[:2] for k in got} >= {("input graph", "lp_auc"), ("input graph", "nc_f1")}
    # the graph the generator was fitted on predicts its own held-out edges better than chance
    assert got[("input graph", "lp_auc", "reference")] > 0.5
