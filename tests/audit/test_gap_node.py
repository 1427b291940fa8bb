"""The canary-node audit of GAP-NDP and ProGAP-NDP: correct runs pass, the noise at 1/100 of its
scale (DP-SGD's and the hops') is caught."""

import pytest

from graphpriv.audit import audit
from graphpriv.audit.gap_node import audit_gap_node
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.methods.gap import GAPClassifier, GAPNodeClassifier
from graphpriv.methods.progap import ProGAPNodeClassifier
from graphpriv.testing.graphs import labelled_sbm, random_graph

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def data():
    graph = labelled_sbm(300, 6, num_features=600, seed=0)  # 6 classes: few chance matches of a random label
    graph.x = (graph.x > 1.5).float()
    return graph


@pytest.mark.parametrize("estimator", [
    GAPNodeClassifier(epsilon=1.0, delta=2e-3, max_degree=10, encoder_epochs=60, epochs=2),
    ProGAPNodeClassifier(epsilon=1.0, delta=2e-3, max_degree=10, depth=1, epochs=60),
    GAPNodeClassifier(epsilon=1.0, delta=2e-3, max_degree=10, encoder_layers=0, epochs=60),
], ids=["gap-ndp", "progap-ndp", "gap-ndp-without-encoder"])
def test_correct_runs_pass_and_a_hundredfold_smaller_noise_is_caught(data, estimator):
    (correct,) = audit(estimator, data, canaries=100, seed=0, guesses=40)
    assert correct.unit == "node" and correct.passed and correct.epsilon_lower_bound <= correct.claimed_epsilon
    (broken,) = audit(estimator, data, canaries=100, seed=0, guesses=40, noise_scale=0.01)
    assert not broken.passed and broken.epsilon_lower_bound > broken.claimed_epsilon
    assert "NOISE SCALED BY 0.01" in broken.accounting and broken.claimed_epsilon == correct.claimed_epsilon


def test_bad_input(data):
    with pytest.raises(ConfigError, match="GAPNodeClassifier or ProGAPNodeClassifier"):
        audit_gap_node(GAPClassifier(), data)
    with pytest.raises(ConfigError, match="at least 2"):
        audit(GAPNodeClassifier(), data, canaries=1)
    with pytest.raises(DatasetError, match="x"):
        audit(GAPNodeClassifier(), random_graph(30, 0.2, seed=0))
    with pytest.raises(ConfigError, match="takes no option canary_edges"):
        audit(ProGAPNodeClassifier(), data, canary_edges=2)
