"""PrivGraph's mechanism: every phase's sensitivity by brute force (every pair of small random
graphs toggled), phase 2's exact output law and privacy loss, the pure-DP event against binary
randomised response, Norm-Sub against the paper's loop, the samplers against their laws."""

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from dp_accounting.privacy_accountant import NeighboringRelation
from scipy import stats

from graphpriv.data.graph import decode_pairs, pair_codes
from graphpriv.synthesis import privgraph as pg
from graphpriv.synthesis.privgraph import (
    PrivGraphRelease,
    adjust_communities,
    chung_lu_within,
    community_statistics,
    em_probabilities,
    em_rate,
    expected_chung_lu_edges,
    grouped_distinct,
    initial_communities,
    inter_community_pairs,
    neighbour_counts,
    norm_sub,
    privgraph_release,
    pure_dp_event,
    random_supernodes,
    reconstruct,
    supergraph_counts,
)


def random_pairs(n: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """G(n, p) as [2, m] pairs u < v sorted by code."""
    codes = np.flatnonzero(rng.random(n * (n - 1) // 2) < p)
    return decode_pairs(codes, n)


def toggled(pairs: np.ndarray, n: int):
    """Every neighbour of the graph: each of the n(n-1)/2 pairs added (absent) or removed (present)."""
    codes = set(pair_codes(pairs, n).tolist())
    for code in range(n * (n - 1) // 2):
        other = sorted(codes ^ {code})
        yield decode_pairs(np.array(other, dtype=np.int64), n), decode_pairs(np.array([code]), n)[:, 0]


def small_graphs(count: int, n: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield random_pairs(n, rng.uniform(0.2, 0.7), rng), rng


# -- Norm-Sub ----------------------------------------------------------------------------------------


def norm_sub_loop(data):
    """The paper's norm_sub as a plain loop (reference): try every shift i in [0, -min)."""
    data = np.asarray(data, dtype=np.int64)
    if data.min() >= 0:
        return data
    best, best_gap = None, None
    for i in range(-int(data.min())):
        shifted = np.maximum(data - i, 0)
        gap = abs(int(shifted.sum()) - int(data.sum()))
        if best_gap is None or gap < best_gap:
            best, best_gap = shifted, gap
            if gap == 0:
                break
    return best


def test_norm_sub_is_the_papers_shift_search():
    rng = np.random.default_rng(0)
    for _ in range(300):
        y = np.rint(rng.integers(0, 5, size=30) + rng.laplace(0, rng.uniform(0.5, 6), size=30)).astype(np.int64)
        out = norm_sub(y)
        assert np.array_equal(out, norm_sub_loop(y)) and out.min() >= 0 and out.dtype == np.int64
    assert np.array_equal(norm_sub(np.array([3, 0, 2])), [3, 0, 2])  # nothing negative: unchanged
    # [5, 4, -3, -2] (sum 4): shifts 0, 1, 2 clip to sums 9, 7, 5; the closest is shift 2
    assert np.array_equal(norm_sub(np.array([5, 4, -3, -2])), [3, 2, 0, 0])


# -- phase 1 -----------------------------------------------------------------------------------------


def test_random_supernodes_are_balanced_and_data_independent():
    rng = np.random.default_rng(1)
    labels = random_supernodes(47, 10, rng)
    assert np.array_equal(np.sort(np.bincount(labels)), [7, 10, 10, 10, 10])
    assert not np.array_equal(labels, random_supernodes(47, 10, rng))


def test_supergraph_vector_changes_by_exactly_one_per_edge():
    """Phase 1's sensitivity: every pair toggled on random graphs (n = 7, super-nodes of 2 and 3)."""
    for pairs, rng in small_graphs(12, 7, seed=2):
        size = int(rng.integers(2, 4))
        groups = random_supernodes(7, size, rng)
        s = int(groups.max()) + 1
        w, c = supergraph_counts(pairs, groups, s)
        assert w.size == s * (s - 1) // 2 and c.size == s and w.sum() + c.sum() == pairs.shape[1]
        for other, (u, v) in toggled(pairs, 7):
            w2, c2 = supergraph_counts(other, groups, s)
            assert np.abs(w2 - w).sum() + np.abs(c2 - c).sum() == 1  # L1 1: one LaplaceDpEvent(1/eps1)
            # the paper's scales: W_ab at Lap(1/eps1), W_aa = 2 c_a at Lap(2/eps1): the same loss
            assert np.abs(w2 - w).sum() / 1 + np.abs(2 * c2 - 2 * c).sum() / 2 == 1
            assert (np.abs(c2 - c).sum() == 1) == (groups[u] == groups[v])


def test_supergraph_self_loop_weight_c_gives_the_lifted_modularity():
    """Why the self-loop weighs c_a, not the code's 2 c_a."""
    rng = np.random.default_rng(3)
    n = 40
    pairs = random_pairs(n, 0.15, rng)
    groups = random_supernodes(n, 5, rng)
    s = int(groups.max()) + 1
    w, c = supergraph_counts(pairs, groups, s)
    part = rng.integers(0, 3, size=s)

    def supergraph(loop_factor):
        g = nx.Graph()
        g.add_nodes_from(range(s))
        ends = decode_pairs(np.flatnonzero(w), s)
        g.add_weighted_edges_from(zip(ends[0].tolist(), ends[1].tolist(), w[w > 0].tolist()))
        g.add_weighted_edges_from((a, a, loop_factor * int(c[a])) for a in range(s) if c[a])
        return g

    blocks = [set(np.flatnonzero(part == k).tolist()) for k in range(3)]
    original = nx.Graph()
    original.add_nodes_from(range(n))
    original.add_edges_from(pairs.T.tolist())
    lifted = [set(np.flatnonzero(part[groups] == k).tolist()) for k in range(3)]
    truth = nx.community.modularity(original, lifted)
    assert nx.community.modularity(supergraph(1), blocks, weight="weight") == pytest.approx(truth)
    assert nx.community.modularity(supergraph(2), blocks, weight="weight") != pytest.approx(truth)


def test_initial_communities_follow_supernodes_and_find_planted_blocks():
    rng = np.random.default_rng(4)
    n = 120
    truth = np.arange(n) // 40
    same = truth[:, None] == truth[None, :]
    upper = np.triu(rng.random((n, n)) < np.where(same, 0.5, 0.01), 1)
    pairs = np.array(np.nonzero(upper))
    labels, event, info = initial_communities(pairs, n, epsilon=50.0, supernode_size=1, resolution=1.0, rng=rng)
    assert event == dp_event.LaplaceDpEvent(1 / 50.0) and info["num_supernodes"] == n
    assert set(np.unique(labels)) == set(range(info["initial_communities"]))
    # super-nodes of one node and little noise: Louvain recovers the three blocks
    assert info["initial_communities"] == 3
    assert all(np.unique(labels[truth == b]).size == 1 for b in range(3))
    labels, _, info = initial_communities(pairs, n, epsilon=1.0, supernode_size=20, resolution=1.0, rng=rng)
    assert info["num_supernodes"] == 6  # every super-node's 20 nodes share a community
    assert info["initial_communities"] <= 6


class RecordingRng:
    """A numpy Generator that logs the scale and size of every Laplace draw."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.laplace_calls = []

    def laplace(self, loc, scale, size=None):
        self.laplace_calls.append((scale, size))
        return self.rng.laplace(loc, scale, size)

    def __getattr__(self, name):
        return getattr(self.rng, name)


def test_the_noise_drawn_is_the_noise_the_events_state():
    """Every Laplace draw of the release, its scale and size: Lap(1/eps1) on the S(S-1)/2 + S
    super-graph counts, Lap(1/eps3) on the K(K-1)/2 inter counts, Lap(2/eps3) on the N degrees."""
    rng = np.random.default_rng(15)
    n = 90
    pairs = random_pairs(n, 0.08, rng)
    recorder = RecordingRng(0)
    release, events, info = privgraph_release(pairs, n, epsilon=2.0, split=(0.25, 0.25, 0.5), supernode_size=10,
                                              rng=recorder)
    s, k = info["num_supernodes"], release.num_communities
    assert [size for _, size in recorder.laplace_calls] == [s * (s - 1) // 2, s, k * (k - 1) // 2, n]
    assert [scale for scale, _ in recorder.laplace_calls] == pytest.approx([1 / 0.5, 1 / 0.5, 1 / 1.0, 2 / 1.0])
    assert events[0][1].noise_multiplier == pytest.approx(1 / 0.5) and events[3][1].noise_multiplier == 1.0


def test_noisy_counts_round_to_the_nearest_integer():
    """Rounding, not the code's truncation toward 0 (which would turn 5 - 0.0003 into 4)."""
    rng = np.random.default_rng(16)
    counts = np.array([5, 3, 0, 7, 1] * 40)
    assert np.array_equal(pg._noisy_counts(counts, 1e-3, rng), counts)


def test_louvain_gets_self_loops_weighted_c(monkeypatch):
    seen = {}

    def fake_louvain(graph, **kwargs):
        seen["graph"], seen["kwargs"] = graph, kwargs
        return [set(range(3)), {3}]

    monkeypatch.setattr(nx.community, "louvain_communities", fake_louvain)
    inter = np.array([2, 0, 0, 5, 0, 1])  # codes over 4 super-nodes: (0,1)=2, (1,2)=5, (2,3)=1
    labels = pg.louvain_partition(inter, np.array([4, 0, 1, 0]), resolution=0.7, seed=3)
    g = seen["graph"]
    assert np.array_equal(labels, [0, 0, 0, 1]) and seen["kwargs"] == {"weight": "weight", "resolution": 0.7,
                                                                      "seed": 3}
    assert sorted(g.edges(data="weight")) == [(0, 0, 4), (0, 1, 2), (1, 2, 5), (2, 2, 1), (2, 3, 1)]
    assert g.number_of_nodes() == 4  # super-node 3 (no self-loop) is kept


# -- phase 2 -----------------------------------------------------------------------------------------


def test_em_scores_change_only_at_the_two_endpoints_by_one_in_one_coordinate():
    """Phase 2's score sensitivity, every node, every toggled pair, random partitions (n = 8)."""
    for pairs, rng in small_graphs(10, 8, seed=5):
        labels = rng.integers(0, 3, size=8)
        csr = pg._adjacency(pairs, 8)
        for other, (u, v) in toggled(pairs, 8):
            csr2 = pg._adjacency(other, 8)
            added = other.shape[1] > pairs.shape[1]
            for w in range(8):
                before = neighbour_counts(*csr, labels, w, 3)
                after = neighbour_counts(*csr2, labels, w, 3)
                expected = np.zeros(3, dtype=np.int64)
                if w in (u, v):
                    expected[labels[v if w == u else u]] = 1 if added else -1
                assert np.array_equal(after - before, expected)
                # one-sided change by 1: each selection's log-ratio is at most the rate (monotone bound)
                for scale in ("paper", "monotone"):
                    rate = em_rate(1.0, scale)
                    ratio = np.log(em_probabilities(after, rate) / em_probabilities(before, rate))
                    assert np.abs(ratio).max() <= rate + 1e-12
                    # and the shifted scores of the code (k - k_own) give the same law
                    own = labels[w]
                    assert np.allclose(em_probabilities(after - after[own], rate), em_probabilities(after, rate))


def em_law(pairs: np.ndarray, n: int, start: np.ndarray, order, rate: float) -> dict:
    """Exact law of phase 2's output (the node-by-node choices) for a fixed order, by enumeration."""
    adj = [set() for _ in range(n)]
    for a, b in pairs.T.tolist():
        adj[a].add(b)
        adj[b].add(a)
    law = {}

    def walk(step, labels, prob):
        if step == len(order):
            law[tuple(labels)] = law.get(tuple(labels), 0.0) + prob
            return
        w = order[step]
        candidates = sorted(set(labels))
        scores = np.array([sum(labels[x] == c for x in adj[w]) - sum(labels[x] == labels[w] for x in adj[w])
                           for c in candidates], dtype=float)
        p = np.exp(rate * scores)
        p /= p.sum()
        for c, pc in zip(candidates, p):
            walk(step + 1, labels[:w] + [c] + labels[w + 1:], prob * pc)

    walk(0, list(start), 1.0)
    return law


@pytest.mark.parametrize("scale", ["paper", "monotone"])
def test_phase_two_exact_privacy_loss_is_within_its_events(scale):
    """Exact enumeration on 5 nodes: every output's log-ratio over every toggled pair is at most
    2 x rate (two one-sided selections) <= eps2, the two events' sum."""
    eps2 = 1.0
    rate = em_rate(eps2, scale)
    worst = 0.0
    for pairs, rng in small_graphs(4, 5, seed=6):
        start = [0, 0, 1, 1, 2]
        order = rng.permutation(5).tolist()
        base = em_law(pairs, 5, start, order, rate)
        assert sum(base.values()) == pytest.approx(1.0)
        for other, _ in toggled(pairs, 5):
            law = em_law(other, 5, start, order, rate)
            assert law.keys() == base.keys()
            worst = max(worst, max(abs(math.log(law[o] / base[o])) for o in base))
    assert worst <= 2 * rate + 1e-12 and 2 * rate <= eps2
    assert worst > 0.5 * rate  # the bound is nearly attained: the test can see a wrong rate


def test_adjust_communities_samples_the_exponential_mechanism():
    """adjust_communities' empirical law against the enumeration (4 nodes, fixed order)."""
    pairs = np.array([[0, 0, 1, 2], [1, 2, 3, 3]])
    start = np.array([0, 1, 1, 0])
    order = [2, 0, 3, 1]
    eps2 = 3.0
    law = em_law(pairs, 4, start.tolist(), order, em_rate(eps2, "paper"))
    rng = np.random.default_rng(7)
    runs = 3000
    seen = {}
    for _ in range(runs):
        labels, events = adjust_communities(pairs, 4, start, epsilon=eps2, rng=rng, order=np.array(order))
        seen[tuple(labels)] = seen.get(tuple(labels), 0) + 1
    assert events == [pure_dp_event(eps2 / 2)] * 2

    def canonical(labels):  # adjust_communities renumbers to [0, K) by label value
        _, inv = np.unique(labels, return_inverse=True)
        return tuple(inv.tolist())

    expected = {}
    for out, p in law.items():
        expected[canonical(out)] = expected.get(canonical(out), 0.0) + p
    keys = sorted(expected)
    assert set(seen) <= set(keys)
    observed = np.array([seen.get(k, 0) for k in keys])
    probs = np.array([expected[k] for k in keys])
    big = probs * runs >= 5
    chi = stats.chisquare(np.append(observed[big], observed[~big].sum()),
                          np.append(probs[big], probs[~big].sum()) * runs)
    assert chi.pvalue > 1e-3


def test_adjust_communities_renumbers_and_isolated_nodes_move_uniformly():
    """An isolated node has all scores 0: uniform over the non-empty communities (unused labels are
    never candidates); the output is renumbered to [0, K)."""
    rng = np.random.default_rng(8)
    pairs = np.array([[0], [1]])
    start = np.array([0, 0, 2, 2, 5])  # labels 1, 3, 4 unused
    where = np.zeros(3)
    for _ in range(900):
        labels, _ = adjust_communities(pairs, 5, start, epsilon=1.0, rng=rng, order=np.array([4]))  # only 4 moves
        assert np.array_equal(labels[:4], [0, 0, 1, 1]) and set(labels.tolist()) == set(range(labels.max() + 1))
        where[labels[4]] += 1  # 0: joined {0, 1}; 1: joined {2, 3}; 2: stayed alone
    assert stats.chisquare(where).pvalue > 1e-3


# -- phase 3 -----------------------------------------------------------------------------------------


def test_community_statistics_change_by_one_in_the_released_scale():
    """Phase 3's sensitivity: (E, d / 2) moves by exactly 1 in L1 for every toggled pair."""
    for pairs, rng in small_graphs(12, 7, seed=9):
        k = int(rng.integers(1, 4))
        labels = rng.integers(0, k, size=7)
        labels[:k] = np.arange(k)
        e, d = community_statistics(pairs, labels, k)
        assert e.size == k * (k - 1) // 2 and d.size == 7
        assert e.sum() + d.sum() / 2 == pairs.shape[1]
        for other, (u, v) in toggled(pairs, 7):
            e2, d2 = community_statistics(other, labels, k)
            assert np.abs(e2 - e).sum() + np.abs(d2 - d).sum() / 2 == 1
            assert (np.abs(e2 - e).sum() == 0) == (labels[u] == labels[v])  # disjoint: inter or intra


# -- the pure-DP event -------------------------------------------------------------------------------


def pld_epsilon(events, delta):
    acc = PLDAccountant(neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE)
    for e in events:
        acc.compose(e)
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("eps", [0.2, 1.0, 3.0])
def test_pure_dp_event_is_binary_randomised_response_in_the_pld_accountant(eps):
    delta = 1e-5
    p = math.exp(eps) / (1 + math.exp(eps))  # P(privacy loss = +eps)
    one = pld_epsilon([pure_dp_event(eps)], delta)
    assert one == pytest.approx(math.log(math.exp(eps) - delta * (1 + math.exp(eps))), abs=2e-4)
    two = pld_epsilon([pure_dp_event(eps)] * 2, delta)
    assert two == pytest.approx(2 * eps + math.log(1 - delta / p**2), abs=4e-4)
    # the worst case of a pure eps-DP step: never below the Laplace mechanism's at the same eps
    for d in (1e-5, 1e-2, 0.2):
        assert pld_epsilon([pure_dp_event(eps)], d) >= pld_epsilon([dp_event.LaplaceDpEvent(1 / eps)], d) - 1e-4
    assert pld_epsilon([pure_dp_event(eps)], 0.3 * (1 - 1 / p)) > 0


# -- the release -------------------------------------------------------------------------------------


def test_privgraph_release_events_info_and_determinism():
    rng = np.random.default_rng(10)
    n = 150
    pairs = random_pairs(n, 0.05, rng)
    kwargs = {"epsilon": 3.0, "split": (0.2, 0.3, 0.5), "supernode_size": 10, "resolution": 1.0}
    release, events, info = privgraph_release(pairs, n, rng=np.random.default_rng(1), **kwargs)
    again, _, _ = privgraph_release(pairs, n, rng=np.random.default_rng(1), **kwargs)
    other, _, _ = privgraph_release(pairs, n, rng=np.random.default_rng(2), **kwargs)
    assert release.equals(again) and not release.equals(other)
    assert [phase for phase, _ in events] == ["community initialisation", "community adjustment",
                                              "community adjustment", "information extraction"]
    kinds = [dp_event.LaplaceDpEvent, dp_event.DiscreteLaplaceDpEvent, dp_event.DiscreteLaplaceDpEvent,
             dp_event.LaplaceDpEvent]
    assert [type(e) for _, e in events] == kinds
    assert [e.noise_multiplier if k is dp_event.LaplaceDpEvent else e.noise_parameter
            for (_, e), k in zip(events, kinds)] == pytest.approx([1 / 0.6, 0.45, 0.45, 1 / 1.5])
    assert events[1][1].sensitivity == 1
    assert info["eps_init"] == pytest.approx(0.6) and info["em_rate"] == pytest.approx(0.9 / 4)
    assert info["num_supernodes"] == 15 and info["num_communities"] == release.num_communities
    k = release.num_communities
    sizes = np.bincount(release.communities, minlength=k)
    assert (sizes > 0).all() and release.inter_counts.size == k * (k - 1) // 2
    assert (release.intra_degrees >= 0).all() and (release.intra_degrees <= sizes[release.communities] - 1).all()
    assert info["noisy_inter_edges"] == release.inter_counts.sum()
    assert info["expected_edges"] == pytest.approx(release.inter_counts.sum() + expected_chung_lu_edges(
        release.intra_degrees, release.communities))
    _, _, mono = privgraph_release(pairs, n, rng=np.random.default_rng(1), em_scale="monotone", **kwargs)
    assert mono["em_rate"] == pytest.approx(0.9 / 2)


@pytest.mark.parametrize("kwargs,match", [
    ({"epsilon": 0.0}, "'epsilon' must be a finite number > 0"),
    ({"split": (0.5, 0.5, 0.0)}, "'split' must be three shares > 0 summing to 1"),
    ({"split": (0.5, 0.4, 0.2)}, "'split' must be three shares > 0 summing to 1"),
    ({"supernode_size": 0}, r"supernode_size must be in \[1, 30\]"),
    ({"supernode_size": 31}, r"supernode_size must be in \[1, 30\]"),
    ({"em_scale": "loose"}, "'em_scale' must be one of paper, monotone"),
])
def test_privgraph_release_rejects_bad_arguments(kwargs, match):
    pairs = np.array([[0, 1], [1, 2]])
    args = {"epsilon": 1.0, **kwargs}
    with pytest.raises(Exception, match=match):
        privgraph_release(pairs, 30, rng=np.random.default_rng(0), **args)


def test_too_many_supernodes_is_refused_before_any_noise(monkeypatch):
    monkeypatch.setattr(pg, "MAX_SUPERGRAPH_CELLS", 10)
    with pytest.raises(ValueError, match="6 super-nodes give 15 super-graph cells, above 10"):
        initial_communities(np.array([[0], [1]]), 12, epsilon=1.0, supernode_size=2, resolution=1.0,
                            rng=np.random.default_rng(0))


def test_release_pack_unpack_round_trip_and_checks():
    release = PrivGraphRelease(np.array([0, 0, 1, 2, 1]), np.array([1, 1, 0, 0, 1]), np.array([3, 0, 2]))
    vector = release.pack()
    assert vector.dtype == np.int64 and vector.size == 1 + 10 + 3
    assert PrivGraphRelease.unpack(vector, 5).equals(release)
    bad = [vector[:-1], np.concatenate([[3], [0, 0, 1, 1, 1], vector[6:]]),  # label 2 unused
           np.concatenate([vector[:6], [1, 2, 0, 0, 1], vector[11:]]),  # degree 2 in a community of 2
           np.concatenate([vector[:11], [3, 0, 3]]),  # 3 pairs between communities of 1 and 2 nodes
           vector.astype(float)]
    for b in bad:
        with pytest.raises(ValueError):
            PrivGraphRelease.unpack(b, 5)


# -- reconstruction ----------------------------------------------------------------------------------


def test_grouped_distinct_draws_uniform_subsets():
    rng = np.random.default_rng(11)
    for population, count in ((6, 2), (5, 4)):  # the sparse rounds and the dense complement
        seen = {}
        for _ in range(3000):
            group, value = grouped_distinct(np.array([population, 3, 0]), np.array([count, 3, 0]), rng)
            assert np.array_equal(group, [0] * count + [1, 1, 1]) and np.array_equal(value[count:], [0, 1, 2])
            subset = tuple(value[:count].tolist())
            assert len(set(subset)) == count and all(0 <= x < population for x in subset)
            seen[subset] = seen.get(subset, 0) + 1
        assert len(seen) == math.comb(population, count)
        assert stats.chisquare(list(seen.values())).pvalue > 1e-3
    pops = rng.integers(0, 10**9, size=2000)
    counts = np.minimum(pops, rng.integers(0, 50, size=2000))
    group, value = grouped_distinct(pops, counts, rng)
    assert np.array_equal(np.bincount(group, minlength=2000), counts)
    assert (value < pops[group]).all() and np.unique(group * 10**9 + value).size == value.size
    with pytest.raises(ValueError, match="0 <= counts <= populations"):
        grouped_distinct(np.array([3]), np.array([4]), rng)


def test_chung_lu_within_has_the_papers_edge_probabilities():
    rng = np.random.default_rng(12)
    weights = np.array([1, 2, 3, 4, 5, 6, 2, 2, 0])
    blocks = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1])  # S_0 = 21 (5 x 6 > 21: probability 1), S_1 = 4
    expected = np.zeros((9, 9))
    for u, v in itertools.combinations(range(9), 2):
        if blocks[u] == blocks[v]:
            expected[u, v] = min(1.0, weights[u] * weights[v] / weights[blocks == blocks[u]].sum())
    freq = np.zeros((9, 9))
    runs = 2000
    for _ in range(runs):
        pairs = chung_lu_within(weights, blocks, rng)
        u, v = np.minimum(*pairs), np.maximum(*pairs)
        assert np.unique(u * 9 + v).size == u.size and (u != v).all()
        freq[u, v] += 1
    assert np.abs(freq / runs - expected).max() < 0.04
    assert freq[4, 5] == runs and freq[:, 8].sum() == 0 and freq[6, 7] == runs
    assert expected_chung_lu_edges(weights, blocks) == pytest.approx(expected.sum())


def test_inter_community_pairs_are_exact_counts_between_the_right_communities():
    rng = np.random.default_rng(13)
    labels = rng.integers(0, 4, size=60)
    k = 4
    sizes = np.bincount(labels, minlength=k)
    ends = decode_pairs(np.arange(6), k)
    counts = np.minimum(rng.integers(0, 150, size=6), sizes[ends[0]] * sizes[ends[1]])
    counts[0] = sizes[0] * sizes[1]  # a full block
    pairs = inter_community_pairs(labels, counts, rng)
    assert pairs.shape == (2, counts.sum())
    got = np.bincount(pair_codes(np.stack([labels[pairs[0]], labels[pairs[1]]]), k), minlength=6)
    assert np.array_equal(got, counts)
    assert np.unique(pair_codes(pairs, 60)).size == pairs.shape[1]


def test_reconstruct_gives_a_simple_graph_near_its_expected_size():
    rng = np.random.default_rng(14)
    n = 400
    pairs = random_pairs(n, 0.04, rng)
    release, _, info = privgraph_release(pairs, n, epsilon=6.0, rng=rng)
    sizes = []
    for seed in range(8):
        out = reconstruct(release, np.random.default_rng(seed))
        codes = pair_codes(out, n)
        assert (out[0] != out[1]).all() and np.unique(codes).size == codes.size
        inter = release.communities[out[0]] != release.communities[out[1]]
        assert inter.sum() == release.inter_counts.sum()  # exactly E_ij between i and j
        sizes.append(out.shape[1])
    assert abs(np.mean(sizes) - info["expected_edges"]) < 0.03 * info["expected_edges"]
    assert 0.6 * pairs.shape[1] < np.mean(sizes) < 1.4 * pairs.shape[1]
