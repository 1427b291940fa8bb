"""The four publishing baselines through the registry: protocol, privacy report, release."""

import math

import numpy as np
import pytest

from graphpriv.attacks import PublishedGraph
from graphpriv.errors import ConfigError
from graphpriv.experiments.registry import METHODS, make_config
from graphpriv.testing.graphs import random_graph


@pytest.fixture(scope="module")
def graph():
    return random_graph(150, 0.06, seed=7)


def _run(method, data, **overrides):
    spec = METHODS[method]
    config = make_config(method, {"attacks": "cn,aa", "utility": False, **overrides})
    return spec.run(config, data, seed=3, method=method)


@pytest.mark.parametrize("method", ["random-perturb", "dice", "edgerand", "lapgraph"])
def test_publishing_methods_release_a_graph_without_the_hidden_edges(graph, method):
    result = _run(method, graph)
    release = result.release
    assert isinstance(release, PublishedGraph) and release.num_nodes == graph.num_nodes
    assert set(result.metrics) == {"attack_auc_cn", "attack_auc_aa", "published_edges"}
    assert result.info["published_edges"] == release.num_edges
    # the publisher starts from G minus E_s and the LP test edges: a non-random method never
    # re-adds them, a random one only by chance (counted)
    assert result.info["sensitive_published"] <= (0 if method == "dice" else 10)
    assert "attack_seconds" in result.info and result.timings["total"] > 0
    if method in ("edgerand", "lapgraph"):
        assert result.privacy is not None and result.privacy.unit == "edge"
        assert result.privacy.epsilon == pytest.approx(4.0, abs=5e-3)
    else:
        assert result.privacy is None


def test_edgerand_keeps_and_adds_at_the_randomized_response_rates(graph):
    result = _run("edgerand", graph, epsilon=2.0)
    flip = 1 / (1 + math.exp(2.0))
    kept, input_edges = result.info["kept_input_edges"], result.info["input_edges"]
    assert kept / input_edges == pytest.approx(1 - flip, abs=0.06)
    assert result.info["expected_published_edges"] == pytest.approx(
        input_edges * (1 - flip) + (150 * 149 / 2 - input_edges) * flip)
    assert result.release.num_edges == pytest.approx(result.info["expected_published_edges"], rel=0.05)


def test_edgerand_refuses_a_release_larger_than_max_edges(graph):
    with pytest.raises(ConfigError, match="max_edges"):
        _run("edgerand", graph, epsilon=0.1, max_edges=1000)


def test_publishing_configs_validate_attacks_and_ratios():
    with pytest.raises(ConfigError, match="unknown attack"):
        make_config("dice", {"attacks": "cn,nope"})
    with pytest.raises(ConfigError, match="ratio"):
        make_config("random-perturb", {"ratio": 2})
    assert make_config("lapgraph", {"attacks": "none"}).attacks == "none"


def test_same_seed_same_split_for_every_method(graph):
    a, b = _run("random-perturb", graph, ratio=0.0), _run("dice", graph, ratio=0.0)
    assert np.array_equal(a.release.pairs, b.release.pairs)  # ratio 0: both publish the input graph
    assert a.metrics["attack_auc_cn"] == b.metrics["attack_auc_cn"]
