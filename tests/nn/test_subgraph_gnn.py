import numpy as np
import torch

from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.linkpred.drnl import max_drnl_label
from graphpriv.linkpred.subgraphs import Extractor, collate_dense, extract_subgraphs
from graphpriv.nn.subgraph_gnn import SubgraphGNN, predict
from graphpriv.testing.graphs import random_graph


def _graph_and_links(num_nodes, p, seed, link_seed, num_links):
    """A random graph's CSR adjacency, ``num_links`` random node pairs of it (self-pairs dropped), and the
    numpy generator that drew them."""
    adj = to_csr(undirected_pairs(random_graph(num_nodes, p, seed=seed).edge_index), num_nodes)
    rng = np.random.default_rng(link_seed)
    links = rng.integers(0, num_nodes, size=(2, num_links))
    return adj, links[:, links[0] != links[1]], rng


def test_k2_path_model_is_a_function_of_the_common_neighbour_count():
    """With k = 2 every subgraph is u, v and their common neighbours (all DRNL label 2), so any
    model's score depends on the common-neighbour count only: its best AUC is the CN heuristic's."""
    adj, links, _ = _graph_and_links(60, 0.15, 0, 0, 300)
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

    adj, links, rng = _graph_and_links(70, 0.08, 1, 0, 40)
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


def test_gcn_adjacency_is_the_coalesced_a_plus_i_bit_for_bit():
    """The batch's CSR A + I, gathered from each node's presorted row, is the matrix a COO build of
    every directed edge and self-loop gives after coalescing: same rows, columns and values."""
    from graphpriv.linkpred.subgraphs import collate_sparse

    adj, links, _ = _graph_and_links(60, 0.1, 4, 1, 30)
    for extractor, kw in ((Extractor.NEIGHBOURHOOD, {"h": 2}), (Extractor.PATH, {"k": 3})):
        s = extract_subgraphs(adj, links, np.zeros(links.shape[1]), extractor=extractor, **kw)
        for batch in (np.arange(len(s)), np.array([5, 0, 3, 3, 11]), np.array([7])):
            (b,), _ = collate_sparse(s, batch, max_label=6)
            t = b.z.numel()
            dis = (b.degree + 1).clamp(min=1).pow(-0.5)
            loops = torch.arange(t)
            index = torch.cat([torch.stack([b.dst, b.src]), loops.repeat(2, 1)], dim=1)
            values = torch.cat([dis[b.dst] * dis[b.src], dis * dis])
            want = torch.sparse_coo_tensor(index, values, (t, t)).coalesce().to_sparse_csr()
            got = b.gcn_adjacency
            assert torch.equal(got.crow_indices(), want.crow_indices())
            assert torch.equal(got.col_indices(), want.col_indices())
            assert torch.equal(got.values(), want.values())


def test_sage_and_gin_matrices_are_the_batch_a_and_a_plus_i():
    """SAGE's A and GIN's A + I, on the A + I pattern: exactly the 0/1 matrices of the batch's
    directed edges (and self-loops), and symmetric, as the symmetric product's backward assumes."""
    from graphpriv.linkpred.subgraphs import collate_sparse

    adj, links, _ = _graph_and_links(60, 0.1, 5, 2, 30)
    s = extract_subgraphs(adj, links, np.zeros(links.shape[1]), extractor=Extractor.PATH, k=3)
    (b,), _ = collate_sparse(s, np.array([4, 0, 9, 9, 2]), max_label=6)
    t = b.z.numel()
    a = torch.zeros(t, t)
    a[b.dst, b.src] = 1.0
    assert torch.equal(b.adjacency.to_dense(), a) and torch.equal(a, a.T)
    assert torch.equal(b.loop_adjacency.to_dense(), a + torch.eye(t))
    assert torch.equal(b.degree, a.sum(1))


def test_dgcnn_readout_is_the_two_conv1d_layers():
    """The readout's linear map of each sorted row computes what SEAL's first Conv1d (kernel =
    stride = total) computes on the flattened rows, with the same parameters and gradients."""
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = SubgraphGNN(7, backbone="dgcnn", num_layers=3, sort_k=23)
    h = torch.randn(4, 30, 3 * 32 + 1, requires_grad=True)
    mask = torch.ones(4, 30, dtype=torch.bool)
    mask[1, 20:] = False
    mask[3, 5:] = False  # fewer real rows than sort_k
    out = model._readout(model._dense_rows(h, mask))
    grads = torch.autograd.grad(out.square().sum(), [h, model.conv1.weight, model.conv2.weight])
    # the reference: Conv1d on the flattened sorted rows
    score = h[..., -1].masked_fill(~mask, float("-inf"))
    top = torch.topk(score, model.sort_k, dim=1).indices
    pooled = torch.gather(h, 1, top.unsqueeze(-1).expand(-1, -1, h.size(-1))) * torch.gather(mask, 1, top).unsqueeze(-1)
    ref = F.relu(F.conv1d(pooled.reshape(4, 1, -1), model.conv1.weight, model.conv1.bias, stride=model.conv1.stride))
    ref = F.relu(model.conv2(F.max_pool1d(ref, 2, 2))).flatten(1)
    ref_grads = torch.autograd.grad(ref.square().sum(), [h, model.conv1.weight, model.conv2.weight])
    assert out.shape == ref.shape == (4, 32 * (23 // 2 - 4))
    assert torch.allclose(out, ref, atol=1e-5)
    for g, r in zip(grads, ref_grads):
        assert torch.allclose(g, r, atol=1e-4)


def test_sort_rows_are_the_rows_sort_pooling_takes_from_the_dense_layout():
    """The sparse batch's SortPooling picks, per subgraph, the rows the dense layout's topk picks,
    in the same order (ties included), with zero rows where a subgraph is smaller than sort_k: bit
    for bit."""
    from graphpriv.linkpred.subgraphs import collate_sparse

    adj, links, _ = _graph_and_links(80, 0.1, 6, 4, 40)
    s = extract_subgraphs(adj, links, np.zeros(links.shape[1]), extractor=Extractor.PATH, k=3)
    (b,), _ = collate_sparse(s, np.arange(len(s))[::-1].copy(), max_label=6)
    sizes = b.ptr.diff()
    assert int(sizes.max()) > 10  # sort_k 10 cuts the larger subgraphs, the others pad the smaller ones
    for sort_k in (10, int(sizes.max()), int(sizes.max()) + 3):
        model = SubgraphGNN(7, backbone="dgcnn", num_layers=2, sort_k=sort_k)
        h = torch.randn(b.z.numel(), 5, generator=torch.Generator().manual_seed(sort_k))
        h[:, -1] = torch.round(h[:, -1])  # many ties on the score, between rows that differ elsewhere
        width = max(b.width, model.sort_k)
        dense = h.new_zeros(b.num_subgraphs, width, 5).index_put((b.owner, b.local), h)
        mask = torch.zeros(b.num_subgraphs, width, dtype=torch.bool)
        mask[b.owner, b.local] = True
        want = model._dense_rows(dense, mask)
        got = model._sort_rows([h], b)
        assert got.shape == (b.num_subgraphs, model.sort_k, 5) and torch.equal(got, want)
        assert torch.equal(model._sort_rows(list(h.split([2, 1, 2], dim=1)), b), want)  # layers, not their concatenation
        assert bool((got[sizes < model.sort_k, -1] == 0).all())  # a small subgraph's last rows are zero
