"""node2vec embeddings of a published graph through pecanpy (Liu & Krishnan, Bioinformatics 2021).

Source: Grover & Leskovec, "node2vec: scalable feature learning for networks" (KDD 2016): biased
second-order random walks (return p, in-out q) and skip-gram with negative sampling (gensim).
"""

from __future__ import annotations

import zlib

import numba
import numpy as np
from gensim.models import Word2Vec
from pecanpy.pecanpy import SparseOTF

from graphpriv.data.release import PublishedGraph

__all__ = ["node2vec_embeddings"]


def _stable_hash(text: str) -> int:
    """gensim seeds each word vector with ``hashfxn(str(seed) + word)``; Python's ``hash`` is
    salted per process, so use CRC32 to make embeddings reproducible across processes."""
    return zlib.crc32(text.encode())


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
    walker = SparseOTF(p=p, q=q, workers=1, verbose=False, random_state=seed)
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
