"""The canary audit: its statistics against known values, and the three verdicts issue 10 asks for."""

import math

import pytest
from scipy.stats import binom

from graphpriv.errors import ConfigError
from graphpriv.privacy.audit import (
    audit_edge_release,
    clopper_pearson,
    epsilon_lower_bound_cp,
    epsilon_lower_bound_one_run,
)
from graphpriv.testing.broken import broken_noise
from graphpriv.testing.graphs import random_graph


@pytest.fixture(scope="module")
def graph():
    return random_graph(400, 0.02, seed=3)


def test_clopper_pearson_known_values():
    assert clopper_pearson(0, 10, 0.05)[0] == 0.0 and clopper_pearson(10, 10, 0.05)[1] == 1.0
    # 0 of n: the upper end solves (1 - p)^n = alpha / 2
    assert clopper_pearson(0, 20, 0.05)[1] == pytest.approx(1 - 0.025 ** (1 / 20))
    lo, hi = clopper_pearson(50, 100, 0.05)
    assert lo == pytest.approx(0.3983, abs=1e-4) and hi == pytest.approx(0.6017, abs=1e-4)


def test_one_run_bound_is_the_binomial_tail_inversion():
    eps = epsilon_lower_bound_one_run(800, 1000)
    p = 1 / (1 + math.exp(-eps))
    assert binom.sf(799, 1000, p) == pytest.approx(0.05, rel=1e-3)
    assert epsilon_lower_bound_one_run(500, 1000) == 0.0  # chance level proves nothing
    p_all = 0.05 ** (1 / 1000)  # all 1000 right: p^1000 = 0.05
    assert epsilon_lower_bound_one_run(1000, 1000) == pytest.approx(math.log(p_all / (1 - p_all)), rel=1e-4)
    assert epsilon_lower_bound_cp(90, 10, 10, 90) > epsilon_lower_bound_cp(75, 25, 25, 75) > 0 == epsilon_lower_bound_cp(55, 45, 45, 55)


def test_correct_edgerand_stays_within_its_claim_and_is_nearly_tight(graph):
    for epsilon in (1.0, 3.0):
        report = audit_edge_release("edgerand", graph, epsilon=epsilon, canaries=4000, seed=1)
        assert report.passed and report.epsilon_lower_bound <= epsilon
        assert report.epsilon_lower_bound > 0.8 * epsilon  # the presence attack is optimal for RR


def test_broken_noise_is_caught_and_a_non_private_release_shows_a_large_bound(graph):
    with broken_noise(0.01):
        broken = audit_edge_release("edgerand", graph, epsilon=1.0, canaries=4000, seed=2)
        broken_lap = audit_edge_release("lapgraph", graph, epsilon=1.0, canaries=2000, seed=2)
    assert not broken.passed and broken.epsilon_lower_bound > 4 * broken.claimed_epsilon
    assert not broken_lap.passed
    correct_lap = audit_edge_release("lapgraph", graph, epsilon=1.0, canaries=2000, seed=2)
    assert correct_lap.passed
    open_release = audit_edge_release("random-perturb", graph, canaries=4000, seed=2)
    assert open_release.claimed_epsilon == math.inf and open_release.epsilon_lower_bound > 6


def test_bad_input(graph):
    with pytest.raises(ConfigError, match="dplp-ps"):
        audit_edge_release("dplp-ps", graph)
    with pytest.raises(ValueError):
        epsilon_lower_bound_one_run(11, 10)


def test_one_run_p_value_with_delta():
    from graphpriv.privacy.audit import one_run_p_value

    pure = one_run_p_value(1000, 1000, 800, 1.0)
    assert pure == pytest.approx(binom.sf(799, 1000, 1 / (1 + math.exp(-1.0))))
    with_delta = one_run_p_value(1000, 1000, 800, 1.0, delta=1e-5)
    assert with_delta > pure  # delta can only make a count more plausible
    # abstaining guessers: r < m; delta's term scales with m
    assert one_run_p_value(2000, 500, 400, 1.0, 1e-5) > one_run_p_value(1000, 500, 400, 1.0, 1e-5)
    assert epsilon_lower_bound_one_run(800, 1000, delta=1e-4) < epsilon_lower_bound_one_run(800, 1000)
    with pytest.raises(ValueError):
        one_run_p_value(10, 20, 5, 1.0)


def test_node_level_dp_mlp_audit_passes_and_catches_broken_noise():
    from graphpriv.privacy.audit import audit_dp_mlp
    from graphpriv.testing.graphs import labelled_sbm

    data = labelled_sbm(300, 3, num_features=600, seed=0)
    data.x = (data.x > 1.5).float()  # sparse binary features, like bag-of-words
    kwargs = {"epsilon": 1.0, "canaries": 100, "epochs": 60, "guesses": 40}
    correct = audit_dp_mlp(data, **kwargs)
    assert correct.unit == "node" and correct.passed and correct.epsilon_lower_bound <= correct.claimed_epsilon
    with broken_noise(0.01):
        broken = audit_dp_mlp(data, **kwargs)
    assert not broken.passed and broken.epsilon_lower_bound > broken.claimed_epsilon


def test_audit_cli_exit_codes(tmp_path):
    import numpy as np
    from typer.testing import CliRunner

    from graphpriv.cli import app

    graph = random_graph(300, 0.03, seed=4)
    ei = graph.edge_index.numpy()
    path = tmp_path / "g.csv"
    np.savetxt(path, ei[:, ei[0] < ei[1]].T, fmt="%d", delimiter=",", header="src,dst")
    runner = CliRunner()
    ok = runner.invoke(app, ["audit", "edgerand", "-d", str(path), "--epsilon", "1", "--canaries", "2000", "--json"])
    assert ok.exit_code == 0 and '"passed": true' in ok.output
    broken = runner.invoke(app, ["audit", "edgerand", "-d", str(path), "--epsilon", "1", "--canaries", "2000",
                                 "--test-noise-factor", "0.01"])
    assert broken.exit_code == 1 and "FAILED" in broken.output


def test_run_audit_dispatch_names_what_is_audited(graph):
    from graphpriv.privacy.audits import AUDITABLE, run_audit

    assert {"edgerand", "lapgraph", "dplp-ps", "dplp-ns", "dp-mlp", "dpar-gm", "privdpr"} <= set(AUDITABLE)
    with pytest.raises(ConfigError, match="no audit covers 'seal'.*dplp-ps"):
        run_audit("seal", graph)
    with pytest.raises(ConfigError, match="PrivDPR"):
        run_audit("edgerand", graph, attack="gradient")
    (report,) = run_audit("edgerand", graph, epsilon=2.0, canaries=500, seed=3)
    assert report.canaries == 500 and report.claimed_epsilon == pytest.approx(2.0)
