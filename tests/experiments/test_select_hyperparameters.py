"""scripts/select_hyperparameters.py: validation accuracy on selection seeds only, best first."""

import importlib.util
import json
from pathlib import Path

import pytest
import torch
from torch_geometric.data import Data

from graphpriv.experiments.runner import run_method
from graphpriv.testing.graphs import labelled_sbm

_SPEC = importlib.util.spec_from_file_location(
    "select_hyperparameters", Path(__file__).parents[2] / "scripts" / "select_hyperparameters.py")
selection = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(selection)


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("sel") / "sbm.pt"
    data = labelled_sbm(150, 3, p_in=0.1, signal=0.3, seed=2)
    torch.save(Data(edge_index=data.edge_index, x=data.x, y=data.y, num_nodes=data.num_nodes), path)
    return path


def test_the_best_setting_has_the_highest_mean_validation_accuracy(graph_file, tmp_path):
    grid = selection.parse_grid(["epochs=2,40", "hidden=8"])
    assert grid == {"epochs": [2, 40], "hidden": [8]}
    scored = selection.select("gcn", str(graph_file), grid, seeds=[100, 101])
    assert [s for s, _ in scored] == sorted((s for s, _ in scored), reverse=True)
    for score, settings in scored:  # each score is the mean val_accuracy of the runs, recomputed
        runs = [run_method("gcn", str(graph_file), seed=seed, overrides=settings) for seed in (100, 101)]
        assert score == pytest.approx(sum(r.metrics["val_accuracy"] for r in runs) / 2)
    out = tmp_path / "best.json"
    selection.main(["gcn", "-d", str(graph_file), "--grid", "epochs=2,40", "--seeds", "100", "--json", str(out)])
    assert json.loads(out.read_text())["best"] in ({"epochs": 2}, {"epochs": 40})


def test_a_stored_selection_is_read_back_run_by_run(graph_file, tmp_path, monkeypatch):
    from graphpriv.experiments import runner
    from graphpriv.experiments.store import ResultStore

    store = tmp_path / "selection.sqlite"
    first = selection.select("gcn", str(graph_file), {"epochs": [2, 5]}, seeds=[100, 101], store=store)
    assert ResultStore(store).count("ok") == 4
    fresh = selection.select("gcn", str(graph_file), {"epochs": [2, 5]}, seeds=[100, 101])
    assert first == fresh  # storing changes no score

    def no_training(*args, **kwargs):
        raise AssertionError("a stored run was run again")
    monkeypatch.setattr(runner, "run_prepared", no_training)
    assert selection.select("gcn", str(graph_file), {"epochs": [2, 5]}, seeds=[100, 101], store=store) == first
    with pytest.raises(AssertionError, match="run again"):  # a run not in the store does run
        selection.select("gcn", str(graph_file), {"epochs": [3]}, seeds=[100], store=store)


def test_reported_seeds_and_bad_grids_are_refused(graph_file):
    with pytest.raises(SystemExit, match="selection seeds must be >= 100"):
        selection.select("gcn", str(graph_file), {"epochs": [2]}, seeds=[0, 100])
    with pytest.raises(SystemExit, match="KEY=V1,V2"):
        selection.parse_grid(["epochs"])
    with pytest.raises(SystemExit, match="no val_accuracy"):
        selection.select("dp-mlp", str(graph_file), {"epochs": [1]}, seeds=[100])
