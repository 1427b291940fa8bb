"""PPGSL learner: bad input, the two parameterizations, and that learning protects E_s."""

import numpy as np
import pytest
import torch

from graphpriv.data.graph import pair_codes, undirected_pairs
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.experiments.registry import make_config
from graphpriv.publishing.ppgsl import (
    PPGSLSettings,
    SurrogateAttacker,
    _Learner,
    fgp_bytes,
    ppgsl,
)
from graphpriv.testing.graphs import random_graph

FAST = {"learner_steps": 6, "mu": 3, "surrogate_epochs": 20, "hidden": (16, 8)}


@pytest.fixture(scope="module")
def small():
    data = random_graph(60, 0.12, seed=1)
    pairs = undirected_pairs(data.edge_index)
    return pairs[:, 8:], pairs[:, :8], data.num_nodes  # 8 hidden sensitive links


@pytest.mark.parametrize("bad", [{"alpha": -0.1}, {"k": -1}, {"mu": 0}, {"protocol": "gan"}, {"head": "l2"}])
def test_bad_settings_are_config_errors(bad):
    with pytest.raises(ConfigError):
        PPGSLSettings(**bad)
    with pytest.raises(ConfigError):
        make_config("ppgsl", bad)


def test_bad_inputs(small):
    pairs, sensitive, n = small
    with pytest.raises(DatasetError, match="sensitive set is empty"):
        ppgsl(pairs, n, np.empty((2, 0), np.int64), None, settings=PPGSLSettings(**FAST), seed=0)
    with pytest.raises(DatasetError, match="still edges of the input graph"):
        ppgsl(pairs, n, pairs[:, :3], None, settings=PPGSLSettings(**FAST), seed=0)
    with pytest.raises(ConfigError, match="sparse parameterization"):
        ppgsl(pairs, n, sensitive, None, seed=0,
              settings=PPGSLSettings(parameterization="fgp", fgp_max_bytes=fgp_bytes(n) - 1, **FAST))


def test_sparse_candidates_are_edges_plus_k_non_edges_never_sensitive(small):
    pairs, sensitive, n = small
    out = ppgsl(pairs, n, sensitive, None, settings=PPGSLSettings(k=2, alpha=10.0, **FAST), seed=0)
    assert out.num_parameters == 3 * pairs.shape[1]
    # a large alpha keeps A' = A: the release is the input graph exactly (Bernoulli of 1 and 0)
    assert np.array_equal(np.sort(pair_codes(out.published, n)), np.sort(pair_codes(pairs, n)))
    assert not np.isin(pair_codes(sensitive, n), pair_codes(out.weights[0], n)).any()


def test_utility_losses_are_the_frobenius_distance(small):
    pairs, _, n = small
    fgp = _Learner(pairs, n, None)
    with torch.no_grad():
        fgp.theta.add_(torch.randn(n, n, generator=torch.Generator().manual_seed(0)) * 0.3)
    a = torch.zeros(n, n)
    a[pairs[0], pairs[1]] = a[pairs[1], pairs[0]] = 1
    expected = ((a - fgp.dense()) ** 2).sum()
    assert torch.isclose(fgp.utility_loss(), expected)
    cand = np.concatenate([pairs, np.array([[0, 1], [59, 58]])], axis=1)
    sparse = _Learner(pairs, n, cand)
    with torch.no_grad():
        sparse.theta.copy_(torch.linspace(-0.5, 1.5, cand.shape[1]))
    dense = torch.zeros(n, n)
    w = sparse.theta.clamp(0, 1)
    dense[cand[0], cand[1]] = dense[cand[1], cand[0]] = w
    assert torch.isclose(sparse.utility_loss(), ((a - dense) ** 2).sum())


def test_every_adjacency_form_matches_pyg_gcn_layers():
    # The surrogate's encoder over a dense A' (FGP), a weighted edge list, the learner's
    # SymmetricGraph and the fixed NormalizedAdjacency equals two stacked PyG layers.
    from torch_geometric.nn import DenseGCNConv

    from graphpriv.nn.weighted_gcn import NormalizedAdjacency, SymmetricGraph

    torch.manual_seed(0)
    n = 12
    pairs = torch.tensor([[0, 1, 2, 3, 5, 7], [1, 2, 3, 4, 9, 11]])
    w = torch.rand(pairs.size(1))
    x = torch.randn(n, 5)
    model = SurrogateAttacker(5, hidden=(8, 4))
    edge_index, edge_weight = torch.cat([pairs, pairs.flip(0)], dim=1), torch.cat([w, w])
    c1, c2 = model.conv1, model.conv2
    reference = c2(torch.relu(c1(x, edge_index, edge_weight)), edge_index, edge_weight)
    adj = torch.zeros(n, n)
    adj[pairs[0], pairs[1]] = adj[pairs[1], pairs[0]] = w
    d1, d2 = DenseGCNConv(5, 8), DenseGCNConv(8, 4)
    for d, c in ((d1, c1), (d2, c2)):
        d.lin.weight.data.copy_(c.lin.weight)
        d.bias.data.copy_(c.bias)
    dense_reference = d2(torch.relu(d1(x, adj)), adj).squeeze(0)
    assert torch.allclose(reference, dense_reference, atol=1e-5)
    for form in (adj, (edge_index, edge_weight), (SymmetricGraph(pairs, n), w), NormalizedAdjacency(pairs, w, n)):
        assert torch.allclose(model.encode(x, form), reference, atol=1e-5)
    assert torch.allclose(model.encode(None, adj, xw1=c1.lin(x)), reference, atol=1e-5)


