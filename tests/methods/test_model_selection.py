"""Model selection on validation accuracy (``model_selection="best_val"``) for GAP, ProGAP, the GCN
and the feature-only MLP: the
restored module is exactly the one a shorter run ends at, the epochs are the first best ones, the
node-level classifiers and a protocol without validation nodes refuse it, and the store keys of
the runs stored before the setting existed do not move."""

import math

import numpy as np
import pytest
import torch

import graphpriv.methods.progap as progap_module
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.experiments.store import config_hash
from graphpriv.methods.base import no_progress
from graphpriv.methods.best_epoch import BestEpoch
from graphpriv.methods.gap import GAPClassifier, GAPConfig, GAPNodeClassifier
from graphpriv.methods.gcn import GCNClassifier
from graphpriv.methods.progap import ProGAPClassifier, ProGAPNodeClassifier
from graphpriv.methods.sage import SAGEClassifier
from graphpriv.methods.transductive_classifier import accuracy_of, train_full_batch

FAST = {"encoder_epochs": 12, "epochs": 12}


def _toy(epochs: int, validation: bool) -> tuple[torch.nn.Module, int, list[float]]:
    """A batch-normalised linear classifier trained ``epochs`` full-batch epochs on fixed data."""
    generator = torch.Generator().manual_seed(0)
    x, xv = torch.randn(60, 5, generator=generator), torch.randn(40, 5, generator=generator)
    y, yv = (x[:, 0] > 0).long(), (xv[:, 0] + 0.8 * xv[:, 1] > 0).long()
    torch.manual_seed(1)
    module = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 2))
    scores: list[float] = []
    score = accuracy_of(lambda: module(xv), yv)

    def record() -> float:
        scores.append(score())
        return scores[-1]
    epoch = train_full_batch(module, lambda: module(x), y, epochs=epochs, lr=0.05, weight_decay=0.0,
                             progress=no_progress, validation=record if validation else None)
    return module, epoch, scores


def test_best_val_restores_exactly_the_first_best_epoch_of_the_run():
    selected, epoch, scores = _toy(25, validation=True)
    assert len(scores) == 25 and epoch == int(np.argmax(scores)) + 1  # argmax: the first best epoch
    assert len(set(scores)) > 1  # the score moves, so the choice is a choice
    shorter, last, _ = _toy(epoch, validation=False)
    assert last == epoch and not selected.training
    for name, value in shorter.state_dict().items():  # batch-norm statistics included
        assert torch.equal(selected.state_dict()[name], value), name


def test_last_keeps_the_last_epoch_and_reads_no_validation():
    _, epoch, scores = _toy(7, validation=False)
    assert epoch == 7 and scores == []


def test_best_epoch_keeps_the_first_strict_best_and_the_mode_it_was_in():
    module = torch.nn.Linear(2, 1)
    values, read = iter([0.5, 0.7, 0.7, 0.6]), []

    def score() -> float:
        read.append((module.training, torch.is_grad_enabled()))
        return next(values)
    best = BestEpoch(module, score)
    assert best.restore() is None and best.epoch is None  # nothing offered: nothing loaded
    kept = {}
    for epoch in range(1, 5):
        module.train(epoch % 2 == 0)
        best.offer(epoch)
        assert module.training == (epoch % 2 == 0)  # back in the mode it was offered in
        kept[epoch] = module.weight.detach().clone()
        with torch.no_grad():
            module.weight.add_(1.0)
    assert read == [(False, False)] * 4  # scored in eval mode, without gradients
    assert (best.epoch, best.score) == (2, 0.7)  # the tie at epoch 3 keeps epoch 2
    assert best.restore() == 2 and torch.equal(module.weight, kept[2])


