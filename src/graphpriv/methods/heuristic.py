"""Non-private neighbourhood heuristics for link prediction: CN, AA, RA, RA3 (reference points on
the same split as DPLP).

CN(u, v) = |N(u) ∩ N(v)| on the training graph (Liben-Nowell & Kleinberg, "The link-prediction
problem for social networks", JASIST 2007, Sec. 3); AA weighs each common neighbour z by
1 / ln |N(z)| (Adamic & Adar, "Friends and neighbors on the Web", Social Networks 2003); RA by
1 / |N(z)| (Zhou, Lü & Zhang, "Predicting missing links via local information", Eur. Phys. J. B
2009); RA3 sums 1 / (|N(x)| |N(y)|) over the simple paths u - x - y - v (the length-3 paths of
Kovács et al., Nature Communications 2019, weighted as RA weighs a common neighbour:
:func:`~graphpriv.linkpred.heuristics.resource_allocation_paths3`). With k = 2 path subgraphs every DPLP-PS input is u, v and their common neighbours, so CN's
AUC is the best any k = 2 model can reach (tests/nn/test_subgraph_gnn.py). The split and the AUCs
are the link-prediction protocol's (:func:`graphpriv.evaluation.link.run_cn`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from pydantic import Field
from torch_geometric.data import Data

from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.data.validation import check_data, check_node_pairs
from graphpriv.errors import ConfigError
from graphpriv.linkpred.heuristics import (
    adamic_adar,
    common_neighbours,
    resource_allocation,
    resource_allocation_paths3,
)
from graphpriv.methods.base import MethodConfig, Progress, no_progress
from graphpriv.methods.estimator import Estimator
from graphpriv.methods.pair_auc import PairAUC

__all__ = ["HEURISTICS", "CommonNeighbours", "CommonNeighboursConfig", "NeighbourhoodHeuristic", "check_heuristic"]

#: The heuristics by id: ``[N, N]`` CSR adjacency and ``[2, P]`` pairs -> ``[P]`` float64 scores.
HEURISTICS = {"cn": common_neighbours, "aa": adamic_adar, "ra": resource_allocation, "ra3": resource_allocation_paths3}


def check_heuristic(heuristic: object) -> str:
    """``heuristic`` when it is one of :data:`HEURISTICS`' ids.

    Raises:
        ConfigError: any other value (the message lists the ids).
    """
    if not isinstance(heuristic, str) or heuristic not in HEURISTICS:
        raise ConfigError(f"heuristic must be one of {', '.join(HEURISTICS)} (got {heuristic!r})")
    return heuristic


class CommonNeighboursConfig(MethodConfig):
    """The split of DPLP's protocol (85/5/10 by default); the heuristics have no hyperparameter."""

    val_ratio: float = Field(0.05, ge=0, lt=1, description="protocol: share of edges held out for validation")
    test_ratio: float = Field(0.10, gt=0, lt=1, description="protocol: share of edges held out for testing")


class NeighbourhoodHeuristic(PairAUC, Estimator):
    """A neighbourhood heuristic on the training graph as link scores (CN, AA, RA or RA3); no
    differential privacy.

    ``fit`` keeps the training graph; :meth:`predict_proba` scores each pair in it. The scores
    (higher: more likely linked) are not probabilities: they are not in [0, 1]; only their order
    matters (:meth:`score` is a ROC-AUC).

    No privacy: the saved file holds the training graph (``graph_``, needed to score pairs at
    prediction): keep it as private as the data; nothing in it is protected.

    Args:
        heuristic: ``cn`` (default), ``aa``, ``ra`` or ``ra3`` (:data:`HEURISTICS`); a constructor
            argument beside the hyperparameters, picked by the method id (``cn``, ``aa``, ``ra``, ``ra3``).
        random_state: unused (the heuristics draw nothing); kept for the estimator interface.
        **params: the fields of :class:`CommonNeighboursConfig` (read by the protocol only).

    Attributes:
        graph_: ``[2, E]`` LongTensor, the training graph's undirected edges (u < v).
        num_nodes_: N. privacy_report_: ``None`` (non-private).

    Raises:
        ConfigError: an unknown ``heuristic`` or hyperparameter.
    """

    config_cls = CommonNeighboursConfig
    variant_param = "heuristic"
    _fitted_private = ("_adj",)

    def __init__(self, heuristic: str = "cn", random_state: int | None = None, **params: Any) -> None:
        super().__init__(random_state=random_state, **params)
        self.heuristic = check_heuristic(heuristic)

    def _check_variant(self, value: Any, config: CommonNeighboursConfig) -> str:
        return check_heuristic(value)

    def fit(self, data: Data, val_pos: Any = None, val_neg: Any = None,
            progress: Progress | None = no_progress) -> NeighbourhoodHeuristic:
        """Keep the training graph ``data``.

        Args:
            data: the training graph (PyG ``Data``, ``edge_index [2, 2E]``, ``num_nodes`` N).
            val_pos, val_neg: accepted for the link protocol's common call and checked (``[2, P]``
                node ids); a heuristic selects nothing, so they are not used.
            progress: called once, ``progress(1, 1)`` (``None``: no progress).

        Returns:
            ``self``, fitted.

        Raises:
            DatasetError: malformed ``data`` (no edges, ids out of range, non-finite features) or
                validation pairs.
        """
        data = check_data(data, method=type(self).__name__)
        num_nodes = int(data.num_nodes)
        for name, pairs in (("val_pos", val_pos), ("val_neg", val_neg)):
            if pairs is not None:
                check_node_pairs(pairs, num_nodes, name=name)
        self.graph_ = torch.from_numpy(np.ascontiguousarray(undirected_pairs(data.edge_index)))
        self.num_nodes_ = num_nodes
        self._adj = None
        (progress or no_progress)(1, 1)
        return self._fitted(None)

    def predict_proba(self, pairs: Any) -> torch.Tensor:
        """The heuristic's scores of node pairs in the training graph.

        Args:
            pairs: ``[2, P]`` integer node ids in ``[0, num_nodes_)`` (LongTensor or numpy).

        Returns:
            ``[P]`` float64 tensor: CN counts |N(u) ∩ N(v)|, or AA / RA sums over the common
            neighbours (not probabilities: not in [0, 1]).

        Raises:
            NotFittedError: before ``fit``. DatasetError: a shape other than ``[2, P]``, a
                non-integer array or an id out of range.
        """
        self._check_fitted()
        pairs = check_node_pairs(pairs, self.num_nodes_, name="pairs")
        if self.__dict__.get("_adj") is None:
            self._adj = to_csr(self.graph_.numpy(), self.num_nodes_)
        return torch.from_numpy(np.asarray(HEURISTICS[self.heuristic](self._adj, pairs), dtype=np.float64))

    def _get_state(self) -> dict[str, Any]:
        return {"graph": self.graph_, "num_nodes": self.num_nodes_}

    def _set_state(self, state: dict[str, Any]) -> None:
        self.graph_, self.num_nodes_, self._adj = state["graph"].long(), int(state["num_nodes"]), None


class CommonNeighbours(NeighbourhoodHeuristic):
    """:class:`NeighbourhoodHeuristic` with ``heuristic='cn'`` by default: common-neighbour counts
    (the ``cn`` method id; the trivial baseline of every link predictor's result)."""