@pytest.fixture(scope="module")
def communities():
    import networkx as nx

    g = nx.stochastic_block_model([20, 20, 20], [[0.4, 0.01, 0.01], [0.01, 0.4, 0.01], [0.01, 0.01, 0.4]],
                                  seed=3)
    pairs = np.sort(np.array(list(g.edges())).T, axis=0)
    same = (pairs[0] // 20) == (pairs[1] // 20)
    hidden = np.flatnonzero(same)[::6]  # every 6th within-community edge is sensitive
    keep = np.setdiff1d(np.arange(pairs.shape[1]), hidden)
    return pairs[:, keep], pairs[:, hidden], 60


@pytest.mark.parametrize("parameterization", ["sparse", "fgp"])
def test_learning_lowers_a_retrained_surrogate_score_on_the_sensitive_links(communities, parameterization):
    # Within-community hidden links are easy to infer; with alpha = 0 the learner must make a
    # freshly trained surrogate (SITP re-initialises it every mu steps) score them lower.
    pairs, sensitive, n = communities
    settings = PPGSLSettings(alpha=0.0, parameterization=parameterization, learner_steps=41, mu=20,
                             surrogate_epochs=100, hidden=(16, 8))
    out = ppgsl(pairs, n, sensitive, None, settings=settings, seed=0)
    after_retrain = {h["step"]: h["priv"] for h in out.history if "priv" in h and h["step"] % 20 == 0}
    assert after_retrain[40] < after_retrain[0] - 0.2, after_retrain
    assert out.published.shape[0] == 2 and (out.published[0] < out.published[1]).all()


def test_fixed_graph_path_equals_the_differentiable_one_with_gradients():
    from graphpriv.nn.weighted_gcn import SymmetricGraph
    from graphpriv.publishing.ppgsl import _fixed
    from graphpriv.testing.graphs import random_pairs

    torch.manual_seed(0)
    n = 40
    pairs = random_pairs(n, 150, seed=0)
    w = torch.rand(pairs.size(1))
    w[:4] = 0  # zero-weight candidates are dropped from the fixed adjacency: same result
    edge_index, edge_weight = torch.cat([pairs, pairs.flip(0)], 1), torch.cat([w, w])
    model = SurrogateAttacker(6, hidden=(8, 4))
    x = torch.randn(n, 6)
    grads = []
    for form in ((edge_index, edge_weight), (SymmetricGraph(pairs, n), w), _fixed(None, pairs[:, 4:], w[4:], n)):
        model.zero_grad()
        z = model.encode(x, form)
        (z ** 2).sum().backward()
        grads.append((z.detach(), model.conv1.lin.weight.grad.clone(), model.conv2.bias.grad.clone()))
    for other in grads[1:]:
        for a, b in zip(grads[0], other):
            assert torch.allclose(a, b, atol=1e-4)


def test_surrogate_negatives_are_uniform_non_pairs():
    from graphpriv.publishing.ppgsl import _non_pairs
    from graphpriv.testing.graphs import random_pairs

    n = 30
    pairs = random_pairs(n, 300, seed=1)  # 300 of 435 pairs taken: rejection must work hard
    codes = torch.sort(pairs[0] * n + pairs[1]).values
    torch.manual_seed(0)
    neg = _non_pairs(codes, n, 20000)
    assert neg.shape == (2, 20000) and (neg[0] < neg[1]).all()
    drawn = neg[0] * n + neg[1]
    assert not torch.isin(drawn, codes).any()
    counts = torch.bincount(drawn, minlength=n * n)
    allowed = torch.ones(n * n, dtype=torch.bool)
    allowed[codes] = False
    u, v = torch.triu_indices(n, n, 1)
    free = (u * n + v)[allowed[u * n + v]]
    assert (counts[free] > 0).all()  # every one of the 135 free pairs is drawn (mean 148 each)
    assert counts.sum() == counts[free].sum()


def test_normalised_utility_is_the_share_of_the_input_changed(small):
    pairs, sensitive, n = small
    for learner in (_Learner(pairs, n, None), _Learner(pairs, n, np.concatenate([pairs, [[0], [59]]], axis=1))):
        with torch.no_grad():
            learner.theta.mul_(0.7)
        assert torch.isclose(learner.utility_loss("edges"), learner.utility_loss() / (2 * pairs.shape[1]))
    # one alpha on the normalised loss is alpha / (2|E|) on the paper's sum: the same learner loss
    a = 3.0
    scaled = ppgsl(pairs, n, sensitive, None, settings=PPGSLSettings(alpha=a, utility_normalisation="edges", **FAST),
                   seed=0)
    paper = ppgsl(pairs, n, sensitive, None, seed=0,
                  settings=PPGSLSettings(alpha=a / (2 * pairs.shape[1]), utility_normalisation="none", **FAST))
    first = [next(h for h in out.history if "loss" in h) for out in (scaled, paper)]
    assert first[0]["loss"] == pytest.approx(first[1]["loss"], rel=1e-6)
    assert first[0]["util"] == pytest.approx(first[1]["util"] / (2 * pairs.shape[1]), rel=1e-6)


def test_the_default_is_the_normalised_loss_and_the_paper_preset_the_sum():
    from graphpriv.experiments.registry import preset_settings

    config = make_config("ppgsl", {})
    assert (config.utility_normalisation, config.alpha) == ("edges", 0.4)
    paper = make_config("ppgsl", preset_settings("ppgsl", "paper", "cora"))
    assert (paper.utility_normalisation, paper.alpha) == ("none", 0.005)
    with pytest.raises(ConfigError, match="utility_normalisation"):
        make_config("ppgsl", {"utility_normalisation": "nodes"})
