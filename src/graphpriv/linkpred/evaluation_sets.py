"""Evaluation subgraphs kept between fits: the validation and test pairs of one split, extracted
once per process and graph and reused by every fit that asks for them again.

A link-prediction table fits many models on one split: DPLP-PS's leaderboard runs, for each (graph,
seed), every backbone at every epsilon on the same validation and test pairs, extracted from the
same training graph with the same k. Those subgraphs do not depend on the model, the epsilon or
any noise (they are read from the training graph, which the evaluation protocol sees anyway), and
on a large graph they cost much of a run: on SEAL's Facebook at k = 4 the about 26,000 pairs have
about 107 million subgraph edges. :func:`evaluation_subgraphs` returns the same
:class:`~graphpriv.linkpred.subgraphs.SubgraphSet` for the same inputs (keyed on their contents),
with its arrays read-only, and keeps the last two (a validation set and a test set) while their
edges stay within :data:`KEEP_EDGES`. The sets' per-set caches (degrees, target edges, rows of A + I)
are kept with them.

A sweep runs its cells in (dataset, seed, row) order
(:func:`graphpriv.experiments.reproduce.table_runs`) so that consecutive cells share their sets.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from graphpriv.linkpred.subgraphs import Extractor, SubgraphSet, extract_subgraphs
from graphpriv.memo import Memo, array_digest
from graphpriv.progress import Progress, no_progress

__all__ = ["KEEP_EDGES", "evaluation_subgraphs", "forget_evaluation_subgraphs"]

#: The most subgraph edges kept in all (2^27, about 5 GiB with the sets' per-set caches): on SEAL's
#: Facebook at k = 4 the validation set (35.6 million edges) and the test set (71.1 million) fit.
KEEP_EDGES = 2**27


def _edges(subgraphs: SubgraphSet) -> int:
    return int(subgraphs.edges.shape[1])


_SETS = Memo(2, weigh=_edges, max_weight=KEEP_EDGES)


def evaluation_subgraphs(adj: sp.csr_matrix, links: np.ndarray, labels: np.ndarray, *, extractor: Extractor,
                         k: int = 2, h: int = 1, progress: Progress = no_progress) -> SubgraphSet:
    """:func:`~graphpriv.linkpred.subgraphs.extract_subgraphs` of evaluation pairs (no cut), kept for
    the next call with the same graph, pairs, labels and extractor.

    Args:
        adj: Symmetric CSR adjacency ``[N, N]`` of the graph to extract from (the training graph).
        links: ``[2, L]`` integer pairs. labels: ``[L]`` (1 = edge, 0 = non-edge).
        extractor: path (k) or neighbourhood (h). progress: as ``extract_subgraphs``; not called
            when the set is kept from an earlier call.

    Returns:
        The :class:`~graphpriv.linkpred.subgraphs.SubgraphSet`, equal to what ``extract_subgraphs``
        returns, its arrays read-only (the same object for every call with the same inputs while
        it is kept).

    Raises:
        ValueError: as ``extract_subgraphs``.
    """
    extractor = Extractor(extractor)
    links = np.array(links, dtype=np.int64).reshape(2, -1)  # copies: the kept set's arrays are made read-only
    labels = np.array(labels, dtype=np.float32)
    shape = ("k", k) if extractor is Extractor.PATH else ("h", h)
    key = ("evaluation_subgraphs", extractor.value, *shape, adj.shape[0],
           array_digest(adj.indptr.astype(np.int64), adj.indices.astype(np.int64), links, labels))
    return _SETS.get(key, lambda: extract_subgraphs(adj, links, labels, extractor=extractor, k=k, h=h,
                                                    progress=progress).read_only(), free_first=True)


def forget_evaluation_subgraphs() -> None:
    """Drop every kept set (their memory is freed once no caller holds them)."""
    with _SETS.lock:
        _SETS.items.clear()
