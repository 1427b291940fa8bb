"""Non-private common-neighbour link prediction on the same split (a reference point).

CN(u, v) = |N(u) ∩ N(v)| on the training graph (Liben-Nowell & Kleinberg, 2007). With k = 2 path
subgraphs every DPLP-PS input is u, v and their common neighbours, so CN's AUC is the best any
k = 2 model can reach (tests/nn/test_subgraph_gnn.py).
"""

from __future__ import annotations

import numpy as np
from pydantic import Field
from sklearn.metrics import roc_auc_score
from torch_geometric.data import Data

from graphpriv.data.graph import to_csr
from graphpriv.data.splits import link_split
from graphpriv.data.validation import check_data, check_seed
from graphpriv.linkpred.heuristics import common_neighbours
from graphpriv.methods.base import MethodConfig, Progress, Result, Timer, no_progress


class CommonNeighboursConfig(MethodConfig):
    """The split of DPLP's protocol (85/5/10 by default)."""

    val_ratio: float = Field(0.05, ge=0, lt=1)
    test_ratio: float = Field(0.10, gt=0, lt=1)


def run(config: CommonNeighboursConfig, data: Data, *, seed: int, method: str = "cn",
        progress: Progress = no_progress) -> Result:
    """Score the validation and test pairs of the seeded link split by CN; report AUCs."""
    data = check_data(data, method=method)
    seed = check_seed(seed)
    timer = Timer()
    with timer.phase("scoring"):
        split = link_split(data, val_ratio=config.val_ratio, test_ratio=config.test_ratio, seed=seed)
        adj = to_csr(split.train_edge_index, split.num_nodes)
        metrics = {}
        for name, pos, neg in (("val", split.val_pos, split.val_neg), ("test", split.test_pos, split.test_neg)):
            scores = common_neighbours(adj, np.concatenate([pos, neg], axis=1))
            labels = np.r_[np.ones(pos.shape[1]), np.zeros(neg.shape[1])]
            metrics[f"{name}_auc"] = float(roc_auc_score(labels, scores))
    progress(1, 1)
    return Result(method=method, dataset=str(data.name), seed=seed, config=config.model_dump(mode="json"),
                  metrics={"test_auc": metrics["test_auc"], "val_auc": metrics["val_auc"]},
                  timings=timer.finish())
