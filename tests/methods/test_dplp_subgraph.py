import pytest

from graphpriv.data.graph import to_csr
from graphpriv.data.splits import link_split
from graphpriv.errors import BudgetExceededError, ConfigError
from graphpriv.evaluation.link import run_dplp as run
from graphpriv.evaluation.link import run_seal
from graphpriv.experiments.registry import make_config
from graphpriv.methods.dplp_subgraph import dependency_bound
from graphpriv.testing.graphs import random_graph


@pytest.fixture(scope="module")
def graph():
    return random_graph(150, 0.06, seed=7)


def test_private_run_reports_guarantee_and_bounds(graph):
    cfg = make_config("dplp-ps", {"epsilon": 2.0, "theta": 4, "k": 3, "epochs": 3, "batch_size": 32})
    result = run(cfg, graph, seed=0, method="dplp-ps")
    p = result.privacy
    assert p is not None and p.unit == "edge" and p.accounting == "rigorous"
    assert p.epsilon <= 2.0 and p.epsilon > 1.9
    assert p.delta == 1e-5 and p.phases[0].steps == result.info["steps"]
    assert result.info["empirical_max_lsn"] <= result.info["dependency_bound_M"]
    assert result.info["group_size"] == result.info["dependency_bound_M"] + 1
    assert 0.0 <= result.metrics["test_auc"] <= 1.0
    assert "edge-level" in result.privacy_statement


def test_paper_mode_uses_paper_bound_and_effective_rate(graph):
    cfg = make_config("dplp-ps", {"epsilon": 4.0, "theta": 4, "k": 3, "epochs": 2, "batch_size": 32,
                                  "accounting": "paper"})
    result = run(cfg, graph, seed=0, method="dplp-ps")
    assert result.privacy.accounting == "paper"
    assert result.info["dependency_bound_M"] == dependency_bound(cfg)
    assert result.info["group_size"] == result.info["dependency_bound_M"]
    assert "EffectiveRateWorGaussian" in result.privacy.phases[0].events[0]


def test_seal_is_non_private_and_runs_through_the_same_code(graph):
    cfg = make_config("seal", {"epochs": 2})
    result = run_seal(cfg, graph, seed=1, method="seal")
    assert result.privacy is None and "non-private" in result.privacy_statement
    assert result.config["project"] is False


def test_same_seed_same_result(graph):
    cfg = make_config("dplp-ps", {"epochs": 2, "batch_size": 32})
    a, b = (run(cfg, graph, seed=3, method="dplp-ps") for _ in range(2))
    assert a.metrics == b.metrics


@pytest.mark.parametrize("overrides,match", [
    ({"theta": 0}, "theta"), ({"k": 1}, "k"), ({"k": 7}, "k"), ({"h": 0}, "h"),
    ({"epsilon": -1}, "epsilon"), ({"delta": 1.5}, "delta"), ({"bogus": 1}, "unknown setting"),
])
def test_bad_config_fails_before_work(overrides, match):
    with pytest.raises(ConfigError, match=match):
        make_config("dplp-ps", overrides)


def test_batch_larger_than_training_set(graph):
    with pytest.raises(ConfigError, match="exceeds the .* training examples"):
        run(make_config("dplp-ps", {"batch_size": 100_000}), graph, seed=0)


def test_epsilon_too_small_for_steps_fails_before_training(graph, monkeypatch):
    called = []
    import graphpriv.methods.dplp_subgraph as mod

    monkeypatch.setattr(mod, "extract_subgraphs", lambda *a, **k: called.append(1))
    with pytest.raises(BudgetExceededError, match="cannot be met"):
        run(make_config("dplp-ps", {"epsilon": 1e-6, "epochs": 500}), graph, seed=0)
    assert not called, "subgraphs were extracted before the budget check"


def test_training_graph_excludes_held_out_edges(graph):
    split = link_split(graph, seed=0)
    adj = to_csr(split.train_edge_index, graph.num_nodes)
    for pos in (split.val_pos, split.test_pos):
        assert adj[pos[0], pos[1]].sum() == 0


