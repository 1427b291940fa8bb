"""The baseline pieces: chance AUC@K against brute force, the majority class, the comparison and
the warning a run that does not beat its baseline prints."""

import itertools
import math

import numpy as np
import pytest
from rich.console import Console

from graphpriv.evaluation.baselines import majority_class
from graphpriv.methods.base import Baseline, Result
from graphpriv.ranking.metrics import auc_at_k, chance_auc_at_k


@pytest.mark.parametrize(("n", "positives", "k"), [(1, 0, 1), (1, 1, 3), (4, 1, 1), (4, 2, 2), (5, 2, 3),
                                                   (6, 3, 4), (6, 5, 6), (6, 0, 2), (5, 3, 9)])
def test_chance_auc_at_k_is_the_mean_over_every_ranking(n, positives, k):
    labels = [1] * positives + [0] * (n - positives)
    values = [auc_at_k(np.array(order), min(k, n)) for order in itertools.permutations(labels)]
    assert chance_auc_at_k(positives, n, k) == pytest.approx(float(np.mean(values)), abs=1e-12)


def test_chance_auc_at_k_refuses_impossible_counts():
    with pytest.raises(ValueError, match="num_positives"):
        chance_auc_at_k(5, 4, 2)
    with pytest.raises(ValueError, match="k >= 1"):
        chance_auc_at_k(1, 4, 0)


def test_majority_class_counts_labelled_nodes_only():
    # training labels: class 2 three times, class 0 twice, two unlabelled (-1)
    baseline = majority_class(np.array([2, 0, 2, -1, 0, 2, -1]), np.array([2, 1, -1, 2, 0]))
    assert (baseline.name, baseline.metric, baseline.value) == ("majority class", "accuracy", 0.5)
    # a tie goes to the smallest label
    assert majority_class(np.array([3, 1, 3, 1]), np.array([1, 1, 3])).value == pytest.approx(2 / 3)
    assert math.isnan(majority_class(np.array([-1]), np.array([0])).value)


def test_beaten_by_follows_the_direction():
    higher = Baseline(name="chance", metric="test_auc", value=0.5)
    lower = Baseline(name="input graph", metric="attack_auc_cn", value=0.9, better="lower")
    reference = Baseline(name="input graph", metric="lp_auc", value=0.9, better="reference")
    assert higher.beaten_by(0.51) is True and higher.beaten_by(0.5) is False
    assert lower.beaten_by(0.89) is True and lower.beaten_by(0.92) is False
    assert reference.beaten_by(0.1) is None and higher.beaten_by(float("nan")) is None
    share = Baseline(name="majority class", metric="accuracy", value=173 / 599)
    assert float(np.float32(173 / 599)) > 173 / 599 and share.beaten_by(float(np.float32(173 / 599))) is False  # a tie


def _result(accuracy: float) -> Result:
    return Result(method="dpar-gm", dataset="cora_ml", seed=0, config={}, metrics={"accuracy": accuracy},
                  baselines=[Baseline(name="majority class", metric="accuracy", value=0.289)])


def test_a_run_below_its_baseline_warns_and_one_above_does_not():
    from graphpriv.experiments.display import print_result

    assert _result(0.149).baseline_warnings() == ["accuracy 0.149 is not above the majority class (0.289)"]
    assert _result(0.7).baseline_warnings() == []
    console = Console(record=True, width=120)
    print_result(_result(0.149), console)
    text = console.export_text()
    assert "warning: no better than a trivial baseline: accuracy 0.149 is not above the majority class" in text
    assert "baseline: majority class (accuracy)" in text and "28.90 % (not beaten)" in text
    console = Console(record=True, width=120)
    print_result(_result(0.7), console)
    assert "warning" not in console.export_text()


def test_baselines_survive_the_store(tmp_path):
    from graphpriv.experiments.store import ResultStore

    store = ResultStore(tmp_path / "r.sqlite")
    store.append(_result(0.149))
    (back,) = store.results()
    assert back.baselines == _result(0.149).baselines
    assert back.baseline_warnings() == _result(0.149).baseline_warnings()
