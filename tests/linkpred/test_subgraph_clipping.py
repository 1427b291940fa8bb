"""The sparse clipped sum of a subgraph GNN equals the vmap reference, norms and all."""

import numpy as np
import pytest
import torch

from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.linkpred.subgraph_clipping import sparse_clipped_sum, subgraph_clipped_sum
from graphpriv.linkpred.subgraphs import Extractor, collate_dense, collate_sparse, extract_subgraphs
from graphpriv.nn.subgraph_gnn import SubgraphGNN, bce_loss
from graphpriv.privacy.engine import clipped_gradient_sum, per_sample_gradients, per_sample_norms
from graphpriv.testing.graphs import random_graph


def _subgraphs(extractor, **kw):
    graph = random_graph(70, 0.08, seed=1)
    adj = to_csr(undirected_pairs(graph.edge_index), 70)
    rng = np.random.default_rng(0)
    links = rng.integers(0, 70, size=(2, 48))
    links = links[:, links[0] != links[1]]
    labels = rng.integers(0, 2, links.shape[1]).astype(np.float32)
    return extract_subgraphs(adj, links, labels, extractor=extractor, **kw)


@pytest.mark.parametrize("backbone", ["gcn", "sage", "gin", "dgcnn"])
@pytest.mark.parametrize("extractor,kw", [(Extractor.PATH, {"k": 3}), (Extractor.NEIGHBOURHOOD, {"h": 1})])
def test_sparse_clipped_sum_equals_the_vmap_reference(backbone, extractor, kw):
    s = _subgraphs(extractor, **kw)
    sizes = torch.from_numpy(s.num_nodes_per_subgraph)
    indices = torch.arange(len(s)).flip(0)
    for layers in (1, 2, 3):
        torch.manual_seed(0)
        model = SubgraphGNN(7, backbone=backbone, num_layers=layers, dropout=0.5)
        for training, buckets, clip in ((False, 1, 1e6), (True, 1, 0.05), (True, 3, 0.05)):
            model.train(training)
            torch.manual_seed(5)
            want, want_loss = clipped_gradient_sum(model, bce_loss, lambda i: collate_dense(s, i, max_label=6),
                                                   indices, clip, sizes=sizes, buckets=buckets)
            torch.manual_seed(5)
            fast = subgraph_clipped_sum(model, lambda i: collate_sparse(s, i, max_label=6), clip, sizes=sizes,
                                        buckets=buckets)
            got, got_loss = fast(indices)
            assert set(got) == set(want)
            for name in want:
                assert torch.allclose(got[name], want[name], atol=1e-5, rtol=1e-4), (backbone, layers, training, name)
            assert torch.allclose(got_loss, want_loss, atol=1e-6)


@pytest.mark.parametrize("backbone", ["gcn", "dgcnn"])
def test_norms_are_the_per_example_gradient_norms_and_clipping_bounds_each_example(backbone):
    s = _subgraphs(Extractor.PATH, k=3)
    idx = torch.arange(len(s))
    torch.manual_seed(0)
    model = SubgraphGNN(7, backbone=backbone, num_layers=2, dropout=0.0)
    inputs, y = collate_dense(s, idx, max_label=6)
    grads, _ = per_sample_gradients(model, bce_loss, inputs, y)
    (batch,), y2 = collate_sparse(s, idx, max_label=6)
    _, _, norms = sparse_clipped_sum(model, batch, y2, 1.0)
    assert torch.allclose(norms, per_sample_norms(grads), rtol=1e-5)
    # one example alone, clipped to C: its sum has norm min(C, its norm)
    clip = float(norms.min()) / 2
    for b in (0, 7):
        (one,), yb = collate_sparse(s, idx[b:b + 1], max_label=6)
        summed, _, _ = sparse_clipped_sum(model, one, yb, clip)
        total = torch.cat([g.flatten() for g in summed.values()]).norm()
        assert total <= clip * (1 + 1e-5) and total >= clip * 0.99


@pytest.mark.parametrize("backbone", ["gcn", "dgcnn"])
def test_a_non_finite_example_contributes_exactly_zero(backbone):
    s = _subgraphs(Extractor.PATH, k=3)
    idx = torch.arange(6)
    torch.manual_seed(0)
    model = SubgraphGNN(7, backbone=backbone, num_layers=2, dropout=0.0)
    (batch,), y = collate_sparse(s, idx, max_label=6)
    (rest,), y_rest = collate_sparse(s, idx[1:], max_label=6)
    clean, _, _ = sparse_clipped_sum(model, rest, y_rest, 0.5)
    y = y.clone()
    y[0] = float("nan")  # example 0's loss, and so its gradient, is NaN
    summed, _, norms = sparse_clipped_sum(model, batch, y, 0.5)
    assert torch.isnan(norms[0]) and torch.isfinite(norms[1:]).all()
    for name, g in summed.items():
        assert torch.allclose(g, clean[name], atol=1e-6), name


def test_dgcnn_norms_are_the_per_example_gradient_norms_with_a_wide_dense_layer():
    # SEAL's DGCNN shape: a wider dense layer and a larger sort_k (several windows of the second
    # convolution per subgraph), every parameter's per-example gradient from the vmap reference
    s = _subgraphs(Extractor.NEIGHBOURHOOD, h=1)
    idx = torch.arange(len(s))
    torch.manual_seed(0)
    model = SubgraphGNN(7, backbone="dgcnn", num_layers=3, dropout=0.0, sort_k=24, dense=48)
    inputs, y = collate_dense(s, idx, max_label=6)
    grads, _ = per_sample_gradients(model, bce_loss, inputs, y)
    (batch,), y2 = collate_sparse(s, idx, max_label=6)
    summed, _, norms = sparse_clipped_sum(model, batch, y2, 1e9)
    assert torch.allclose(norms, per_sample_norms(grads), rtol=1e-4)
    for name, g in grads.items():
        assert torch.allclose(summed[name], g.sum(0), atol=1e-5, rtol=1e-4), name


def test_a_strided_convolution_is_refused_before_training():
    model = SubgraphGNN(7, backbone="dgcnn", num_layers=2)
    model.conv2 = torch.nn.Conv1d(16, 32, kernel_size=5, stride=2)
    with pytest.raises(TypeError, match="conv2 is a 1-D convolution with a stride"):
        subgraph_clipped_sum(model, lambda i: None, 1.0)


def test_a_layer_shared_by_two_places_is_refused_not_mis_clipped():
    # one module called twice: the example's gradient is the sum of both calls' parts, whose norm
    # is not the sum of the parts' norms; the sparse sum refuses rather than clip wrongly
    s = _subgraphs(Extractor.PATH, k=3)
    torch.manual_seed(0)
    model = SubgraphGNN(7, backbone="gcn", num_layers=3, dropout=0.0)
    model.convs[2] = model.convs[1]
    (batch,), y = collate_sparse(s, torch.arange(4), max_label=6)
    with pytest.raises(TypeError, match="a map ran twice in one forward"):
        sparse_clipped_sum(model, batch, y, 1.0)
