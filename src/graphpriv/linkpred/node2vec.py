"""node2vec embeddings of a published graph through pecanpy (Liu & Krishnan, Bioinformatics 2021).

Source: Grover & Leskovec, "node2vec: scalable feature learning for networks" (KDD 2016): biased
second-order random walks (return p, in-out q) and skip-gram with negative sampling (gensim).
The walks are pecanpy's SparseOTF walks; with p = q = 1 on an unweighted graph (the default) they
are drawn in O(log degree) a step by :class:`_UniformOTF`, the same walks bit for bit.
"""

from __future__ import annotations

import zlib

import numba
import numpy as np
from gensim.models import Word2Vec
from numba import njit
from pecanpy.pecanpy import SparseOTF
from pecanpy.rw.sparse_rw import SparseRWGraph

import graphpriv.linkpred._numba_cache  # noqa: F401 (NUMBA_CACHE_DIR set before numba compiles)
from graphpriv.data.release import PublishedGraph

__all__ = ["node2vec_embeddings"]


def _stable_hash(text: str) -> int:
    """gensim seeds each word vector with ``hashfxn(str(seed) + word)``; Python's ``hash`` is
    salted per process, so use CRC32 to make embeddings reproducible across processes."""
    return zlib.crc32(text.encode())


#: Largest table of per-degree transition CDFs (float32 entries) :class:`_UniformOTF` builds; above it
#: (a graph with very many distinct large degrees) the walks fall back to pecanpy's own SparseOTF.
MAX_CDF_TABLE = 1 << 24

_first_order_probs = SparseRWGraph.get_normalized_probs_first_order


@njit(cache=True)
def _degree_cdfs(data, indices, indptr, representatives, degrees, offsets):  # pragma: no cover - compiled
    """The transition CDF of a node of each degree, computed as SparseOTF's ``move_forward`` does
    (pecanpy's normalised weights, then ``np.cumsum``), into one flat float32 table."""
    table = np.empty(offsets[-1], np.float32)
    for i in range(degrees.size):
        cdf = np.cumsum(_first_order_probs(data, indices, indptr, representatives[i]))
        table[offsets[i]:offsets[i] + degrees[i]] = cdf
    return table


class _UniformOTF(SparseOTF):
    """pecanpy's SparseOTF walks on an unweighted graph with p = q = 1, in O(log degree) a step.

    With unit weights and p = q = 1, SparseOTF's second-order transition probabilities at a node
    are 1 / degree for every neighbour, whatever the previous node (dividing by p = q = 1 changes
    no bit), so the CDF it builds at each step depends on the degree alone. This walker builds each
    degree's CDF once, with pecanpy's own functions, and draws the next node with the same single
    ``np.random.random()`` and ``searchsorted`` as SparseOTF: the same walks, bit for bit, without
    SparseOTF's per-step intersection of two neighbour lists (O(degree), which on a dense release
    such as EdgeRand at epsilon 0.5 on Cora, degree about 1,000, made the walks take 40 s).
    """

    def get_move_forward(self):
        """A compiled ``move_forward(cur_idx, prev_idx=None)`` reading the per-degree CDF table."""
        indices, indptr = self.indices, self.indptr
        degree = np.diff(indptr.astype(np.int64))
        degrees, representatives = np.unique(degree[degree > 0], return_index=True)
        representatives = np.flatnonzero(degree > 0)[representatives].astype(np.uint32)
        offsets = np.concatenate([[0], np.cumsum(degrees)]).astype(np.int64)
        table = _degree_cdfs(self.data, indices, indptr, representatives, degrees, offsets)
        start_of = np.zeros(int(degree.max(initial=0)) + 1, dtype=np.int64)
        start_of[degrees] = offsets[:-1]

        @njit(nogil=True)
        def move_forward(cur_idx, prev_idx=None):  # pragma: no cover - compiled
            start = indptr[cur_idx]
            d = indptr[cur_idx + 1] - start
            row = table[start_of[d]:start_of[d] + d]
            return indices[start + np.searchsorted(row, np.random.random())]

        return move_forward

    @staticmethod
    def fits(data: np.ndarray, indptr: np.ndarray, p: float, q: float) -> bool:
        """Whether the walks are uniform (unit weights, p = q = 1) and the CDF table is small enough."""
        if p != 1 or q != 1 or not np.all(data == 1):
            return False
        degree = np.diff(indptr.astype(np.int64))
        return int(np.unique(degree).sum()) <= MAX_CDF_TABLE


def node2vec_embeddings(graph: PublishedGraph, *, dim: int = 128, walk_length: int = 80,
                        num_walks: int = 10, window: int = 10, p: float = 1.0, q: float = 1.0,
                        epochs: int = 1, seed: int = 0) -> np.ndarray:
    """node2vec embedding of every node of ``graph``.

    Args:
        graph: The published graph. dim: Embedding width (128). walk_length, num_walks, window:
            the node2vec defaults (80, 10, 10). p, q: return and in-out parameters (1, 1 = DeepWalk
            walks). epochs: skip-gram epochs. seed: walks and skip-gram seed.

    Returns:
        ``[N, dim]`` float32; row i is node i (isolated nodes walk in place and still get a row).
    """
    adj = graph.adjacency
    walks_with = _UniformOTF if _UniformOTF.fits(adj.data, adj.indptr, p, q) else SparseOTF
    walker = walks_with(p=p, q=q, workers=1, verbose=False, random_state=seed)
    walker.set_node_ids([str(i) for i in range(graph.num_nodes)])
    walker.indptr = adj.indptr.astype(np.uint32)
    walker.indices = adj.indices.astype(np.uint32)
    walker.data = adj.data.astype(np.float32)
    threads = numba.get_num_threads()
    numba.set_num_threads(1)  # pecanpy's prange walks are reproducible only on one thread
    try:
        walks = walker.simulate_walks(num_walks, walk_length)
    finally:
        numba.set_num_threads(threads)
    model = Word2Vec(walks, vector_size=dim, window=window, sg=1, min_count=0, workers=1,
                     epochs=epochs, seed=seed, hashfxn=_stable_hash)
    return np.asarray(model.wv[[str(i) for i in range(graph.num_nodes)]], dtype=np.float32)
