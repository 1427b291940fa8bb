import numpy as np
import torch

from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.linkpred.drnl import max_drnl_label
from graphpriv.linkpred.subgraphs import Extractor, collate_dense, extract_subgraphs
from graphpriv.nn.subgraph_gnn import SubgraphGNN, predict
from graphpriv.testing.graphs import random_graph


def test_k2_path_model_is_a_function_of_the_common_neighbour_count():
    """With k = 2 every subgraph is u, v and their common neighbours (all DRNL label 2), so any
    model's score depends on the common-neighbour count only: its best AUC is the CN heuristic's."""
    graph = random_graph(60, 0.15, seed=0)
    pairs = undirected_pairs(graph.edge_index)
    adj = to_csr(pairs, 60)
    rng = np.random.default_rng(0)
    links = rng.integers(0, 60, size=(2, 300))
    links = links[:, links[0] != links[1]]
    s = extract_subgraphs(adj, links, np.zeros(links.shape[1]), extractor=Extractor.PATH, k=2)
    torch.manual_seed(0)
    model = SubgraphGNN(max_drnl_label(2) + 1, num_layers=2)
    scores = predict(model, [collate_dense(s, np.arange(len(s)), max_label=max_drnl_label(2))[0]]).numpy()
    cn = np.asarray((adj @ adj)[links[0], links[1]]).ravel()
    assert np.array_equal(s.num_nodes_per_subgraph - 2, cn)
    for c in np.unique(cn):
        group = scores[cn == c]
        assert np.allclose(group, group[0], atol=1e-6)
    assert len(np.unique(np.round(scores, 6))) > 1
