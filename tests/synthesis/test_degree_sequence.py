"""DP-1K's mechanism: the sorted degree sequence's sensitivity by brute force, the noise scale, Hay et
al.'s constrained inference, and the Chung-Lu construction against its closed-form edge law."""

import itertools

import numpy as np
import pytest
from dp_accounting import dp_event

from graphpriv.data.graph import pair_codes
from graphpriv.synthesis.degree_sequence import (
    SORTED_DEGREE_SENSITIVITY,
    chung_lu_pairs,
    constrained_inference,
    degrees,
    release_degree_sequence,
    sorted_degrees,
)


def _all_graphs(n: int):
    """Every graph on n nodes as ``(pairs [2, m], the absent cells)``."""
    cells = list(itertools.combinations(range(n), 2))
    for mask in range(1 << len(cells)):
        edges = [c for k, c in enumerate(cells) if mask >> k & 1]
        yield np.array(edges, dtype=np.int64).T.reshape(2, -1), [c for c in cells if c not in edges]


def test_sorted_degree_sequence_has_l1_sensitivity_exactly_two_on_every_graph_on_5_nodes():
    n, changes = 5, []
    for pairs, absent in _all_graphs(n):
        s = sorted_degrees(pairs, n)
        for e in absent:
            bigger = np.concatenate([pairs, np.array(e).reshape(2, 1)], axis=1)
            changes.append(np.abs(sorted_degrees(bigger, n) - s).sum())  # add e, or remove it from `bigger`
    assert len(changes) == 2**10 * 10 // 2  # every (graph, neighbour) pair once
    assert max(changes) == SORTED_DEGREE_SENSITIVITY == 2 and min(changes) == 2  # the bound, attained always


def test_sorted_degree_sensitivity_on_random_graphs_and_removals():
    rng = np.random.default_rng(4)
    for _ in range(200):
        n = int(rng.integers(3, 25))
        cells = np.array(list(itertools.combinations(range(n), 2))).T
        pairs = cells[:, rng.random(cells.shape[1]) < rng.random()]
        if pairs.shape[1] == 0:
            continue
        drop = int(rng.integers(pairs.shape[1]))
        smaller = np.delete(pairs, drop, axis=1)
        assert np.abs(sorted_degrees(pairs, n) - sorted_degrees(smaller, n)).sum() == 2
        # the node-aligned vector moves by 2 as well; the unsorted sum by exactly 2
        assert np.abs(degrees(pairs, n) - degrees(smaller, n)).sum() == 2


def test_sorted_degrees_known_values():
    pairs = np.array([[0, 0, 0, 1], [1, 2, 3, 2]])  # a star on 0 plus the edge 1-2; node 4 isolated
    assert degrees(pairs, 5).tolist() == [3, 2, 2, 1, 0]
    assert sorted_degrees(pairs, 5).tolist() == [0, 1, 2, 2, 3]


def test_constrained_inference_known_values():
    # pool-adjacent-violators: (0.4, -3) -> -1.3 twice, (10.6, 7) -> 8.8 twice; rint; clip to [0, N-1 = 3]
    assert constrained_inference(np.array([0.4, -3.0, 10.6, 7.0]), 4).tolist() == [0, 0, 3, 3]
    assert constrained_inference(np.array([3.0, 1.0, 2.0]), 10).tolist() == [2, 2, 2]
    assert constrained_inference(np.array([0.2, 1.6, 1.4, 5.0]), 10).tolist() == [0, 2, 2, 5]
    assert constrained_inference(np.empty(0), 0).size == 0


def _min_max_isotonic(y: np.ndarray) -> np.ndarray:
    """The least-squares non-decreasing fit by its min-max closed form (Hay et al. 2009; Barlow et al. 1972):
    s_i = max_{j <= i} min_{k >= i} mean(y[j..k])."""
    n = y.size
    c = np.concatenate([[0.0], np.cumsum(y)])

    def mean(j: int, k: int) -> float:
        return (c[k + 1] - c[j]) / (k - j + 1)

    return np.array([max(min(mean(j, k) for k in range(i, n)) for j in range(i + 1)) for i in range(n)])


