"""GAP's aggregation perturbation: the sensitivity by brute force, the hops against a dense
reference, the accounting against dp-accounting."""

import itertools
import math

import numpy as np
import pytest
import torch
from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant

from graphpriv.privacy.accountant import Ledger
from graphpriv.propagation.aggregation_perturbation import (
    aggregate,
    calibrate_aggregation_noise,
    edge_sensitivity,
    epsilon_under_relation,
    perturbed_aggregations,
)


def _edge_index(pairs, directed=False):
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2).T
    if not directed:
        pairs = np.concatenate([pairs, pairs[::-1]], axis=1)
    return torch.from_numpy(pairs.copy())


def _unit_rows(n, d, seed):
    h = torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return torch.nn.functional.normalize(h, dim=1)


@pytest.mark.parametrize("seed", range(6))
def test_one_edge_moves_one_hop_by_at_most_the_sensitivity(seed):
    """Every undirected edge added or removed on small random graphs, with unit rows: the hop's
    change has Frobenius norm sqrt 2 (the bound, reached); one direction alone moves it by 1."""
    rng = np.random.default_rng(seed)
    n = 6
    all_pairs = list(itertools.combinations(range(n), 2))
    edges = [p for p in all_pairs if rng.random() < 0.4]
    h = _unit_rows(n, 3, seed)
    base = aggregate(h, _edge_index(edges))
    worst_undirected = worst_directed = 0.0
    for pair in all_pairs:
        neighbour = [e for e in edges if e != pair] if pair in edges else [*edges, pair]
        change = torch.linalg.norm(aggregate(h, _edge_index(neighbour)) - base).item()
        assert change <= edge_sensitivity("undirected") + 1e-12
        worst_undirected = max(worst_undirected, change)
        one_way = torch.cat([_edge_index(edges), _edge_index([pair], directed=True)], dim=1)
        worst_directed = max(worst_directed, torch.linalg.norm(aggregate(h, one_way) - base).item())
    assert worst_undirected == pytest.approx(math.sqrt(2)) and worst_directed == pytest.approx(1.0)


def test_without_noise_the_hops_are_normalised_powers_of_the_adjacency():
    edges = [(0, 1), (1, 2), (2, 3), (0, 2)]
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64)  # node 4 isolated
    out = perturbed_aggregations(x, _edge_index(edges), hops=3, noise_multiplier=0.0,
                                 generator=torch.Generator().manual_seed(0))
    adj = np.zeros((5, 5))
    for u, v in edges:
        adj[u, v] = adj[v, u] = 1
    h = x.numpy() / np.linalg.norm(x.numpy(), axis=1, keepdims=True)
    assert out.shape == (5, 4, 4) and np.allclose(out[..., 0].numpy(), h)
    for k in range(1, 4):
        s = adj @ h
        norms = np.linalg.norm(s, axis=1, keepdims=True)
        h = np.divide(s, norms, out=np.zeros_like(s), where=norms > 0)
        assert np.allclose(out[..., k].numpy(), h)
    assert (out[4, :, 1:] == 0).all()  # an isolated node aggregates nothing, before and after normalising