def test_best_epoch_never_keeps_nan_and_falls_back_to_the_initial_state_when_asked():
    module = torch.nn.Linear(2, 1)
    initial = module.weight.detach().clone()
    plain, fallback = BestEpoch(module, lambda: math.nan), BestEpoch(module, lambda: math.nan, keep_initial=True)
    assert fallback.epoch == 0 and plain.epoch is None
    for epoch in (1, 2):
        with torch.no_grad():
            module.weight.add_(1.0)
        assert math.isnan(plain.offer(epoch)) and math.isnan(fallback.offer(epoch))
    assert plain.restore() is None and torch.equal(module.weight, initial + 2.0)  # nothing kept, nothing loaded
    assert fallback.restore() == 0 and torch.equal(module.weight, initial)  # the initial parameters
    values = iter([math.nan, 0.4, math.nan])
    best = BestEpoch(module, lambda: next(values), keep_initial=True)
    for epoch in (1, 2, 3):
        with torch.no_grad():
            module.weight.add_(1.0)
        best.offer(epoch)
    assert best.restore() == 2 and torch.equal(module.weight, initial + 2.0) and best.score == 0.4


def _val(graph, train):
    rest = np.setdiff1d(np.flatnonzero(graph.y.numpy() >= 0), train)
    return rest[:60], rest[60:]


def test_gap_best_val_equals_a_last_fit_at_the_selected_epochs(graph, split):
    val, test = _val(graph, split[0])
    best = GAPClassifier(epsilon=4.0, model_selection="best_val", random_state=2, **FAST).fit(graph, split[0],
                                                                                              val_nodes=val)
    epochs = best.info_["selected_epochs"]
    assert set(epochs) == {"encoder", "classifier"} and all(1 <= e <= 12 for e in epochs.values())
    assert min(epochs.values()) < 12  # an earlier epoch was chosen: the twin below is not the same 12-epoch fit
    twin = GAPClassifier(epsilon=4.0, random_state=2, encoder_epochs=epochs["encoder"],
                         epochs=epochs["classifier"]).fit(graph, split[0], val_nodes=val)  # "last" ignores val
    assert "selected_epochs" not in twin.info_
    assert torch.equal(best.predict_proba(nodes=test), twin.predict_proba(nodes=test))
    assert best.privacy_report_ == twin.privacy_report_  # the labels it read cost no edge-level budget


def test_progap_best_val_ends_each_stage_at_its_first_best_validation_epoch(graph, split, monkeypatch):
    val, _ = _val(graph, split[0])
    seen: list[tuple[list[float], int]] = []

    def spy(*args, validation, **kwargs):
        scores: list[float] = []

        def record():
            scores.append(validation())
            return scores[-1]
        epoch = train_full_batch(*args, validation=record, **kwargs)
        seen.append((scores, epoch))
        return epoch
    monkeypatch.setattr(progap_module, "train_full_batch", spy)
    est = ProGAPClassifier(private=False, depth=2, model_selection="best_val", random_state=0, epochs=12).fit(
        graph, split[0], val_nodes=val)
    assert [epoch for _, epoch in seen] == [est.info_["selected_epochs"][f"stage {i}"] for i in range(3)]
    for scores, epoch in seen:
        assert len(scores) == 12 and epoch == int(np.argmax(scores)) + 1
    assert min(epoch for _, epoch in seen) < 12  # some stage ended before its last epoch
    final = float((est.predict(nodes=val) == graph.y[torch.from_numpy(val)]).float().mean())
    assert final == max(seen[-1][0])  # the released model is the last stage's best on validation


