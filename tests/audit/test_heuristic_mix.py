"""The audit of the private heuristic mixture through its own fit: a correct mechanism passes, the
noise fault is caught, the canaries' draws are the mechanism's, the black-box attack runs."""

import numpy as np
import pytest
import torch

from graphpriv.audit import audit
from graphpriv.audit.heuristic_mix import ShiftCanaries, audit_heuristic_mix
from graphpriv.errors import ConfigError
from graphpriv.methods.heuristic_mix import HeuristicMixLinkPredictor
from graphpriv.testing.graphs import labelled_sbm


@pytest.fixture(scope="module")
def graph():
    data = labelled_sbm(60, 2, p_in=0.2, num_features=2, seed=1)
    data.name = "sbm60"
    return data


@pytest.mark.parametrize("epsilon", [1.0, 4.0])
def test_a_correct_mechanism_passes_and_the_fault_is_caught(graph, epsilon):
    model = HeuristicMixLinkPredictor(epsilon=epsilon, angles=8)
    (correct,) = audit(model, graph, seed=3)
    assert correct.passed and correct.claimed_epsilon == epsilon and correct.epsilon_lower_bound < epsilon
    (faulty,) = audit(model, graph, seed=3, noise_scale=0.01)
    assert not faulty.passed and faulty.epsilon_lower_bound > epsilon


def test_without_noise_the_raised_target_always_wins():
    shifts = ShiftCanaries(np.array([True, False, True, False]))
    utility = torch.tensor([10.0, 9.0, 7.0, 3.0])
    shifts.draw(utility, 4.0, lambda u: int(torch.argmax(u)))
    # the target is the direction nearest to 4 below the best: 7 (gap 3) rather than 9 (1) or 3 (7)
    assert (shifts.targets == 2).all()
    np.testing.assert_array_equal(shifts.chosen, [2, 0, 2, 0])


def test_the_canaries_draw_with_the_fits_own_mechanism(graph):
    """At noise_scale 0 the mechanism is the argmax: each inserted canary's draw is its target
    (raised by Delta U, the others lowered by it: it leads by about Delta U), each left-out one the
    fit's own choice."""
    shifts = ShiftCanaries(np.arange(10) % 2 == 0)
    from graphpriv.privacy.hooks import AuditHook

    model = HeuristicMixLinkPredictor(angles=8, random_state=0).fit(graph, audit_hook=AuditHook(0.0, canaries=shifts))
    np.testing.assert_array_equal(shifts.chosen[shifts.inserted], shifts.targets[shifts.inserted])
    assert (shifts.chosen[~shifts.inserted] == model.choice_).all()


def test_black_box_edge_canaries_run_and_report(graph):
    reports = audit_heuristic_mix(HeuristicMixLinkPredictor(epsilon=1.0, angles=8), graph, canaries=50,
                                  edge_canaries=6, seed=1)
    assert len(reports) == 2 and all(r.passed for r in reports)
    assert "canary edge" in reports[1].notes[-1]


def test_bad_options_are_refused(graph):
    model = HeuristicMixLinkPredictor()
    with pytest.raises(ConfigError, match="at least"):
        audit(model, graph, canaries=3)
    with pytest.raises(ConfigError, match="edge_canaries"):
        audit(model, graph, edge_canaries=-1)
    with pytest.raises(ConfigError, match="takes no option"):
        audit(model, graph, guesses=3)
