import numpy as np
import pytest

from graphpriv.data.graph import pair_codes, to_csr, undirected_pairs
from graphpriv.linkpred.examples import sample_capped_negatives, training_links
from graphpriv.linkpred.projection import project_degree
from graphpriv.linkpred.subgraphs import Extractor, collate_dense, extract_subgraphs
from graphpriv.testing.graphs import random_graph


@pytest.mark.parametrize("theta", [1, 2, 5, 10])
def test_projection_bounds_degree_and_keeps_a_subset(theta):
    graph = random_graph(80, 0.15, seed=1)
    pairs = undirected_pairs(graph.edge_index)
    kept = project_degree(pairs, 80, theta=theta, rng=np.random.default_rng(0))
    assert np.bincount(kept.ravel(), minlength=80).max() <= theta
    assert set(pair_codes(kept, 80).tolist()) <= set(pair_codes(pairs, 80).tolist())
    again = project_degree(pairs, 80, theta=theta, rng=np.random.default_rng(0))
    assert np.array_equal(kept, again)


def test_projection_keeps_low_degree_graphs_and_rejects_bad_theta():
    pairs = np.array([[0, 1], [1, 2]])
    assert np.array_equal(project_degree(pairs, 3, theta=2, rng=np.random.default_rng(0)), pairs)
    with pytest.raises(ValueError, match="'theta' must be >= 1"):
        project_degree(pairs, 3, theta=0, rng=np.random.default_rng(0))


@pytest.mark.parametrize("lam,theta", [(1.0, 3), (1.0, 8), (2.0, 4), (0.5, 6)])
def test_negatives_are_capped_non_edges(lam, theta):
    graph = random_graph(100, 0.1, seed=2)
    pairs = project_degree(undirected_pairs(graph.edge_index), 100, theta=theta, rng=np.random.default_rng(1))
    neg = sample_capped_negatives(pairs, 100, lam=lam, theta=theta, rng=np.random.default_rng(2))
    assert (neg[0] < neg[1]).all()
    codes = pair_codes(neg, 100)
    assert np.unique(codes).size == codes.size
    assert not set(codes.tolist()) & set(pair_codes(pairs, 100).tolist())
    assert np.bincount(neg.ravel(), minlength=100).max() <= int(lam * theta)
    assert neg.shape[1] >= 0.8 * lam * pairs.shape[1]


def test_training_links_labels_and_collation():
    graph = random_graph(40, 0.2, seed=3)
    pairs = undirected_pairs(graph.edge_index)
    links, labels = training_links(pairs, 40, lam=1.0, theta=40, rng=np.random.default_rng(0))
    pos = set(pair_codes(pairs, 40).tolist())
    assert all((c in pos) == bool(y) for c, y in zip(pair_codes(links, 40).tolist(), labels))
    s = extract_subgraphs(to_csr(pairs, 40), links, labels, extractor=Extractor.PATH, k=3)
    (z, adj, mask), _ = collate_dense(s, np.arange(10), max_label=4)
    sizes = s.num_nodes_per_subgraph[:10]
    assert mask.sum(1).tolist() == sizes.tolist()
    assert int(z.max()) <= 4
    assert torch_equal_sym(adj)
    assert (adj.diagonal(dim1=1, dim2=2) == mask.float()).all()
    for b in range(10):
        n_edges = s.edge_ptr[b + 1] - s.edge_ptr[b]
        assert int(adj[b].sum()) == 2 * n_edges + sizes[b]


def torch_equal_sym(adj):
    return bool((adj == adj.transpose(1, 2)).all())


def test_uniform_training_links_draw_at_most_max_links_positives_and_as_many_non_edges():
    from graphpriv.linkpred.examples import uniform_training_links

    graph = random_graph(80, 0.1, seed=5)
    pairs = undirected_pairs(graph.edge_index)
    whole = uniform_training_links(pairs, 80, rng=np.random.default_rng(3))
    for cap in (None, pairs.shape[1], pairs.shape[1] + 5):  # no draw: the examples of every edge, unchanged
        links, labels = uniform_training_links(pairs, 80, rng=np.random.default_rng(3), max_links=cap)
        assert np.array_equal(links, whole[0]) and np.array_equal(labels, whole[1])
    links, labels = uniform_training_links(pairs, 80, rng=np.random.default_rng(3), max_links=20)
    assert links.shape == (2, 40) and labels.sum() == 20
    edges = {tuple(sorted(e)) for e in pairs.T.tolist()}
    pos = {tuple(sorted(e)) for e in links[:, labels == 1].T.tolist()}
    neg = {tuple(sorted(e)) for e in links[:, labels == 0].T.tolist()}
    assert len(pos) == 20 and pos <= edges and not neg & edges  # negatives avoid every edge, drawn or not


def test_capped_training_links_keep_max_links_positives_and_the_same_share_of_negatives():
    graph = random_graph(80, 0.1, seed=6)
    pairs = undirected_pairs(graph.edge_index)
    whole = training_links(pairs, 80, lam=1.0, theta=80, rng=np.random.default_rng(4))
    for cap in (None, pairs.shape[1], pairs.shape[1] + 5):  # no draw: every edge and negative, unchanged
        links, labels = training_links(pairs, 80, lam=1.0, theta=80, rng=np.random.default_rng(4), max_links=cap)
        assert np.array_equal(links, whole[0]) and np.array_equal(labels, whole[1])
    links, labels = training_links(pairs, 80, lam=1.0, theta=80, rng=np.random.default_rng(4), max_links=30)
    all_neg = {tuple(e) for e in whole[0][:, whole[1] == 0].T.tolist()}
    assert labels.sum() == 30
    assert int((labels == 0).sum()) == round(len(all_neg) * 30 / pairs.shape[1])
    edges = {tuple(sorted(e)) for e in pairs.T.tolist()}
    pos = {tuple(sorted(e)) for e in links[:, labels == 1].T.tolist()}
    neg = {tuple(e) for e in links[:, labels == 0].T.tolist()}
    assert len(pos) == 30 and pos <= edges
    assert len(neg) == int((labels == 0).sum()) and neg <= all_neg  # a subset of the whole graph's negatives


def test_a_private_fit_refuses_a_training_link_cap():
    from graphpriv.errors import ConfigError
    from graphpriv.methods.dplp_subgraph import DPLPLinkPredictor
    from graphpriv.methods.lapgraph_sgnn import LapGraphConfig

    graph = random_graph(40, 0.2, seed=3)
    config = LapGraphConfig(epsilon=4.0, max_train_links=10)
    model = DPLPLinkPredictor(random_state=0)
    with pytest.raises(ConfigError, match="max_train_links caps the training links of a model trained without DP"):
        model._train(config, undirected_pairs(graph.edge_index), undirected_pairs(graph.edge_index), 40,
                     train_edges=1, ledger=None, spent=None, info={}, rng=np.random.default_rng(0), val=None,
                     timer=None, progress=None)
