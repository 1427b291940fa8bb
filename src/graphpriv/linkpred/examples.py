"""Training links for DPLP: the projected edges and degree-capped negatives.

Source: DPLP (Ran, Ye, Hu, Huang, Xu, Fu, "Differentially Private Graph Neural Networks for Link
Prediction"), Sec. IV-B.1 and Algorithm 1 (lambda |N_1(v)| negatives per node v). At most
floor(lambda theta) negatives touch any node: the dependency bound assumes it (docs/privacy-dplp.md,
step 2).
"""

from __future__ import annotations

import numpy as np

from graphpriv.data.graph import decode_pairs, pair_codes
from graphpriv.data.splits import sample_non_edges


def sample_capped_negatives(pairs: np.ndarray, num_nodes: int, *, lam: float, theta: int,
                            rng: np.random.Generator, max_rounds: int = 8) -> np.ndarray:
    """About ``lam * |E|`` uniform non-edges with at most ``lam * theta`` incident to any node.

    Each node v sources ``lam * deg(v) / 2`` negatives (randomized rounding) whose other end is a
    uniform non-neighbour; a candidate is rejected when it is a self-loop, an edge, a repeat, or
    would push either endpoint above ``floor(lam * theta)`` incident negatives (the cap the
    dependency bound assumes). Rejected draws are retried for ``max_rounds`` rounds.

    Args:
        pairs: Undirected edges ``[2, E]`` of the projected graph (max degree theta).
        num_nodes: N. lam: negative rate >= 0. theta: degree bound. rng: numpy Generator.

    Returns:
        ``[2, E_neg]`` pairs with u < v.
    """
    degree = np.bincount(pairs.ravel(), minlength=num_nodes)
    want = lam * degree / 2.0
    quota = np.floor(want).astype(np.int64) + (rng.random(num_nodes) < want - np.floor(want))
    cap = int(np.floor(lam * theta))
    taken = set(pair_codes(pairs, num_nodes).tolist())
    chosen: list[int] = []
    count = np.zeros(num_nodes, dtype=np.int64)
    for _ in range(max_rounds):
        sources = rng.permutation(np.repeat(np.arange(num_nodes), quota))
        if sources.size == 0:
            break
        targets = rng.integers(0, num_nodes, size=sources.size)
        for s, t in zip(sources.tolist(), targets.tolist()):
            if s == t or count[s] >= cap or count[t] >= cap:
                continue
            a, b = (s, t) if s < t else (t, s)
            code = a * (2 * num_nodes - a - 1) // 2 + (b - a - 1)
            if code in taken:
                continue
            taken.add(code)
            chosen.append(code)
            count[s] += 1
            count[t] += 1
            quota[s] -= 1
        quota = np.maximum(quota, 0)
        quota[count >= cap] = 0
    return decode_pairs(np.asarray(chosen, dtype=np.int64), num_nodes)


def _shuffled(pos: np.ndarray, neg: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``(links [2, L], labels [L] float32)``: the positive and negative pairs, labelled 1 and 0, in
    one random order."""
    links = np.concatenate([pos, neg], axis=1)
    labels = np.concatenate([np.ones(pos.shape[1]), np.zeros(neg.shape[1])]).astype(np.float32)
    order = rng.permutation(links.shape[1])
    return links[:, order], labels[order]


def _draw_columns(array: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` of ``array``'s columns (``[2, n]`` -> ``[2, size]``), drawn uniformly without
    replacement, kept in their order."""
    return array[:, np.sort(rng.choice(array.shape[1], size=size, replace=False))]


def training_links(pairs: np.ndarray, num_nodes: int, *, lam: float, theta: int,
                   rng: np.random.Generator, max_links: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Positive links (the projected edges) and capped negatives, shuffled.

    Args:
        pairs: ``[2, E]`` the (projected) training graph's undirected edges. num_nodes: N.
        lam, theta: :func:`sample_capped_negatives`'s rate and degree bound. rng: the draws.
        max_links: for a model trained without DP only (the dependency bound assumes every edge
            and its negatives): at most this many edges as positives, drawn uniformly without
            replacement when E is larger, and the same share of the negatives (drawn on the whole
            graph first), for memory on large graphs (as SEAL's released code caps its training
            links). None: every edge and negative, the same draws as before the option.

    Returns:
        ``(links [2, L], labels [L] float32)``.
    """
    negatives = sample_capped_negatives(pairs, num_nodes, lam=lam, theta=theta, rng=rng)
    if max_links is not None and pairs.shape[1] > max_links:
        keep = round(negatives.shape[1] * max_links / pairs.shape[1])
        pairs = _draw_columns(pairs, max_links, rng)
        negatives = _draw_columns(negatives, keep, rng)
    return _shuffled(pairs, negatives, rng)


def uniform_training_links(pairs: np.ndarray, num_nodes: int, *, rng: np.random.Generator,
                           max_links: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Positive links (the edges) and as many uniform non-edges, shuffled: SEAL's training examples
    (Zhang & Chen, "Link prediction based on graph neural networks", NeurIPS 2018: negatives are
    uniform node pairs that are not edges, as the test negatives are). No degree cap: not private.

    Args:
        pairs: ``[2, E]`` the training graph's undirected edges. num_nodes: N. rng: the draws.
        max_links: at most this many edges as positives, drawn uniformly without replacement
            when E is larger (SEAL's released code's max-train-num), and as many non-edges of the
            whole graph; None: every edge (no draw, the same examples as before the option).

    Returns:
        ``(links [2, L], labels [L] float32)``.

    Raises:
        DatasetError: fewer non-edges than positives.
    """
    if max_links is not None and pairs.shape[1] > max_links:
        positives = _draw_columns(pairs, max_links, rng)
    else:
        positives = pairs
    return _shuffled(positives, sample_non_edges(num_nodes, positives.shape[1], forbidden=pairs, rng=rng), rng)
