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


@pytest.mark.parametrize("backbone,sort_k", [("gcn", 10), ("sage", 10), ("gin", 10), ("dgcnn", 10), ("dgcnn", 24)])
@pytest.mark.parametrize("extractor,kw", [(Extractor.PATH, {"k": 3}), (Extractor.NEIGHBOURHOOD, {"h": 1})])
def test_sparse_clipped_sum_equals_the_vmap_reference(backbone, sort_k, extractor, kw):
    # DGCNN at sort_k 24: its second convolution has several windows per subgraph
    s = _subgraphs(extractor, **kw)
    sizes = torch.from_numpy(s.num_nodes_per_subgraph)
    indices = torch.arange(len(s)).flip(0)
    for layers in (1, 2, 3):
        torch.manual_seed(0)
        model = SubgraphGNN(7, backbone=backbone, num_layers=layers, dropout=0.5, sort_k=sort_k)
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


@pytest.mark.parametrize("backbone", ["gcn", "dgcnn"])
def test_one_subgraph_and_subgraphs_of_two_nodes_only(backbone):
    # B = 1, and a batch whose nodes are exactly its target nodes (T = 2B: the node rows and the
    # target rows have the same count)
    s = _subgraphs(Extractor.PATH, k=3)
    sizes = s.num_nodes_per_subgraph
    torch.manual_seed(0)
    model = SubgraphGNN(7, backbone=backbone, num_layers=2, dropout=0.0)
    for idx in (torch.tensor([3]), torch.from_numpy(np.flatnonzero(sizes == 2))):
        assert len(idx) >= 1
        inputs, y = collate_dense(s, idx, max_label=6)
        grads, _ = per_sample_gradients(model, bce_loss, inputs, y)
        (batch,), y2 = collate_sparse(s, idx, max_label=6)
        assert batch.z.numel() == (2 * len(idx) if len(idx) > 1 else int(sizes[3]))
        summed, _, norms = sparse_clipped_sum(model, batch, y2, 0.3)
        want = per_sample_norms(grads)
        assert torch.allclose(norms, want, rtol=1e-5)
        factor = (0.3 / want).clamp(max=1.0)
        for name, g in grads.items():
            clipped = (g * factor.view(-1, *[1] * (g.dim() - 1))).sum(0)
            assert torch.allclose(summed[name], clipped, atol=1e-6, rtol=1e-4), name


def test_a_row_convolution_that_is_not_a_map_of_each_row_is_refused():
    from graphpriv.nn.subgraph_gnn import RowConv1d

    assert RowConv1d(1, 16, kernel_size=9, stride=9).weight.shape == (16, 1, 9)
    for kw in ({"stride": 1}, {"stride": 9, "padding": 1}, {"stride": 9, "dilation": 2}):
        with pytest.raises(ValueError, match="RowConv1d is a map of each row"):
            RowConv1d(1, 16, kernel_size=9, **kw)
    with pytest.raises(ValueError, match="in_channels 1"):
        RowConv1d(2, 16, kernel_size=9, stride=9)


def test_a_convolution_on_unbatched_input_is_refused_not_mis_clipped():
    # a 1-D convolution's windows are read from [B, C, L]; an unbatched [C, L] input whose C happens
    # to equal a row count of the batch (here its 2B = 16 target nodes) must not be taken for rows
    s = _subgraphs(Extractor.PATH, k=3)
    torch.manual_seed(0)
    model = SubgraphGNN(7, backbone="dgcnn", num_layers=2, dropout=0.0)
    (batch,), y = collate_sparse(s, torch.arange(8), max_label=6)
    assert model.conv2.in_channels == 2 * batch.num_subgraphs
    model.conv2.register_forward_pre_hook(lambda module, args: (args[0][0],))  # drop the batch dimension
    with pytest.raises(TypeError, match="a map ran on input of shape"):
        sparse_clipped_sum(model, batch, y, 1.0)


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
