"""DPLP-rank's accounting="reference": the released code's transforms, training, noise and the
epsilon its noise provides; files; refusals."""

import math

import numpy as np
import pytest
import torch

from graphpriv.errors import ConfigError
from graphpriv.methods.dplp_rank import DPLPRanker
from graphpriv.methods.dplp_subgraph import DPLPLinkPredictor
from graphpriv.methods.estimator import Estimator
from graphpriv.nn.monotone import ReferencePowerTransform, ReferenceUMNNTransform
from graphpriv.ranking.protocol import ranking_split
from graphpriv.ranking.reference import reference_scaled, reference_split, reference_top_score
from graphpriv.testing.graphs import random_graph

pytestmark = pytest.mark.usefixtures("one_thread")

FAST = {"accounting": "reference", "lin_epochs": 2, "umnn_epochs": 1, "top_k": 4}


@pytest.fixture(scope="module")
def graph():
    return random_graph(70, 0.2, seed=3)


@pytest.fixture(scope="module")
def split(graph):
    return reference_split(graph, seed=1)


def test_the_released_transforms_start_as_the_code_does():
    nu = ReferencePowerTransform()
    assert nu.multiplier() == -100.0 * 169  # W starts at -100, the first power at 0
    s = torch.tensor([0.0, 0.5, 1.0, 2.0], dtype=torch.float64)
    expected = (s.unsqueeze(-1) ** (1 / (0.30 + torch.arange(170) / 100))).double() @ torch.cat(
        [torch.ones(1), torch.full((169,), math.exp(-1.0))]).double()
    torch.testing.assert_close(nu(s), expected)
    f = ReferenceUMNNTransform(nu)
    with torch.no_grad():
        values = f(torch.linspace(0, 3, 50, dtype=torch.float64))
        at_zero = float(f(torch.zeros(1, dtype=torch.float64)))
    assert (values[1:] > values[:-1]).all() and at_zero == 0.0
    assert torch.equal(f.integrand[0].weight, torch.ones(20, 2))  # identical hidden units


def test_reference_scaling_divides_only_past_the_codes_threshold():
    raw = np.array([3.0, 3.0, 3.0])
    own = np.array([0, 1, 2])
    np.testing.assert_allclose(reference_scaled(raw, "cn", own), [3.0, 3.0, 1.0])  # CN: a > 1.01 only
    np.testing.assert_allclose(reference_scaled(raw, "aa", own), [3.0, 3 / (1 / np.log(2) + 1), 3 / (2 / np.log(2) + 1)])
    np.testing.assert_allclose(reference_top_score("cn", np.array([10.0]), np.array([3])), [2.5])
    with pytest.raises(ValueError, match="aa, cn"):
        reference_scaled(raw, "jc", own)


def test_fit_reports_what_the_noise_provides(split):
    ranker = DPLPRanker(random_state=0, **FAST).fit(split)
    m = ranker.info_["multiplier"]
    assert ranker.noise_scale_ == pytest.approx(2 * m / 0.1)
    lists = ranker.recommend(split.queries[:3])
    assert lists.shape == (3, 4)
    report = ranker.privacy_report_
    assert report.accounting == "reference" and report.epsilon == pytest.approx(ranker.info_["reference_draw_epsilon"] * 4)
    assert any("no guarantee" in n for n in report.notes) and any("noise multiplier m" in n for n in report.notes)


def test_the_exponential_baselines_epsilon_is_the_exponential_mechanisms(split):
    """Raw scores, Gumbel scale 2 / eps_p > 0: a list of K draws costs K eps_p s_top for the noised
    query with the largest possible scaled score."""
    ranker = DPLPRanker(transform="none", random_state=0, **FAST).fit(split)
    noised = split.queries[split.own_test[split.queries] > 0]
    degree = np.asarray(split.train.sum(axis=1)).ravel()
    top = reference_top_score("aa", degree[noised], split.own_test[noised]).max()
    assert ranker.info_["reference_draw_epsilon"] == pytest.approx(0.1 * top)


def test_queries_without_own_protected_edges_get_no_noise(split):
    quiet = split.queries[split.own_test[split.queries] == 0]
    loud = split.queries[split.own_test[split.queries] > 0]
    if not quiet.size:
        pytest.skip("every query has protected edges of its own on this split")
    ranker = DPLPRanker(transform="none", random_state=0, **FAST).fit(split)
    ptr = np.r_[0, np.cumsum([split.num_nodes - 1] * 1)]
    q = int(quiet[0])
    nodes = np.delete(np.arange(split.num_nodes), q)
    _, noisy = ranker._rank(np.array([q]), (ptr, nodes), k=4)
    np.testing.assert_allclose(noisy, ranker._scorer(np.full(nodes.size, q), nodes))
    _, noisy = ranker._rank(np.array([int(loud[0])]), (ptr, np.delete(np.arange(split.num_nodes), int(loud[0]))), k=4)
    assert not np.allclose(noisy, ranker._scorer(np.full(nodes.size, int(loud[0])),
                                                 np.delete(np.arange(split.num_nodes), int(loud[0]))))


def test_save_load_gives_the_same_lists(split, tmp_path):
    ranker = DPLPRanker(random_state=2, **FAST).fit(split)
    loaded = Estimator.load(ranker.save(tmp_path / "ref.pt"))
    assert loaded.own_protected_ is not None and np.array_equal(loaded.own_protected_, ranker.own_protected_)
    assert torch.equal(loaded.recommend(split.queries[:5]), ranker.recommend(split.queries[:5]))


def test_refusals(graph):
    with pytest.raises(ConfigError, match="no target epsilon"):
        DPLPRanker(accounting="reference", epsilon=3.0)
    with pytest.raises(ConfigError, match="aa and cn only"):
        DPLPRanker(accounting="reference", base="jc")
    with pytest.raises(ConfigError, match="DPLP-Lin"):
        DPLPRanker(transform="power", random_state=0, **FAST).fit(graph)
    with pytest.raises(ConfigError, match="ReferenceSplit"):
        DPLPRanker(random_state=0, **FAST).fit(ranking_split(graph, seed=0))
    with pytest.raises(ConfigError, match="DPLP-rank only"):
        DPLPLinkPredictor(accounting="reference")
