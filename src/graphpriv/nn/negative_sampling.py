"""PyG's sparse ``negative_sampling`` for one graph drawn many times, the same draws at a fraction of the cost.

The GAE (:mod:`graphpriv.nn.gae`) draws one negative per positive edge in every epoch with
:func:`torch_geometric.utils.negative_sampling` (``method="sparse"``). That function re-encodes the
edge list each call, draws its candidate pairs with Python's ``random.sample(range(P), s)`` (a
Python loop: one ``getrandbits`` and one set lookup per candidate) and filters them with
``np.isin``. On SEAL's Facebook graph (88,234 negatives a draw) that is 0.155 s an epoch, about 40%
of a 200-epoch GAE training (76.3 s; ``benchmarks/bench_negative_sampling.py``, docs/benchmarks.md).

:class:`NegativeSampler` encodes the edges once (a boolean mask of the pairs up to
:data:`DENSE_MASK_MAX` of them, else sorted codes for binary search) and replays
``random.sample`` from Python's Mersenne Twister state in numpy: the same 32-bit words in the same
order, the same rejections (a word above the population, a repeat), and Python's generator left
exactly where ``random.sample`` leaves it. Its output and the generator's next draws are therefore
those of PyG's function, bit for bit (tested against it). Where the replay does not apply (a
population at or above 2**32, i.e. more than 65,536 nodes; the small-population branch of
``random.sample``; an interpreter whose ``random`` differs) it calls ``random.sample`` itself.
"""

from __future__ import annotations

import math
import random
import sys

import numpy as np
import torch
from torch import Tensor

from graphpriv.data.graph import not_in_sorted

__all__ = ["DENSE_MASK_MAX", "NegativeSampler", "python_random_sample"]

#: Populations N(N - 1) up to this (2**26, N up to about 8,200) test membership in a boolean mask of the
#: pairs; larger ones by binary search in the sorted edge codes (the same answer).
DENSE_MASK_MAX = 2**26


def _replayable(population: int, k: int) -> bool:
    """Whether ``random.sample(range(population), k)`` takes its set-based branch with one 32-bit word a
    draw (CPython 3.11's ``random.py``, the same through 3.13), the branch :func:`python_random_sample` replays."""
    if sys.version_info >= (3, 14) or type(random._inst) is not random.Random \
            or random.Random._randbelow is not random.Random._randbelow_with_getrandbits:
        return False
    setsize = 21 + (4 ** math.ceil(math.log(k * 3, 4)) if k > 5 else 0)
    return population > setsize and population.bit_length() <= 32 and 0 < k <= population


def python_random_sample(population: int, k: int) -> np.ndarray:
    """``random.sample(range(population), k)`` as an int64 array, drawing from (and advancing) Python's
    global ``random`` exactly as that call does.

    ``random.sample`` takes ``k`` draws ``randbelow(population)``, each redrawn while it repeats an
    earlier one; ``randbelow(n)`` takes the top ``b = n.bit_length()`` bits of 32-bit Mersenne Twister
    words until one is below ``n``. So its result is the first ``k`` distinct values below ``n`` among
    ``word >> (32 - b)`` over the generator's next words, and it consumes the words up to the last of
    them. numpy's ``MT19937`` holds the same state (624 words and a position) and yields the same
    words (``random_raw``).

    Args:
        population: P > 0, the size of ``range(P)``. k: 0 <= k <= P, how many distinct values.

    Returns:
        ``[k]`` int64, in draw order (the order of ``random.sample``).
    """
    if not _replayable(population, k):
        return np.asarray(random.sample(range(population), k), dtype=np.int64)
    version, internal, gauss_next = random.getstate()
    mt = np.random.MT19937()
    start = {"bit_generator": "MT19937", "state": {"key": np.asarray(internal[:-1], dtype=np.uint32),
                                                   "pos": internal[-1]}}
    mt.state = start
    shift = 32 - population.bit_length()
    # about 2**b / P <= 2 words a value, repeats aside; short batches are topped up
    batch = int(k * 2 ** (32 - shift) / population * 1.05) + 64
    words = mt.random_raw(batch)
    while True:
        values = (words >> np.uint64(shift)).astype(np.int64)
        below = np.flatnonzero(values < population)
        _, first = np.unique(values[below], return_index=True)
        if first.size >= k:
            break
        words = np.concatenate([words, mt.random_raw(batch)])
    order = np.sort(first)[:k]  # positions (among the accepted words) of the first k distinct values
    taken = below[order]
    mt.state = start
    mt.random_raw(int(taken[-1]) + 1)  # the words random.sample consumes
    state = mt.state["state"]
    random.setstate((version, tuple(int(w) for w in state["key"]) + (int(state["pos"]),), gauss_next))
    return values[taken]


class NegativeSampler:
    """``torch_geometric.utils.negative_sampling(edge_index, num_nodes, num_neg_samples)`` (``method="sparse"``,
    directed pairs, no self-loops) for one graph, called any number of times.

    Args:
        edge_index: ``[2, E]`` long (the pairs to avoid, in the direction given; self-loops ignored, as
            PyG does). num_nodes: N >= 2.

    Each :meth:`draw` returns what PyG's call at that point returns and leaves Python's ``random`` where
    PyG's call leaves it (module docstring); the encoding of the edges is done once here.
    """

    def __init__(self, edge_index: Tensor, num_nodes: int) -> None:
        row, col = edge_index.cpu().numpy()
        keep = row != col
        row, col = row[keep].astype(np.int64), col[keep].astype(np.int64)
        col = col - (row < col)
        codes = row * (num_nodes - 1) + col
        self.num_nodes = int(num_nodes)
        self.num_codes = codes.size  # PyG counts repeats too (its oversampling factor uses this)
        self.population = self.num_nodes * self.num_nodes - self.num_nodes
        self.codes = np.unique(codes)
        self.edge_mask: np.ndarray | None = None  # one byte a pair, where that is at most 64 MiB
        if self.population <= DENSE_MASK_MAX:
            self.edge_mask = np.zeros(self.population, dtype=bool)
            self.edge_mask[self.codes] = True

    def draw(self, num_neg_samples: int) -> Tensor:
        """``[2, <= num_neg_samples]`` long (CPU): the negatives PyG's ``negative_sampling`` draws now
        (fewer when its three tries fall short, as PyG's do), for ``num_neg_samples >= 1``."""
        if self.num_codes >= self.population:
            return torch.empty((2, 0), dtype=torch.long)
        prob = 1.0 - self.num_codes / self.population
        sample_size = int(1.1 * num_neg_samples / prob)
        neg: np.ndarray | None = None
        for _ in range(3):
            if self.population <= sample_size:
                rnd = np.arange(self.population, dtype=np.int64)
            else:
                rnd = python_random_sample(self.population, sample_size)
            keep = ~self.edge_mask[rnd] if self.edge_mask is not None else not_in_sorted(rnd, self.codes)
            if neg is not None:
                keep &= not_in_sorted(rnd, np.sort(neg))
            rnd = rnd[keep]
            neg = rnd if neg is None else np.concatenate([neg, rnd])
            if neg.size >= num_neg_samples:
                neg = neg[:num_neg_samples]
                break
        row = neg // (self.num_nodes - 1)
        col = neg % (self.num_nodes - 1)
        col[row <= col] += 1
        return torch.from_numpy(np.stack([row, col]))
