"""The synthetic-graph generators' base: :class:`GraphGenerator` (``fit`` releases statistics of a
graph under edge-level differential privacy, ``generate`` draws graphs from them for free) and
:class:`GeneratorConfig` (what every such method shares).

The generators are :class:`graphpriv.methods.tmf.TmF` (``tmf``),
:class:`graphpriv.methods.dp_1k.DP1K` (``dp-1k``) and :class:`graphpriv.methods.privgraph.PrivGraph`
(``privgraph``); their mechanisms live in :mod:`graphpriv.synthesis.top_m_filter`,
:mod:`graphpriv.synthesis.degree_sequence` and :mod:`graphpriv.synthesis.privgraph`. Usage::

    est = TmF(epsilon=4.0, random_state=0).fit(data)
    est.released_, est.privacy_report_     # the DP release, its edge-level report
    graph = est.generate(seed=1)           # a PyG Data: post-processing, no privacy cost
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import torch
from dp_accounting import dp_event
from pydantic import Field
from torch_geometric.data import Data

from graphpriv.attacks.suite import AttackSelection
from graphpriv.data.graph import undirected_pairs
from graphpriv.data.release import PublishedGraph
from graphpriv.data.validation import check_data, check_seed
from graphpriv.errors import DatasetError
from graphpriv.methods.base import MethodConfig
from graphpriv.methods.estimator import Estimator
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.limits import MAX_EPSILON
from graphpriv.privacy.units import PrivacyUnit

__all__ = ["INPUT_NOTE", "GeneratorConfig", "GraphGenerator", "Release"]

log = logging.getLogger(__name__)


class GeneratorConfig(MethodConfig):
    """What every DP synthetic-graph generator shares: the edge-level epsilon and the delta its
    report is stated at (the mechanisms are pure epsilon-DP), and the synthesis protocol's settings
    (``test_ratio``, ``evaluate``, ``attacks``: read by :mod:`graphpriv.evaluation.generators`
    only, never by ``fit``). Epsilon is capped at
    :data:`~graphpriv.privacy.limits.MAX_EPSILON` here, not only at the registry's front door: the
    PLD accountant's grid for a Laplace event grows with epsilon (about 3 s at 100, and out of
    memory at 1e4)."""

    epsilon: float = Field(4.0, gt=0, le=MAX_EPSILON, allow_inf_nan=False,
                           description="edge-level epsilon (pure DP; at most graphpriv's MAX_EPSILON = 100)")
    delta: float = Field(1e-5, gt=0, lt=1, description="the delta the report is stated at (the mechanism is pure DP)")
    test_ratio: float = Field(0.2, gt=0, lt=1, description="real edges held out for link prediction (protocol)")
    evaluate: bool = Field(True, description="PGB's queries, LP AUC and (labels) NC micro-F1 of the synthetic graph")
    attacks: AttackSelection = Field("gae-sim", description="link-inference attacks on the synthetic graph: 'none', 'all' or ids")


@dataclass
class Release:
    """What a generator's mechanism returns to :meth:`GraphGenerator.fit`.

    Attributes:
        released: the released statistics (the subclass's ``released_``).
        events: ``[(phase, DpEvent)]``, every noisy step of the release, in order.
        notes: sentences for the privacy report (what the sensitivities rest on).
        info: numbers derived from the release only (never from the input graph alone), JSON values.
    """

    released: Any
    events: list[tuple[str, dp_event.DpEvent]]
    notes: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


#: The report's statement of how the input is read: the same words for every input, since which
#: normalisations applied is a fact of the raw input outside the guarantee (``check_data`` logs them).
INPUT_NOTE = ("the input is read as an undirected simple graph on its N nodes (one-way pairs symmetrised, "
              "self-loops and duplicate edges dropped, edge_weight and edge_attr ignored: which of these applied is "
              "logged, not reported); the guarantee is about that graph, over graphs with at least one edge (an "
              "edgeless graph is refused before any noise is drawn)")


def _check_has_edges(data: Any, who: str) -> None:
    """A clear DatasetError for a graph without an edge between two different nodes."""
    if not isinstance(data, Data):
        return  # check_data names what is wrong
    ei = getattr(data, "edge_index", None)
    if (isinstance(ei, torch.Tensor) and ei.dim() == 2 and ei.size(0) == 2 and not ei.is_floating_point()
            and not bool((ei[0] != ei[1]).any())):
        name = getattr(data, "name", None)
        where = f"{name}: " if isinstance(name, str) else ""
        raise DatasetError(f"{where}{who} needs a graph with at least one edge: data.edge_index has "
                           f"{ei.size(1)} columns and none joins two different nodes; pass the graph's edges as "
                           "edge_index [2, E] (a synthetic-graph generator learns nothing from an empty graph)")


class GraphGenerator(Estimator):
    """Base of graphpriv's DP synthetic-graph generators: ``fit`` releases, ``generate`` draws.

    ``fit`` reads an undirected simple graph (a directed ``edge_index`` is symmetrised, self-loops
    and duplicates dropped, weights ignored: logged, and the report says the policy, not which
    applied), runs the subclass's mechanism once and
    keeps only its release (``released_``), never the input graph; ``generate`` turns the release
    into a graph and is post-processing (no privacy cost, any number of times). Subclasses set
    ``config_cls`` (a :class:`GeneratorConfig`) and ``_fit_stream``, and implement
    :meth:`_release`, :meth:`_generate`, :meth:`_pack` and :meth:`_unpack`.

    Privacy: edge-level, neighbouring graphs differ by adding or removing one undirected edge on the
    public node set [N] (dp-accounting's ``ADD_OR_REMOVE_ONE``). Every noisy step is a pure-DP
    event (a ``LaplaceDpEvent``, or for an exponential-mechanism selection the
    ``DiscreteLaplaceDpEvent`` whose loss dominates it) spent on a
    :class:`~graphpriv.privacy.accountant.Ledger` with the PLD accountant; the mechanisms are pure
    epsilon-DP (delta = 0), which the report's notes state, while its ``epsilon`` is the PLD
    accountant's at ``delta`` (the Ledger states these events at a delta in (0, 1) only, as for
    EdgeRand and LapGraph): at most ``epsilon`` up to the accountant's grid, which rounds each
    event's loss up by at most 1e-4.

    Args:
        random_state: seed of ``fit``'s noise (an int in [0, 2^32 - 1]; None: a fresh secret seed)
            and the default seed of :meth:`generate`.
        **params: the hyperparameters of ``config_cls``.

    Attributes:
        released_: the released statistics (the subclass says which).
        num_nodes_: N, the fitted graph's node count (public).
        info_: numbers derived from the release (dict of JSON values).
        privacy_report_: the edge-level :class:`~graphpriv.privacy.report.PrivacyReport`.
        ledger_: the fit's Ledger (None for an estimator read by :meth:`load`).

    Raises:
        ConfigError: an unknown hyperparameter or an invalid value (e.g. epsilon <= 0).
    """

    config_cls: ClassVar[type[GeneratorConfig]] = GeneratorConfig
    #: The numpy stream of ``fit``'s noise: ``default_rng([random_state, _fit_stream])``.
    _fit_stream: ClassVar[int] = 0
    #: The numpy stream of ``generate``'s draws: ``default_rng([seed, _generate_stream])``.
    _generate_stream: ClassVar[int] = 1

    def fit(self, data: Data) -> GraphGenerator:
        """Release the statistics of ``data``'s graph under edge-level pure epsilon-DP; returns ``self``.

        Args:
            data: PyG ``Data`` with ``edge_index [2, E]`` (integer ids in [0, N), either or both
                directions: a one-way pair (u, v) is symmetrised, self-loops and duplicates are
                dropped) and ``num_nodes`` N (public; isolated nodes count). ``edge_weight`` or
                ``edge_attr`` are ignored (every listed edge counts once). Which normalisations
                applied is logged, never put in the report (:data:`INPUT_NOTE`, the same for every
                input: it is a fact of the raw input outside the guarantee). Features and labels
                are checked when present, never read.

        Returns:
            ``self``, fitted (``released_``, ``num_nodes_``, ``info_``, ``privacy_report_``,
            ``ledger_``).

        Raises:
            DatasetError: not a valid graph (see :func:`~graphpriv.data.validation.check_data`), or
                no edge between two different nodes (the message names the fix), or fewer nodes
                than the mechanism needs.
        """
        who = type(self).__name__
        _check_has_edges(data, who)
        weighted = [name for name in ("edge_weight", "edge_attr")
                    if isinstance(data, Data) and getattr(data, name, None) is not None]
        if weighted:
            log.info("%s: input %s ignored (every listed edge counts once)", who, " and ".join(weighted))
        data = check_data(data, method=who)  # logs the normalisations it makes
        num_nodes = int(data.num_nodes)
        pairs = undirected_pairs(data.edge_index)
        release = self._release(pairs, num_nodes, np.random.default_rng([self.random_state, self._fit_stream]))
        ledger = Ledger(PrivacyUnit.EDGE, delta=self.delta, accountant="pld")
        for phase, event in release.events:
            ledger.spend(event, phase=phase)
        notes = [INPUT_NOTE, *release.notes,
                 (f"pure ({self.epsilon:g}, 0)-DP by basic composition of the mechanisms above; epsilon is stated at "
                  f"delta = {self.delta:g} by the PLD accountant (at most {self.epsilon:g}, up to its grid's "
                  "rounding up of 1e-4 per event)"),
                 "generate() is post-processing of the release: any number of graphs, no further privacy cost"]
        report = ledger.report(target_epsilon=self.epsilon, notes=notes)
        self.released_, self.num_nodes_, self.info_, self.ledger_ = release.released, num_nodes, release.info, ledger
        return self._fitted(report)

    def generate(self, seed: int | None = None) -> Data:
        """A synthetic graph drawn from the release (post-processing: no privacy cost).

        Args:
            seed: the draws' seed, an int in [0, 2^32 - 1]; None (default): ``random_state``. The
                same seed gives the same graph.

        Returns:
            PyG ``Data`` with ``edge_index [2, 2|E'|]`` int64 (every undirected edge in both
            directions, no self-loop, no duplicate) and ``num_nodes`` N (the fitted graph's node
            ids; isolated nodes kept).

        Raises:
            NotFittedError: before ``fit``. ConfigError: a bad ``seed``.
        """
        self._check_fitted()
        seed = self.random_state if seed is None else check_seed(seed)
        pairs = self._generate(np.random.default_rng([seed, self._generate_stream]))
        return PublishedGraph(pairs, self.num_nodes_).to_data()

    # -- the subclass's mechanism ------------------------------------------------------------------

    def _release(self, pairs: np.ndarray, num_nodes: int, rng: np.random.Generator) -> Release:
        """The mechanism: ``pairs`` ``[2, m]`` (u < v, distinct, no self-loop), N, ``fit``'s generator."""
        raise NotImplementedError

    def _generate(self, rng: np.random.Generator) -> np.ndarray:
        """A graph ``[2, E']`` (pairs, any direction) from ``released_`` only, with ``rng``'s draws."""
        raise NotImplementedError

    def _pack(self) -> torch.Tensor:
        """``released_`` as one tensor for :meth:`save`."""
        raise NotImplementedError

    def _unpack(self, tensor: torch.Tensor, num_nodes: int) -> Any:
        """``released_`` back from :meth:`_pack`'s tensor (ValueError when malformed)."""
        raise NotImplementedError

    # -- files -------------------------------------------------------------------------------------

    def _get_state(self) -> dict[str, Any]:
        return {"released": self._pack(), "num_nodes": self.num_nodes_, "info": json.dumps(self.info_)}

    def _set_state(self, state: dict[str, Any]) -> None:
        released = state["released"]
        if not isinstance(released, torch.Tensor):
            raise TypeError("the release must be a tensor")
        self.num_nodes_ = int(state["num_nodes"])
        self.released_ = self._unpack(released, self.num_nodes_)
        self.info_ = json.loads(state["info"])
        self.ledger_ = None  # a file keeps the privacy report, not the ledger
