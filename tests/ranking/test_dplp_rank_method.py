"""DPLP-rank methods end to end on a small graph: guarantees stated, metrics sane, bad input."""

import numpy as np
import pytest

from graphpriv.errors import ConfigError
from graphpriv.experiments.registry import make_config, method_spec

FAST = {"lin_epochs": 2, "umnn_epochs": 1, "max_negatives": 50}


@pytest.fixture(scope="module")
def graph():
    # four communities: common neighbours predict links (an Erdos-Renyi graph would not)
    import networkx as nx
    import torch
    from torch_geometric.data import Data

    g = nx.stochastic_block_model([30] * 4, [[0.35 if i == j else 0.02 for j in range(4)] for i in range(4)], seed=4)
    pairs = torch.tensor(list(g.edges())).T
    return Data(edge_index=torch.cat([pairs, pairs.flip(0)], 1), num_nodes=120, name="toy")


def _run(method, graph, **overrides):
    spec = method_spec(method)
    return spec.run(make_config(method, overrides), graph, seed=0, method=method)


@pytest.mark.parametrize("method", ["dplp-rank", "dplp-rank-lin", "rank-exponential"])
def test_proven_mechanisms_state_k_times_epsilon_p(graph, method):
    extra = FAST if method.startswith("dplp") else {}
    r = _run(method, graph, base="cn", epsilon_p=0.2, top_k=10, **extra)
    assert r.privacy.epsilon == pytest.approx(2.0) and r.privacy.delta == 0.0
    assert r.privacy.unit == "protected_pair" and r.privacy.accounting == "rigorous"
    assert r.privacy.accountant == "basic" and r.privacy.phases[0].steps == r.config["top_k"]
    assert 0 <= r.metrics["auc_at_k"] <= 1 and 0 <= r.metrics["precision_at_k"] <= 1


def test_laplace_and_staircase_are_labelled_as_the_papers_claim(graph):
    for method in ("rank-laplace", "rank-staircase"):
        r = _run(method, graph, base="aa")
        assert r.privacy.accounting == "paper" and "not proven" in " ".join(r.privacy.notes)


def test_nonprivate_ranking_beats_a_tiny_epsilon_and_has_no_guarantee(graph):
    clean = _run("rank-nonprivate", graph, base="cn")
    noisy = _run("rank-exponential", graph, base="cn", epsilon_p=1e-4)
    assert clean.privacy is None
    assert clean.metrics["auc"] > noisy.metrics["auc"] + 0.1  # CN carries signal; eps -> 0 is random
    assert abs(noisy.metrics["auc"] - 0.5) < 0.1


def test_paper_mode_uses_f1_and_says_so(graph):
    r = _run("dplp-rank", graph, base="cn", accounting="paper", **FAST)
    assert r.info["noise_scale"] == pytest.approx(2 * r.info["f1"] / 0.1)
    assert "paper accounting" in " ".join(r.privacy.notes)
    rig = _run("dplp-rank", graph, base="cn", **FAST)
    assert rig.info["noise_scale"] == pytest.approx(2 * (rig.info["f1"] - rig.info["f0"]) / 0.1)


def test_bad_input():
    with pytest.raises(ConfigError, match="degree cap"):
        make_config("rank-exponential", {"base": "pa"})
    with pytest.raises(ConfigError):
        make_config("dplp-rank", {"epsilon_p": 0})
    assert make_config("rank-exponential", {"base": "pa", "degree_cap": 50}).degree_cap == 50


def test_embedding_base_scores_are_probabilities(graph):
    r = _run("rank-nonprivate", graph, base="gcn", embedding_dim=8)
    assert 0 <= r.metrics["auc"] <= 1 and np.isfinite(r.metrics["auc_at_k"])


def test_a_collapsed_transform_ranks_uniformly_at_random(graph, monkeypatch):
    """Training can flatten f (range 0, noise scale 0): the lists must then be uniform draws, as the
    exponential mechanism with a constant utility is, and must not leak the candidates' order."""
    import torch

    from graphpriv.methods import dplp_rank

    class Flat(torch.nn.Module):
        def forward(self, s):
            return torch.zeros_like(s, dtype=torch.float64)

    monkeypatch.setattr(dplp_rank, "_transform", lambda *args, **kw: (Flat(), {}))
    flat = _run("dplp-rank", graph, base="cn", **FAST)
    assert flat.info["noise_scale"] == 0.0
    clean = _run("rank-nonprivate", graph, base="cn")
    assert flat.metrics["auc"] == pytest.approx(0.5, abs=0.05)  # random order over the whole list
    assert flat.metrics["auc_at_k"] < clean.metrics["auc_at_k"] - 0.2