def test_cn_baseline_matches_direct_count(graph):
    from graphpriv.evaluation.link import run_cn
    from graphpriv.experiments.runner import run_method  # noqa: F401  (registry import path)
    from graphpriv.linkpred.heuristics import common_neighbours
    from graphpriv.methods.heuristic import CommonNeighboursConfig

    result = run_cn(CommonNeighboursConfig(), graph, seed=0)
    split = link_split(graph, seed=0)
    adj = to_csr(split.train_edge_index, graph.num_nodes)
    u, v = split.test_pos[:, 0]
    assert common_neighbours(adj, split.test_pos[:, :1])[0] == len(
        set(adj[u].indices) & set(adj[v].indices))
    assert result.privacy is None and 0 <= result.metrics["test_auc"] <= 1


@pytest.mark.parametrize("backbone", ["sage", "gin", "dgcnn"])
def test_every_backbone_trains_privately(graph, backbone):
    cfg = make_config("dplp-ps", {"backbone": backbone, "epochs": 1, "batch_size": 32, "k": 3, "theta": 4})
    result = run(cfg, graph, seed=0, method="dplp-ps")
    assert result.config["backbone"] == backbone and result.privacy.epsilon <= 4.0
    assert 0.0 <= result.metrics["test_auc"] <= 1.0


def test_dplp_ns_uses_lemma_2(graph):
    from graphpriv.privacy.sensitivity import neighbourhood_bound

    cfg = make_config("dplp-ns", {"epochs": 1, "batch_size": 32, "theta": 3})
    result = run(cfg, graph, seed=0, method="dplp-ns")
    assert result.info["dependency_bound_M"] == neighbourhood_bound(1, 3, 1.0)
    assert result.info["empirical_max_lsn"] <= result.info["dependency_bound_M"]


@pytest.mark.parametrize("k,reason", [(1, "hidden from the model"), (7, "grow as theta\\^k"), (0, "own link only")])
def test_k_outside_2_to_6_is_refused_with_its_reason(k, reason):
    from graphpriv.experiments.registry import make_config

    with pytest.raises(ConfigError, match=f"k must be in 2..6 or 'auto' \\(got {k}\\).*{reason}"):
        make_config("dplp-ps", {"k": k})
    assert make_config("dplp-ps", {"k": "auto"}).k == "auto" and make_config("dplp-ps", {"k": 6}).k == 6


@pytest.mark.parametrize("backbone", ["gcn", "sage", "gin", "dgcnn"])
def test_kept_validation_batches_score_as_fresh_ones(graph, backbone, monkeypatch):
    """The validation pass keeps its collated batches across epochs: after every parameter change
    its AUC equals that of batches collated afresh, and a whole run is unchanged by keeping them."""
    import numpy as np
    import torch
    from sklearn.metrics import roc_auc_score

    from graphpriv.linkpred.subgraphs import Extractor, extract_subgraphs
    from graphpriv.methods import dplp_subgraph as module

    split = link_split(graph, val_ratio=0.1, test_ratio=0.1, seed=0)
    adj = to_csr(split.train_edge_index, split.num_nodes)
    links = np.concatenate([split.val_pos, split.val_neg], axis=1)
    labels = np.r_[np.ones(split.val_pos.shape[1]), np.zeros(split.val_neg.shape[1])]
    val_set = extract_subgraphs(adj, links, labels, extractor=Extractor.PATH, k=3)
    config = make_config("dplp-ps", {"k": 3, "backbone": backbone, "eval_batch_size": 16})
    cap = module.label_cap(config)
    torch.manual_seed(0)
    model = module._build_model(config)
    kept = module._ValidationAUC(model, val_set, config, cap)
    assert kept.keep and len(val_set) > 16  # several batches, kept
    for _ in range(3):
        fresh = roc_auc_score(val_set.labels, module._scores(model, val_set, config, cap).numpy())
        assert kept() == fresh and kept.batches is not None
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn_like(p))

    cfg = make_config("dplp-ps", {"epochs": 3, "batch_size": 32, "k": 3, "theta": 4, "backbone": backbone})
    keeping = run(cfg, graph, seed=2, method="dplp-ps")
    monkeypatch.setattr(module, "KEEP_VALIDATION_EDGES", -1)  # collate afresh every epoch
    fresh_run = run(cfg, graph, seed=2, method="dplp-ps")
    assert keeping.metrics == fresh_run.metrics
    assert keeping.info["best_epoch"] == fresh_run.info["best_epoch"]
    history = keeping.info["val_auc_by_epoch"]  # every epoch's validation AUC; the kept epoch is its first best
    assert len(history) == 3 and history == fresh_run.info["val_auc_by_epoch"]
    assert keeping.info["best_epoch"] == int(np.argmax(history)) + 1 and max(history) == keeping.metrics["val_auc"]