def test_the_noise_is_the_sensitivity_times_the_multiplier_and_spent_on_the_ledger():
    edges = [(0, 1), (1, 2)]
    x = torch.randn(3, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    ledger = Ledger("edge", delta=1e-5)
    out = perturbed_aggregations(x, _edge_index(edges), hops=2, noise_multiplier=3.0,
                                 generator=torch.Generator().manual_seed(5), ledger=ledger)
    g = torch.Generator().manual_seed(5)  # the same draws by hand
    h = torch.nn.functional.normalize(x, dim=1)
    for k in (1, 2):
        noise = torch.randn((3, 2), generator=g, dtype=torch.float64) * 3.0 * math.sqrt(2)
        h = torch.nn.functional.normalize(aggregate(h, _edge_index(edges)) + noise, dim=1)
        assert torch.allclose(out[..., k], h)
    reference = RdpAccountant().compose(dp_event.GaussianDpEvent(3.0), 2).get_epsilon(1e-5)
    assert ledger.epsilon() == pytest.approx(reference, rel=1e-9)
    no_noise = Ledger("edge", delta=1e-5)
    perturbed_aggregations(x, _edge_index(edges), hops=2, noise_multiplier=0.0,
                           generator=torch.Generator(), ledger=no_noise)
    assert no_noise.phases == []  # GAP-INF spends nothing


def test_calibration_meets_the_budget_and_the_directed_reading_is_smaller():
    z = calibrate_aggregation_noise(epsilon=4.0, delta=1e-5, hops=2)
    spent = RdpAccountant().compose(dp_event.GaussianDpEvent(z), 2).get_epsilon(1e-5)
    assert 3.9 < spent <= 4.0
    undirected = epsilon_under_relation(z, 2, 1e-5, calibrated_for="undirected", relation="undirected")
    directed = epsilon_under_relation(z, 2, 1e-5, calibrated_for="undirected", relation="directed")
    assert undirected == pytest.approx(spent, rel=1e-9) and directed < undirected
    same_std = RdpAccountant().compose(dp_event.GaussianDpEvent(z * math.sqrt(2)), 2).get_epsilon(1e-5)
    assert directed == pytest.approx(same_std, rel=1e-9)


@pytest.mark.parametrize("kwargs, message", [
    ({"hops": 0}, "'hops' must be an integer >= 1"),
    ({"noise_multiplier": -1.0}, "'noise_multiplier' must be a finite number >= 0"),
    ({"noise_multiplier": math.inf}, "'noise_multiplier' must be a finite number >= 0"),
    ({"relation": "node"}, "'relation' must be one of undirected, directed"),
])
def test_bad_arguments_are_refused(kwargs, message):
    args = {"hops": 2, "noise_multiplier": 1.0, **kwargs}
    with pytest.raises(ValueError, match=message):
        perturbed_aggregations(torch.ones(2, 2), _edge_index([(0, 1)]), generator=torch.Generator(), **args)
    if "hops" in kwargs:
        with pytest.raises(ValueError, match=message):
            calibrate_aggregation_noise(epsilon=1.0, delta=1e-5, hops=0)


@pytest.mark.parametrize("seed", range(6))
def test_one_node_moves_the_other_rows_of_one_hop_by_at_most_sqrt_d(seed):
    """Every node removed from small random graphs of degree <= D, with unit rows: the other nodes'
    rows move by at most sqrt(D) (reached by a node with D neighbours); the removed node's own row,
    which the bound leaves to its own DP-SGD example, can move by up to D."""
    from graphpriv.propagation.aggregation_perturbation import node_sensitivity
    from graphpriv.propagation.degree_bound import max_degree_of

    rng = np.random.default_rng(seed)
    n = 7
    edges = [p for p in itertools.combinations(range(n), 2) if rng.random() < 0.45]
    d = max(1, max_degree_of(_edge_index(edges), n))
    h = _unit_rows(n, 3, seed)
    base = aggregate(h, _edge_index(edges))
    worst = 0.0
    for v in range(n):
        rest = [e for e in edges if v not in e]
        after = aggregate(h, _edge_index(rest) if rest else torch.zeros(2, 0, dtype=torch.long))
        others = [u for u in range(n) if u != v]
        change = torch.linalg.norm(after[others] - base[others]).item()
        assert change <= node_sensitivity(d) + 1e-12
        worst = max(worst, change)
    assert worst == pytest.approx(math.sqrt(d))
    same = torch.nn.functional.normalize(torch.ones(n, 3, dtype=torch.float64), dim=1)  # every row alike
    star = aggregate(same, _edge_index([(0, u) for u in range(1, d + 1)]))
    assert torch.linalg.norm(star[0]).item() == pytest.approx(d)  # the own row: D, not sqrt(D)


def test_the_node_sensitivity_scales_the_noise_and_bad_bounds_are_refused():
    from graphpriv.propagation.aggregation_perturbation import node_sensitivity, noisy_aggregate

    h = torch.zeros(50, 400, dtype=torch.float64)
    noisy = noisy_aggregate(h, torch.zeros(2, 0, dtype=torch.long), noise_multiplier=0.5,
                            generator=torch.Generator().manual_seed(0), sensitivity=node_sensitivity(16))
    assert noisy.std().item() == pytest.approx(0.5 * 4, rel=0.02)
    for bad in (0, -3, 2.0, True):
        with pytest.raises(ValueError, match="max_degree"):
            node_sensitivity(bad)
