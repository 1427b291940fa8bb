"""GCNClassifier, the non-private ceiling: it learns, predicts any graph of its feature width, and
survives save / load."""

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphpriv.errors import ConfigError, DatasetError
from graphpriv.methods.gcn import GCNClassifier


def test_gcn_learns_predicts_and_round_trips(graph, tmp_path):
    perm = np.random.default_rng(0).permutation(graph.num_nodes)
    train, test = np.sort(perm[:120]), np.sort(perm[120:])
    est = GCNClassifier(epochs=60, random_state=0).fit(graph, train)
    assert est.privacy_report_ is None and est.privacy_statement_.startswith("non-private")
    accuracy = float((est.predict(nodes=test) == graph.y[torch.from_numpy(test)]).float().mean())
    assert accuracy > 0.9
    same = Data(x=graph.x, edge_index=graph.edge_index, num_nodes=graph.num_nodes)
    assert torch.allclose(est.predict_proba(same), est.predict_proba())  # data=None is the fitted graph
    alone = Data(x=graph.x, edge_index=torch.zeros(2, 0, dtype=torch.long), num_nodes=graph.num_nodes)
    assert not torch.allclose(est.predict_proba(alone), est.predict_proba())  # another graph, not a cached one
    assert torch.allclose(est.predict_proba(same), est.predict_proba())
    loaded = GCNClassifier.load(est.save(tmp_path / "gcn.pt"))
    assert torch.equal(loaded.predict_proba(nodes=test), est.predict_proba(nodes=test))


def test_bad_input_is_refused(graph):
    with pytest.raises(ConfigError, match="val_ratio \\+ test_ratio must be < 1"):
        GCNClassifier(val_ratio=0.9, test_ratio=0.1)
    with pytest.raises(DatasetError, match="x"):
        GCNClassifier().fit(Data(edge_index=graph.edge_index, y=graph.y, num_nodes=graph.num_nodes))
    fitted = GCNClassifier(epochs=2).fit(graph)
    with pytest.raises(DatasetError, match="features per node"):
        fitted.predict(Data(x=torch.ones(3, 5), edge_index=torch.zeros(2, 0, dtype=torch.long), num_nodes=3))
