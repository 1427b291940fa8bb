"""The package's public names, and the attack suite on a released Data."""

import subprocess
import sys

import pytest
import torch

import graphpriv
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.testing.graphs import random_graph


def test_every_public_name_resolves():
    for name in graphpriv.__all__:
        assert getattr(graphpriv, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        graphpriv.nonsense  # noqa: B018


def test_import_graphpriv_loads_no_method():
    code = "import sys, graphpriv; print(any(m.startswith('graphpriv.methods') for m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"


def test_attack_runs_the_suite_on_a_released_data():
    graph = random_graph(40, 0.2, seed=3)
    hidden = graph.edge_index[:, :10]
    keep = torch.ones(graph.edge_index.size(1), dtype=torch.bool)
    for u, v in hidden.t().tolist():  # the release lacks the hidden links
        keep &= ~(((graph.edge_index[0] == u) & (graph.edge_index[1] == v))
                  | ((graph.edge_index[0] == v) & (graph.edge_index[1] == u)))
    released = graph.clone()
    released.edge_index = graph.edge_index[:, keep]
    negatives = torch.tensor([[0, 1, 2], [37, 38, 39]])
    aucs = graphpriv.attack(released, hidden, negatives, attacks="cn,ra")
    assert list(aucs) == ["cn", "ra"] and all(0.0 <= a <= 1.0 for a in aucs.values())
    with pytest.raises(ConfigError, match="unknown attack"):
        graphpriv.attack(released, hidden, negatives, attacks="psychic")
    with pytest.raises(DatasetError, match="pairs_neg"):
        graphpriv.attack(released, hidden, torch.tensor([[0], [99]]))
