"""Empirical dependency level: how many training subgraphs contain each edge.

The proven bound M (:mod:`graphpriv.privacy.sensitivity`) must dominate the empirical maximum on
every graph; a violation is a bug and fails loudly (docs/privacy-dplp.md, step 3).
"""

from __future__ import annotations

import numpy as np

from graphpriv.errors import SensitivityError
from graphpriv.linkpred.subgraphs import SubgraphSet


def max_contextual_neighbours(subgraphs: SubgraphSet, num_nodes: int) -> int:
    """max over edges e of |LSN(e)|: the number of subgraphs whose edge set contains e.

    Args:
        subgraphs: Training subgraphs. num_nodes: N of the graph they were taken from.

    Returns:
        The maximum count (0 when no subgraph has an edge).
    """
    if subgraphs.edges.shape[1] == 0:
        return 0
    codes = subgraphs.edges[0] * num_nodes + subgraphs.edges[1]
    return int(np.unique(codes, return_counts=True)[1].max())


def check_dependency_bound(subgraphs: SubgraphSet, num_nodes: int, bound: int) -> int:
    """Return the empirical maximum, raising if it exceeds the proven ``bound``.

    Raises:
        SensitivityError: empirical max |LSN| > bound.
    """
    observed = max_contextual_neighbours(subgraphs, num_nodes)
    if observed > bound:
        raise SensitivityError(
            f"an edge lies in {observed} training subgraphs, above the proven bound M={bound}; the "
            "extractor or the bound is wrong, and the privacy guarantee would not hold"
        )
    return observed