def test_constrained_inference_is_the_least_squares_isotonic_fit():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(2, 40))
        noisy = np.sort(rng.integers(0, n, n)) + rng.laplace(0, 3.0, n)
        got = constrained_inference(noisy, n)
        reference = np.clip(np.rint(_min_max_isotonic(noisy)), 0, n - 1)
        assert got.dtype == np.int64 and np.array_equal(got, reference)
        assert (np.diff(got) >= 0).all() and got.min() >= 0 and got.max() <= n - 1


def test_release_uses_laplace_of_scale_two_over_epsilon():
    rng = np.random.default_rng(1)
    n = 50
    pairs = np.array([c for c in itertools.combinations(range(n), 2) if rng.random() < 0.2]).T
    released, event = release_degree_sequence(pairs, n, epsilon=0.5, rng=np.random.default_rng(9))
    manual = sorted_degrees(pairs, n) + np.random.default_rng(9).laplace(0.0, 2 / 0.5, size=n)
    assert np.array_equal(released, constrained_inference(manual, n))
    assert event == dp_event.LaplaceDpEvent(1 / 0.5)  # scale / sensitivity = (2 / eps) / 2
    exact, _ = release_degree_sequence(pairs, n, epsilon=1e6, rng=rng)
    assert np.array_equal(exact, sorted_degrees(pairs, n))  # almost no noise: the true sorted degrees


@pytest.mark.parametrize("kwargs,match", [({"epsilon": 0.0}, "'epsilon' must be a finite number > 0"),
                                          ({"epsilon": float("nan")}, "'epsilon' must be a finite number > 0"),
                                          ({"num_nodes": 2}, r"node ids in \[0, 2\)")])
def test_release_bad_arguments(kwargs, match):
    args = {"num_nodes": 4, "epsilon": 1.0, **kwargs}
    with pytest.raises(ValueError, match=match):
        release_degree_sequence(np.array([[0], [3]]), args.pop("num_nodes"), rng=np.random.default_rng(0), **args)


def test_chung_lu_draws_the_erased_poisson_law():
    """Each pair {u, v} is an edge independently with probability 1 - exp(-w_u w_v / S): the mean degree and
    the pair frequencies over 3000 graphs match it."""
    w = np.array([0, 1, 1, 2, 3, 5, 8, 8, 12, 20])
    S, n, reps = w.sum(), w.size, 3000
    prob = 1 - np.exp(-np.outer(w, w) / S)
    np.fill_diagonal(prob, 0.0)
    rng = np.random.default_rng(6)
    freq = np.zeros((n, n))
    for _ in range(reps):
        pairs = chung_lu_pairs(w, rng)
        assert pairs.dtype == np.int64 and (pairs[0] < pairs[1]).all()
        assert (np.diff(pair_codes(pairs, n)) > 0).all()  # distinct, sorted
        freq[pairs[0], pairs[1]] += 1
    freq = (freq + freq.T) / reps
    assert np.abs(freq - prob).max() < 4 * np.sqrt(0.25 / reps)
    assert freq[0].sum() == 0  # a node of weight 0 gets no edge
    expected_degree = prob.sum(axis=1)
    assert np.allclose(freq.sum(axis=1), expected_degree, atol=0.15)
    assert (expected_degree <= w * (1 - w / S) + 1e-12).all()  # the erasure's loss, hubs most
    assert expected_degree[-1] < w[-1] - 5  # the hub of weight 20 (of S = 60) falls far short


def test_chung_lu_edge_cases():
    rng = np.random.default_rng(0)
    assert chung_lu_pairs(np.zeros(5, dtype=np.int64), rng).shape == (2, 0)
    assert chung_lu_pairs(np.array([3], dtype=np.int64), rng).shape == (2, 0)
    with pytest.raises(ValueError, match="non-negative integers"):
        chung_lu_pairs(np.array([1, -1, 2]), rng)
    with pytest.raises(ValueError, match="non-negative integers"):
        chung_lu_pairs(np.array([1.5, 2.0]), rng)
