"""LapGraph + SGNN baseline (the DPLP paper's Table II "LapGraph"): perturb, then train without DP.

Source: Ran et al., "Differentially private graph neural networks for link prediction", Sec. VII-A
and Table II; LapGraph: Wu, Long, Wang, Gong, "LinkTeller: recovering private edges from graph
neural networks via influence analysis" (IEEE S&P 2022), Sec. VI.

The training graph is released with :func:`graphpriv.privacy.lapgraph.lapgraph` (edge-level
epsilon-DP); the SGNN (``h``-hop neighbourhood subgraphs, ``h = 1`` by default: the paper's
h = floor((k+1)/2) at its k = 2; ``h`` is a hyperparameter, not derived from ``k``) is then
trained on the released graph and predicts from it only, which is post-processing of the
release. ``info_`` also keeps exact facts of the training graph (``train_edges``,
``released_true_edges``), which the guarantee does not cover.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from pydantic import Field, ValidationInfo, field_validator
from torch_geometric.data import Data

from graphpriv.data.graph import undirected_pairs
from graphpriv.data.validation import check_data
from graphpriv.errors import ConfigError
from graphpriv.linkpred.subgraphs import Extractor
from graphpriv.methods.base import Progress, Timer, no_progress
from graphpriv.methods.dplp_subgraph import DPLPConfig, DPLPLinkPredictor
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.hooks import AuditHook, noise_scale_of
from graphpriv.privacy.lapgraph import lapgraph
from graphpriv.privacy.units import PrivacyUnit

__all__ = ["LapGraphConfig", "LapGraphLinkPredictor"]


class LapGraphConfig(DPLPConfig):
    """DPLP settings for the SGNN (defaults: 1-hop neighbourhood subgraphs, Adam at lr 0.001, as
    the registry's ``lapgraph-sgnn``), plus the LapGraph budget split.

    Read: ``epsilon`` (the release), ``delta`` (only the delta the report is stated at),
    ``count_fraction``, ``max_train_links``, ``extractor``, ``h`` (neighbourhood subgraphs) or ``k``
    (path subgraphs),
    ``lam``, ``batch_size``, ``epochs``, ``lr``, ``optimizer``, ``momentum`` (with ``sgd``),
    ``backbone``, ``sort_k``, ``hidden``, ``dropout``, ``eval_batch_size``; ``val_ratio`` and
    ``test_ratio`` by the protocol. Not used (inherited from :class:`DPLPConfig` so that the
    fields and the stored configs' hashes stay as they are): ``private`` (the release is always
    private and the SGNN always trained without noise: ``private=False`` is refused), ``project``
    and ``theta`` (no degree projection, negatives not capped), ``k_candidates``,
    ``theta_candidates``, ``selection_fraction`` (no private selection: ``k="auto"`` and
    ``theta="auto"`` are refused), ``max_grad_norm``, ``buckets``, ``accounting`` (no DP-SGD;
    the PLD accountant composes the release).
    """

    extractor: Extractor = Extractor.NEIGHBOURHOOD
    optimizer: str = Field("adam", pattern="^(sgd|adam)$")
    lr: float = Field(0.001, gt=0)
    count_fraction: float = Field(0.01, gt=0, lt=1, description="share of epsilon for the edge count")
    max_train_links: Annotated[int, Field(ge=1)] | None = Field(
        None, description="at most this many released edges as positive training examples, drawn uniformly, with "
                          "the same share of the negatives (for memory on large graphs, as SEAL's max-train-num); "
                          "None: all")

    @field_validator("k", "theta")
    @classmethod
    def _no_selection(cls, value: object) -> object:
        if value == "auto":
            raise ValueError("'auto' is DPLP's private selection, which LapGraph + SGNN does not run; pass an integer")
        return value

    @field_validator("private")
    @classmethod
    def _always_private(cls, value: bool, info: ValidationInfo) -> bool:
        # a saved file's fit_config is the SGNN's (private=False: trained without noise on the release)
        if not value and not (info.context or {}).get("fit_config"):
            raise ValueError("LapGraph + SGNN always releases the graph with LapGraph (edge-level DP); for a "
                             "non-private subgraph GNN use SEALGCNLinkPredictor (method seal-gcn) or SEALLinkPredictor (seal)")
        return value


class LapGraphLinkPredictor(DPLPLinkPredictor):
    """LapGraph-perturbed training graph, then the non-private subgraph GNN (SGNN) on it.

    ``fit`` releases the training graph with LapGraph (the edge count with ``count_fraction`` of
    epsilon, then Laplace noise on the adjacency and the top noisy |E| pairs kept), then trains the
    :class:`DPLPLinkPredictor` model without noise or projection on the released graph, choosing
    the epoch on the validation pairs when given; predictions extract subgraphs from the released
    graph (``graph_``).

    Privacy: epsilon-DP at edge level (the delta is only the one the report is stated at),
    neighbouring training graphs differing by adding or removing one edge. What is computed from
    the release alone (training, ``model_``, ``graph_``, predictions) is post-processing; the epoch
    choice also reads the held-out validation pairs, which are not edges of the training graph.
    Not covered: the facts ``info_`` keeps of the training graph itself, ``train_edges`` (its exact
    edge count) and ``released_true_edges`` (how many released edges are true edges). The report
    has the phases ``edge count`` and ``perturbation`` (PLD accountant). The saved file holds the
    released graph (``graph_``, needed to extract prediction subgraphs) and those facts of the
    private data in ``info_``: keep it as private as the data; the released graph and the model
    weights are what the guarantee covers.

    Hyperparameters that do not apply are refused (``k="auto"``, ``theta="auto"``,
    ``private=False``) or not read (see :class:`LapGraphConfig`).

    Args:
        random_state: seed: the release and the negatives draw from numpy
            ``default_rng([s, 2])``, the initial weights from ``torch.manual_seed(s)``, the batches
            from the torch generator ``1000 s + 1``.
        **params: the fields of :class:`LapGraphConfig`.

    Attributes:
        As :class:`DPLPLinkPredictor`'s; ``graph_`` is the released graph and ``info_`` adds
        ``released_edges`` and ``released_true_edges`` (released edges that are training edges).
    """

    config_cls = LapGraphConfig

    def fit(self, data: Data, val_pos: Any = None, val_neg: Any = None,
            progress: Progress | None = no_progress, *, audit_hook: AuditHook | None = None) -> LapGraphLinkPredictor:
        """Release the training graph ``data`` with LapGraph, then train the SGNN on the release.

        Args:
            data: the training graph (PyG ``Data``, ``edge_index [2, 2E]``, ``num_nodes`` N).
            val_pos, val_neg: optional held-out validation pairs ``[2, P]``, ``[2, Q]``, not edges
                of ``data``; both or neither.
            progress: called once per epoch (``None``: no progress).
            audit_hook: for a privacy audit only (:mod:`graphpriv.audit.edge`): its
                ``noise_scale`` multiplies LapGraph's Laplace scales while the ledger still claims
                epsilon (a deliberate fault); canaries are refused (the release is audited by edge
                canaries in the data). None (default) for a real fit.

        Returns:
            ``self``, fitted.

        Raises:
            DatasetError: malformed ``data`` or validation pairs (a pair that is an edge of
                ``data`` included). ConfigError: one validation set
                without the other, batch larger than the training set, a hook with canaries.
        """
        if audit_hook is not None and (not isinstance(audit_hook, AuditHook) or audit_hook.canaries is not None):
            raise ConfigError("audit_hook must be a graphpriv.privacy.hooks.AuditHook without canaries for "
                              "LapGraphLinkPredictor (its release is audited with canary edges in the data)")
        data = check_data(data, method=type(self).__name__)
        pairs, num_nodes = undirected_pairs(data.edge_index), int(data.num_nodes)
        val = self._validation_pairs(val_pos, val_neg, num_nodes, pairs)
        progress = progress or no_progress
        config, timer = self._config, Timer()
        ledger = Ledger(PrivacyUnit.EDGE, delta=config.delta, accounting=config.accounting, accountant="pld")
        rng = np.random.default_rng([self.random_state, 2])
        with timer.phase("perturbation"):
            released, (count_event, matrix_event) = lapgraph(pairs, num_nodes, epsilon=config.epsilon, rng=rng,
                                                             count_fraction=config.count_fraction,
                                                             noise_scale=noise_scale_of(audit_hook))
        ledger.spend(count_event, phase="edge count")
        ledger.spend(matrix_event, phase="perturbation")
        kept = np.isin(*(np.asarray(a[0]) * num_nodes + a[1] for a in (released, pairs)))
        info = {"released_edges": int(released.shape[1]), "released_true_edges": int(kept.sum())}
        sgnn = config.model_copy(update={"private": False, "project": False})
        return self._train(sgnn, released, released, num_nodes, train_edges=int(pairs.shape[1]), ledger=ledger,
                           spent=None, info=info, rng=rng, val=val, timer=timer, progress=progress)
