import dataclasses

import numpy as np
import pytest

from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.evaluation.link import run_dplp
from graphpriv.experiments.registry import make_config
from graphpriv.linkpred import evaluation_sets
from graphpriv.linkpred.evaluation_sets import evaluation_subgraphs, forget_evaluation_subgraphs
from graphpriv.linkpred.subgraphs import Extractor, extract_subgraphs
from graphpriv.memo import Memo
from graphpriv.testing.graphs import random_graph


@pytest.fixture
def fresh_memo(monkeypatch):
    monkeypatch.setattr(evaluation_sets, "_SETS", Memo(2, weigh=evaluation_sets._edges,
                                                       max_weight=evaluation_sets.KEEP_EDGES))
    return evaluation_sets._SETS


def _inputs(seed=0):
    n = 60
    pairs = undirected_pairs(random_graph(n, 0.12, seed=seed).edge_index)
    rng = np.random.default_rng(seed)
    neg = rng.integers(0, n, size=(2, 40))
    links = np.concatenate([pairs[:, :40], neg[:, neg[0] != neg[1]]], axis=1)
    labels = (np.arange(links.shape[1]) < 40).astype(np.float32)
    return to_csr(pairs, n), links, labels


@pytest.mark.parametrize("extractor, options", [(Extractor.PATH, {"k": 3}), (Extractor.NEIGHBOURHOOD, {"h": 2})])
def test_a_kept_set_is_the_extracted_one_read_only_and_shared(fresh_memo, extractor, options):
    adj, links, labels = _inputs()
    first = evaluation_subgraphs(adj, links, labels, extractor=extractor, **options)
    reference = extract_subgraphs(adj, links, labels, extractor=extractor, **options)
    for field in dataclasses.fields(reference):
        assert np.array_equal(getattr(first, field.name), getattr(reference, field.name)), field.name
        assert not getattr(first, field.name).flags.writeable, field.name
    with pytest.raises(ValueError, match="read-only"):
        first.nodes[0] = 1
    assert labels.flags.writeable and links.flags.writeable  # the caller's arrays are left as they were
    reports = []
    again = evaluation_subgraphs(adj.copy(), links.copy(), labels.copy(), extractor=extractor,
                                 progress=lambda done, total, **info: reports.append(done), **options)
    assert again is first and reports == []  # kept: nothing extracted, no progress


def test_other_pairs_labels_k_or_graph_are_extracted_and_two_sets_are_kept(fresh_memo):
    adj, links, labels = _inputs()
    first = evaluation_subgraphs(adj, links, labels, extractor=Extractor.PATH, k=3)
    assert evaluation_subgraphs(adj, links, labels, extractor=Extractor.PATH, k=4) is not first
    assert evaluation_subgraphs(adj, links, labels, extractor=Extractor.PATH, k=3) is first
    other_labels = evaluation_subgraphs(adj, links, 1 - labels, extractor=Extractor.PATH, k=3)
    assert other_labels is not first and np.array_equal(other_labels.labels, 1 - labels)
    other_graph, _, _ = _inputs(seed=1)
    evaluation_subgraphs(other_graph, links, labels, extractor=Extractor.PATH, k=3)
    assert len(fresh_memo.items) == 2
    assert evaluation_subgraphs(adj, links, labels, extractor=Extractor.PATH, k=3) is not first  # dropped
    forget_evaluation_subgraphs()
    assert not fresh_memo.items


def test_the_kept_sets_stay_within_the_edge_budget(fresh_memo):
    adj, links, labels = _inputs()
    first = evaluation_subgraphs(adj, links, labels, extractor=Extractor.PATH, k=3)
    edges = first.edges.shape[1]
    fresh_memo.max_weight = edges - 1  # a set heavier than the budget on its own is not kept
    forget_evaluation_subgraphs()
    assert evaluation_subgraphs(adj, links, labels, extractor=Extractor.PATH, k=3) is not first
    assert not fresh_memo.items
    fresh_memo.max_weight = edges + 1  # room for one of two such sets: the older is dropped
    evaluation_subgraphs(adj, links, labels, extractor=Extractor.PATH, k=3)
    second = evaluation_subgraphs(adj, links, 1 - labels, extractor=Extractor.PATH, k=3)
    assert list(fresh_memo.items.values()) == [second]


def test_a_sets_caches_are_read_only(fresh_memo):
    adj, links, labels = _inputs()
    kept = evaluation_subgraphs(adj, links, labels, extractor=Extractor.PATH, k=3)
    for array in (kept.degrees, *kept.target_edges, *kept.adjacency_rows):
        assert not array.flags.writeable


def test_a_full_memo_frees_its_oldest_value_before_computing_when_asked():
    memo, held = Memo(2), []
    memo.get("a", lambda: 1)
    memo.get("b", lambda: 2)
    memo.get("c", lambda: held.append(list(memo.items)) or 3, free_first=True)
    memo.get("d", lambda: held.append(list(memo.items)) or 4)
    assert held == [["b"], ["b", "c"]] and list(memo.items) == ["c", "d"]


def test_a_weighed_memo_keeps_its_total_weight_under_the_bound():
    memo = Memo(3, weigh=len, max_weight=5)
    memo.get("a", lambda: "xx")
    memo.get("b", lambda: "yy")
    memo.get("c", lambda: "zzz")  # 2 + 2 + 3 > 5: the oldest goes
    assert list(memo.items) == ["b", "c"]
    memo.get("d", lambda: "wwwwww")  # heavier than the bound on its own: returned, not kept
    assert list(memo.items) == ["b", "c"]


def test_a_dplp_fit_with_its_sets_kept_is_the_fit_without(fresh_memo):
    graph = random_graph(120, 0.07, seed=3)
    cfg = make_config("dplp-ps", {"epsilon": 4.0, "theta": 4, "k": 3, "epochs": 2, "batch_size": 32})
    cold = run_dplp(cfg, graph, seed=2, method="dplp-ps")
    assert len(fresh_memo.items) == 2  # the validation and the test set
    warm = run_dplp(cfg, graph, seed=2, method="dplp-ps")
    forget_evaluation_subgraphs()
    again = run_dplp(cfg, graph, seed=2, method="dplp-ps")
    assert cold.metrics == warm.metrics == again.metrics
    assert cold.info["best_epoch"] == warm.info["best_epoch"]
