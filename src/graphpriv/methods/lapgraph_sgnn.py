"""LapGraph + SGNN baseline (DPLP paper, Table II "LapGraph"): perturb, then train without DP.

The training graph is released with :func:`graphpriv.privacy.lapgraph.lapgraph` (edge-level
epsilon-DP); the SGNN (neighbourhood subgraphs, h = floor((k+1)/2), as the paper sets it) is then
trained and evaluated on the released graph only, which is post-processing.
"""

from __future__ import annotations

import numpy as np
from pydantic import Field
from torch_geometric.data import Data

from graphpriv.data.splits import link_split
from graphpriv.data.validation import check_data, check_seed
from graphpriv.methods.base import Progress, Result, Timer, no_progress
from graphpriv.methods.dplp_subgraph import DPLPConfig, fit_and_evaluate
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.lapgraph import lapgraph
from graphpriv.privacy.units import PrivacyUnit


class LapGraphConfig(DPLPConfig):
    """DPLP settings for the SGNN, plus the LapGraph budget split."""

    count_fraction: float = Field(0.01, gt=0, lt=1, description="share of epsilon for the edge count")


def run(config: LapGraphConfig, data: Data, *, seed: int, method: str = "lapgraph-sgnn",
        progress: Progress = no_progress) -> Result:
    """Release the training graph with LapGraph, train the non-private SGNN on it, test it.

    Returns:
        :class:`Result`; its privacy report has phases ``edge count`` and ``perturbation``.
    """
    data = check_data(data, method=method)
    seed = check_seed(seed)
    timer = Timer()
    with timer.phase("split"):
        split = link_split(data, val_ratio=config.val_ratio, test_ratio=config.test_ratio, seed=seed)
    ledger = Ledger(PrivacyUnit.EDGE, delta=config.delta, accounting=config.accounting, accountant="pld")
    rng = np.random.default_rng([seed, 2])
    with timer.phase("perturbation"):
        released, (count_event, matrix_event) = lapgraph(
            split.train_edge_index, split.num_nodes, epsilon=config.epsilon, rng=rng,
            count_fraction=config.count_fraction)
    ledger.spend(count_event, phase="edge count")
    ledger.spend(matrix_event, phase="perturbation")
    kept = np.isin(*(np.asarray(a[0]) * split.num_nodes + a[1] for a in (released, split.train_edge_index)))
    info = {"released_edges": int(released.shape[1]), "released_true_edges": int(kept.sum())}
    sgnn = config.model_copy(update={"private": False, "project": False})
    result = fit_and_evaluate(sgnn, split, released, released, seed=seed, method=method, ledger=ledger,
                              spent=None, info=info, timer=timer, progress=progress, rng=rng,
                              dataset=str(data.name))
    # record the configuration that was asked for (the store keys reruns on it)
    return result.model_copy(update={"config": config.model_dump(mode="json")})
