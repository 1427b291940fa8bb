"""Audits by method id (the front door of ``graphpriv audit`` and the audit tables): the estimator a
method id names is the one audited, and the command line's exit codes."""

import functools
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from graphpriv.audit import AUDITS
from graphpriv.errors import ConfigError, PrivacyError
from graphpriv.experiments import auditing
from graphpriv.experiments.auditing import AUDITABLE, check_audit_options, run_audit
from graphpriv.experiments.registry import ESTIMATORS
from graphpriv.testing.graphs import random_graph


@pytest.fixture(scope="module")
def graph():
    return random_graph(400, 0.02, seed=3)


def test_every_auditable_id_names_an_audited_estimator_class():
    assert {"edgerand", "lapgraph", "random-perturb", "dplp-ps", "dplp-ns", "dp-mlp", "dpar-gm", "dpar-nodp",
            "privdpr", "dpr", "gap-ndp", "progap-ndp"} <= set(AUDITABLE)
    assert "seal" not in AUDITABLE and "cn" not in AUDITABLE  # SEAL is a non-private subclass: exact classes
    assert all(ESTIMATORS[m] in AUDITS for m in AUDITABLE)


def test_run_audit_dispatch(graph):
    with pytest.raises(ConfigError, match="no audit covers 'seal'.*dplp-ps"):
        run_audit("seal", graph)
    with pytest.raises(ConfigError, match="PrivDPR"):
        run_audit("edgerand", graph, attack="gradient")
    with pytest.raises(ConfigError, match="random-perturb"):
        run_audit("edgerand", graph, ratio=0.5)
    (report,) = run_audit("edgerand", graph, epsilon=2.0, canaries=500, seed=3)
    assert report.canaries == 500 and report.claimed_epsilon == pytest.approx(2.0) and report.method == "edgerand"
    (faulty,) = run_audit("edgerand", graph, epsilon=1.0, canaries=2000, seed=3, noise_scale=0.01)
    assert not faulty.passed
    (open_release,) = run_audit("edgerand", graph, epsilon=1.0, canaries=500, seed=3, private=False)
    assert open_release.claimed_epsilon == math.inf and open_release.passed


def test_a_users_epsilon_above_the_maximum_is_refused():
    with pytest.raises(PrivacyError, match="maximum 100"):
        check_audit_options("edgerand", epsilon=1e9, canaries=None, seed=0, epochs=None, ratio=None, attack=None)
    with pytest.raises(ConfigError, match="at least 2"):
        check_audit_options("edgerand", epsilon=1.0, canaries=1, seed=0, epochs=None, ratio=None, attack=None)


def test_audit_cli_exit_codes(tmp_path, monkeypatch):
    from graphpriv.cli import app

    ei = random_graph(300, 0.03, seed=4).edge_index.numpy()
    path = tmp_path / "g.csv"
    np.savetxt(path, ei[:, ei[0] < ei[1]].T, fmt="%d", delimiter=",", header="src,dst")
    runner = CliRunner()
    args = ["audit", "edgerand", "-d", str(path), "--epsilon", "1", "--canaries", "2000"]
    ok = runner.invoke(app, [*args, "--json"])
    assert ok.exit_code == 0 and '"passed": true' in ok.output
    assert runner.invoke(app, [*args, "--test-noise-factor", "0.01"]).exit_code == 2  # the hidden option is gone
    # a broken mechanism (the fault passed in, as the audit's own tests do) fails the command with exit 1
    monkeypatch.setattr(auditing, "run_audit", functools.partial(run_audit, noise_scale=0.01))
    broken = runner.invoke(app, args)
    assert broken.exit_code == 1 and "FAILED" in broken.output


def test_a_non_private_method_is_refused_unless_asked_to_measure_its_leak(graph):
    with pytest.raises(ConfigError, match="mlp is non-private.*--non-private.*dp-mlp"):
        check_audit_options("mlp", epsilon=1.0, canaries=None, seed=0, epochs=None, ratio=None, attack=None)
    with pytest.raises(ConfigError, match="random-perturb is non-private"):
        run_audit("random-perturb", graph)
    (leak,) = run_audit("random-perturb", graph, canaries=500, ratio=0.0, private=False)
    assert leak.claimed_epsilon == math.inf and leak.epsilon_lower_bound > 4


def test_too_few_canaries_to_say_anything_is_refused_before_any_work(graph):
    with pytest.raises(ConfigError, match="give 4 guesses, fewer than the 6.*use at least 6 canaries"):
        run_audit("edgerand", graph, canaries=4)
    with pytest.raises(ConfigError, match="give 2 guesses, fewer than the 5.*use at least 30 canaries"):
        run_audit("dp-mlp", graph, canaries=10)


def test_dplp_rank_is_audited_by_method_id():
    from graphpriv.data import load

    assert {"dplp-rank", "rank-exponential"} <= set(AUDITABLE)
    with pytest.raises(ConfigError, match="rank-nonprivate is non-private"):
        check_audit_options("rank-nonprivate", epsilon=1.0, canaries=None, seed=0, epochs=None, ratio=None,
                            attack=None)
    with pytest.raises(ConfigError, match="--epochs"):
        check_audit_options("dplp-rank", epsilon=1.0, canaries=None, seed=0, epochs=3, ratio=None, attack=None)
    (report,) = run_audit("rank-exponential", load("usair"), epsilon=0.5, canaries=200, seed=0)
    assert report.unit == "protected_pair" and report.claimed_epsilon == pytest.approx(0.5)  # one draw: top_k 1
    (faulty,) = run_audit("rank-exponential", load("usair"), epsilon=0.5, canaries=200, seed=0, noise_scale=0.0)
    assert faulty.claimed_epsilon == math.inf


def test_an_audit_reports_the_phases_of_its_audited_fit(graph):
    phases = {}

    def progress(done, total, **info):
        phases.setdefault(info.get("phase"), []).append((done, total))

    run_audit("dplp-ps", graph, epsilon=2.0, canaries=40, seed=1, epochs=1, progress=progress)
    assert {"audited training", "audited extraction"} <= set(phases)
    for reports in phases.values():
        assert reports[-1][0] == reports[-1][1] and all(0 <= d <= t for d, t in reports)  # counts, to the end
