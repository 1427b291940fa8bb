"""The graph publishers' base: :class:`GraphPublisher` (``fit`` releases a graph, ``publish`` returns
it as PyG ``Data``) and :class:`PublishConfig` (what every publishing method shares).

The publishers are :mod:`graphpriv.methods.publishing` (RandomPerturb, DICE, EdgeRand, LapGraph)
and :mod:`graphpriv.methods.ppgsl` (PPGSL); source: Wu, Yang, Han, Wang, Wu, "Learning-based
Privacy-Preserving Graph Publishing Against Sensitive Link Inference Attacks" (IEEE TKDE 2025),
Sec. V-A.4.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch
from pydantic import Field
from torch_geometric.data import Data

from graphpriv.attacks.suite import AttackSelection
from graphpriv.data.release import PublishedGraph
from graphpriv.data.validation import IF_PRESENT, check_data, check_node_pairs
from graphpriv.errors import DatasetError
from graphpriv.methods.base import MethodConfig, Progress
from graphpriv.methods.estimator import Estimator
from graphpriv.privacy.hooks import AuditHook, noise_scale_of
from graphpriv.privacy.report import PrivacyReport

__all__ = ["GraphPublisher", "PublishConfig", "publisher_rng"]


class PublishConfig(MethodConfig):
    """What every publishing method shares: the released features, and the protocol's settings
    (``sensitive_ratio``, ``test_ratio``, ``attacks``, ``utility``: read by the sensitive-link
    protocol of :mod:`graphpriv.evaluation.publishing`, not by ``publish``)."""

    sensitive_ratio: float = Field(0.10, gt=0, lt=1, description="share of edges hidden as E_s")
    test_ratio: float = Field(0.10, gt=0, lt=1, description="share of edges held out for LP utility")
    attacks: AttackSelection = Field("gae-sim", description="attacks to run: 'all', 'none' or ids (comma-separated)")
    utility: bool = Field(True, description="measure LP AUC (GAE) and NC micro-F1 (GCN)")
    use_features: bool = Field(True, description="release the node features with the graph")


def publisher_rng(seed: int, stream: int) -> np.random.Generator:
    """The mechanism's numpy generator: ``default_rng([seed, stream])``, one stream per method
    (so that two methods run with one seed draw independently of each other)."""
    return np.random.default_rng([seed, stream])


class GraphPublisher(Estimator):
    """Base of the graph publishers: ``fit`` releases a graph, ``publish`` returns it as ``Data``.

    Subclasses set ``config_cls`` (a :class:`PublishConfig`), ``needs_sensitive_links`` and
    implement :meth:`_release`. The fitted state is the release itself (``released_``); a file
    written by :meth:`save` holds the released edges, N and the released features (never the
    input graph nor the sensitive links).

    Args:
        random_state: seed of the mechanism's random draws (the same seed on the same graph
            gives the same release).
        **params: the hyperparameters of ``config_cls``.

    Attributes:
        released_: the release, a :class:`~graphpriv.data.release.PublishedGraph` over the input's
            node ids (the input's ``x`` as float32 when ``use_features``, else None).
        privacy_report_: the edge-level :class:`~graphpriv.privacy.report.PrivacyReport` of a DP
            publisher, None for an empirical one.

    Raises:
        ConfigError: an unknown hyperparameter or an invalid value.
    """

    config_cls: ClassVar[type[PublishConfig]] = PublishConfig
    #: Whether the mechanism reads the sensitive links (DICE, PPGSL) or treats every edge alike.
    needs_sensitive_links: ClassVar[bool] = False

    def fit(self, data: Data, *, sensitive_links: Any = None, progress: Progress | None = None,
            audit_hook: AuditHook | None = None) -> GraphPublisher:
        """Release a graph from ``data`` (the publisher's graph); returns ``self``.

        Args:
            data: PyG ``Data`` with ``edge_index [2, E]`` (either or both directions), ``num_nodes``
                N and optional ``x [N, F]`` (released when ``use_features``); labels are not read.
            sensitive_links: ``[2, S]`` integer node pairs (numpy or torch) the publisher protects;
                required by publishers with ``needs_sensitive_links`` (DICE, PPGSL), ignored by the
                others (checked when given). Not kept on the estimator.
            progress: optional ``progress(done, total, **info)`` callback (PPGSL's learner steps).
            audit_hook: for a privacy audit only (:mod:`graphpriv.audit`): its ``noise_scale``
                multiplies EdgeRand's flip probability and LapGraph's Laplace scales while the
                report still claims epsilon (a deliberate fault); None (default) for a release.

        Returns:
            ``self``, fitted (``released_``, ``privacy_report_``).

        Raises:
            DatasetError: ``data`` is not a valid graph (see
                :func:`~graphpriv.data.validation.check_data`: no edges, ids out of range,
                non-finite features, ...), or sensitive links missing, malformed or out of range.
            ConfigError: a release the hyperparameters refuse (e.g. EdgeRand above ``max_edges``).
        """
        who = type(self).__name__
        data = check_data(data, needs_features=self.use_features and IF_PRESENT, method=who)
        graph = PublishedGraph.from_data(data, with_features=self.use_features)
        sensitive = None
        if sensitive_links is None and self.needs_sensitive_links:
            raise DatasetError(f"{who} needs sensitive_links=[2, S] node pairs to protect (e.g. the sensitive "
                               "links of graphpriv.attacks.protocol.SensitiveLinkProtocol); none were given")
        if sensitive_links is not None:
            sensitive = np.ascontiguousarray(check_node_pairs(sensitive_links, graph.num_nodes,
                                                              name="sensitive_links"), dtype=np.int64)
            if self.needs_sensitive_links and sensitive.shape[1] == 0:
                raise DatasetError(f"{who} needs sensitive links to protect; sensitive_links is empty")
        pairs, report = self._release(graph, sensitive, progress, noise_scale_of(audit_hook))
        self.released_ = PublishedGraph(pairs, graph.num_nodes, graph.x)
        return self._fitted(report)

    def publish(self, data: Data, *, sensitive_links: Any = None, progress: Progress | None = None) -> Data:
        """Fit on ``data`` and return the release as PyG ``Data``.

        Args and Raises: as :meth:`fit`.

        Returns:
            ``Data`` with ``edge_index [2, 2|E'|]`` (both directions), ``num_nodes`` N (the
            input's node ids; isolated nodes kept) and ``x [N, F]`` when features are released
            (see :meth:`~graphpriv.data.release.PublishedGraph.to_data`).
        """
        return self.fit(data, sensitive_links=sensitive_links, progress=progress).released_.to_data()

    def _release(self, graph: PublishedGraph, sensitive: np.ndarray | None, progress: Progress | None,
                 noise_scale: float = 1.0) -> tuple[np.ndarray, PrivacyReport | None]:
        """The mechanism: ``(released pairs [2, E'], privacy report or None)`` from the input
        (``noise_scale``: an audit's fault on the DP mechanisms' noise, 1.0 otherwise)."""
        raise NotImplementedError

    def _get_state(self) -> dict[str, Any]:
        g = self.released_
        state: dict[str, Any] = {"pairs": torch.from_numpy(g.pairs.copy()), "num_nodes": g.num_nodes}
        if g.x is not None:
            state["x"] = torch.from_numpy(g.x.copy())
        return state

    def _set_state(self, state: dict[str, Any]) -> None:
        x = state.get("x")
        self.released_ = PublishedGraph(state["pairs"].numpy(), int(state["num_nodes"]),
                                        None if x is None else x.numpy())
