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


def test_sparse_batches_give_the_dense_forward_and_gradients():
    """The disjoint-union batch and the padded one: same logits and gradients for every backbone
    and depth, in eval mode and in training mode with the same dropout draws."""
    from graphpriv.linkpred.subgraphs import collate_sparse
    from graphpriv.nn.subgraph_gnn import bce_loss

    graph = random_graph(70, 0.08, seed=1)
    adj = to_csr(undirected_pairs(graph.edge_index), 70)
    rng = np.random.default_rng(0)
    links = rng.integers(0, 70, size=(2, 40))
    links = links[:, links[0] != links[1]]
    labels = rng.integers(0, 2, links.shape[1]).astype(float)
    for extractor, kw in ((Extractor.NEIGHBOURHOOD, {"h": 2}), (Extractor.PATH, {"k": 3})):
        s = extract_subgraphs(adj, links, labels, extractor=extractor, **kw)
        batch = np.arange(len(s))[::-1].copy()
        dense, y = collate_dense(s, batch, max_label=6)
        (sparse,), y2 = collate_sparse(s, batch, max_label=6)
        assert torch.equal(y, y2) and sparse.width == dense[0].size(1)
        for backbone in ("gcn", "sage", "gin", "dgcnn"):
            for layers in (1, 2):
                torch.manual_seed(0)
                model = SubgraphGNN(7, backbone=backbone, num_layers=layers, dropout=0.5)
                for training in (False, True):
                    model.train(training)
                    out = []
                    for inputs in (dense, (sparse,)):
                        torch.manual_seed(3)
                        model.zero_grad()
                        logits = model(*inputs)
                        bce_loss(logits, y).backward()
                        out.append((logits.detach(), [p.grad.clone() for p in model.parameters()]))
                    (a, ga), (b, gb) = out
                    assert torch.allclose(a, b, atol=1e-5), (backbone, layers, training)
                    for p, q in zip(ga, gb):
                        assert torch.allclose(p, q, atol=1e-5), (backbone, layers, training)