def test_bad_validation_input_is_refused_before_training(graph, split):
    val, _ = _val(graph, split[0])
    with pytest.raises(ConfigError, match="pass val_nodes to GAPClassifier.fit"):
        GAPClassifier(model_selection="best_val", **FAST).fit(graph, split[0])
    with pytest.raises(DatasetError, match="val_nodes and train_nodes share node"):
        GAPClassifier(model_selection="best_val", **FAST).fit(graph, split[0], val_nodes=split[0][:5])
    with pytest.raises(DatasetError, match="val_nodes is empty"):
        ProGAPClassifier(model_selection="best_val", epochs=2).fit(graph, split[0], val_nodes=[])
    unlabelled = graph.clone()
    unlabelled.y = graph.y.clone()
    unlabelled.y[int(val[0])] = -1
    with pytest.raises(DatasetError, match=f"val_nodes includes unlabelled node {int(val[0])}"):
        GAPClassifier(model_selection="best_val", **FAST).fit(unlabelled, split[0], val_nodes=val)
    with pytest.raises(ConfigError, match="model_selection: Input should be 'last' or 'best_val'"):
        GAPClassifier(model_selection="best_epoch")


@pytest.mark.parametrize("cls", [GAPNodeClassifier, ProGAPNodeClassifier])
def test_the_node_level_classifiers_refuse_best_val(cls):
    with pytest.raises(ConfigError, match="validation nodes' labels .* node-level DP protects"):
        cls(model_selection="best_val")


def test_the_protocol_passes_its_validation_nodes_and_refuses_a_split_without_them(graph):
    from graphpriv.evaluation.transductive import run_gap

    result = run_gap(GAPConfig(epsilon=4.0, model_selection="best_val", **FAST), graph, seed=1)
    assert set(result.info["selected_epochs"]) == {"encoder", "classifier"}
    with pytest.raises(ConfigError, match="this split has no labelled one \\(val_ratio 0.0\\)"):
        run_gap(GAPConfig(model_selection="best_val", val_ratio=0.0, **FAST), graph, seed=1)


def test_runs_stored_before_the_setting_keep_their_keys():
    # the key of node-leaderboard-edge's GAP-EDP eps 1 runs on fb100-mit8, stored before the setting existed
    stored = GAPConfig(epsilon=1.0, hidden=16, hops=3, delta=1e-6).model_dump(mode="json")
    assert config_hash(stored) == "0581a4864e7e713e"
    before = GAPConfig().model_dump(mode="json")
    before.pop("model_selection")
    assert config_hash(GAPConfig().model_dump(mode="json")) == config_hash(before)
    assert config_hash(GAPConfig(model_selection="best_val").model_dump(mode="json")) != config_hash(before)


def test_gcn_best_val_equals_a_last_fit_at_the_selected_epoch(graph, split):
    val, test = _val(graph, split[0])
    best = GCNClassifier(model_selection="best_val", epochs=40, random_state=1).fit(graph, split[0], val_nodes=val)
    (epoch,) = best.info_["selected_epochs"].values()
    assert 1 <= epoch < 40  # dropout runs in training only: the shorter run draws the same masks
    twin = GCNClassifier(epochs=epoch, random_state=1).fit(graph, split[0])
    assert torch.equal(best.predict_proba(nodes=test), twin.predict_proba(nodes=test))


def test_the_feature_mlp_ends_at_its_first_best_pass(graph, split, monkeypatch):
    import graphpriv.methods.sage as sage_module

    val, _ = _val(graph, split[0])
    scores: list[float] = []
    score_of = sage_module._row_accuracy

    def spy(*args):
        score = score_of(*args)

        def record(model):
            scores.append(score(model))
            return scores[-1]
        return record
    monkeypatch.setattr(sage_module, "_row_accuracy", spy)
    est = SAGEClassifier(max_degree=0, private=False, model_selection="best_val", epochs=15, batch_size=32,
                         random_state=0).fit(graph, split[0], val_nodes=val)
    assert len(scores) == 15 and est.info_["selected_epochs"]["training"] == int(np.argmax(scores)) + 1
    assert float((est.predict(nodes=val) == graph.y[torch.from_numpy(val)]).float().mean()) == max(scores)
    with pytest.raises(ConfigError, match="keep model_selection='last' for the private fit"):
        SAGEClassifier(max_degree=0, model_selection="best_val")
