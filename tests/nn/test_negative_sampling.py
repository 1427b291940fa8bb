"""NegativeSampler and python_random_sample against PyG's negative_sampling and Python's random.sample:
the same output and the same state of Python's ``random`` afterwards."""

import random

import numpy as np
import pytest
import torch
from torch_geometric.utils import negative_sampling

from graphpriv.nn import negative_sampling as sampling_module
from graphpriv.nn.negative_sampling import NegativeSampler, python_random_sample


@pytest.mark.parametrize("population, k", [
    (1_000_003, 1), (1_000_003, 6), (1_000_003, 5_000), (2**20, 70_000),  # a power of two: no word rejected
    (2**20 + 1, 70_000),  # just above one: about half the words rejected
    (3 * 2**29, 200_000),  # 31-bit values, repeats rare
    (2**31 + 1, 3), (65_536 * 65_535, 1_000),  # 32-bit values (no shift), N = 65,536's population
    (16_406, 5_461),  # just above the set size: the first batch of words falls short and is topped up
    (300, 250),  # random.sample's small-population branch (not replayed)
    (2**33, 10),  # words of more than 32 bits (not replayed)
    (50, 0),
])
def test_python_random_sample_is_random_sample(population, k):
    random.seed(population + k)
    expected = random.sample(range(population), k)
    after = random.getrandbits(32)
    random.seed(population + k)
    got = python_random_sample(population, k)
    assert got.dtype == np.int64 and got.tolist() == expected
    assert random.getrandbits(32) == after


def test_python_random_sample_keeps_gauss_state():
    random.seed(3)
    random.gauss(0, 1)  # leaves a second normal pending in the state
    state = random.getstate()
    expected = random.sample(range(10**6), 1000), random.gauss(0, 1)
    random.setstate(state)
    assert (python_random_sample(10**6, 1000).tolist(), random.gauss(0, 1)) == expected


def _graph(num_nodes, num_edges, seed):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, num_nodes, (2, num_edges), generator=generator)


@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("num_nodes, num_edges, k", [
    (2, 1, 1), (5, 20, 4), (30, 100, 50),
    (100, 9_000, 500),  # random.sample's small-population branch (not replayed)
    (30, 400, 5),  # dense: a draw's first try falls short, so a second (replayed) try avoids the first's
    (129, 200, 4_850),  # the replayed sample's first batch of words falls short and is topped up
    (5, 20, 10),  # the whole population each try, three tries short of k: fewer negatives, as PyG
    (10, 200, 200),  # every pair an edge: nothing to draw
    (1_500, 20_000, 10_000),
])
def test_negative_sampler_is_pyg_negative_sampling(monkeypatch, dense, num_nodes, num_edges, k):
    monkeypatch.setattr(sampling_module, "DENSE_MASK_MAX", 2**26 if dense else 0)
    edge_index = _graph(num_nodes, num_edges, num_nodes)
    random.seed(11)
    expected = [negative_sampling(edge_index, num_nodes=num_nodes, num_neg_samples=k) for _ in range(3)]
    after = random.random()
    random.seed(11)
    sampler = NegativeSampler(edge_index, num_nodes)
    assert (sampler.edge_mask is not None) == dense
    got = [sampler.draw(k) for _ in range(3)]
    assert random.random() == after
    for want, have in zip(expected, got):
        assert have.dtype == torch.long and torch.equal(want, have)


def test_negatives_avoid_edges_and_self_loops():
    edge_index = _graph(40, 300, 1)
    random.seed(0)
    neg = NegativeSampler(edge_index, 40).draw(400)
    edges = set(map(tuple, edge_index.t().tolist()))
    pairs = list(map(tuple, neg.t().tolist()))
    assert neg.size(1) == 400 and len(set(pairs)) == 400
    assert not edges & set(pairs) and all(a != b for a, b in pairs)
