"""Node-level canary audit of the node classifiers: DPAR (:class:`~graphpriv.methods.dpar.DPARClassifier`)
and the feature-only DP-SGD baseline (:class:`~graphpriv.methods.mlp.MLPClassifier`, ``dp-mlp``).

Sources: Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run" (NeurIPS 2023),
Thm. 5.2 (one run, m canaries each included with probability 1/2, (eps, delta)-DP); Zhang, Lee,
Ma, Lou, Yang, Xiong, "DPAR: Decoupled Graph Neural Networks with Node-Level Differential Privacy"
(WWW 2024) for the mechanism audited.

Canaries. m synthetic nodes, each with random sparse binary features (the training nodes' mean
number of active features, set to the mean non-zero feature value) and a uniformly random label:
examples the model can only fit by memorising them. Each canary joins the training nodes
independently with probability 1/2 (node-level add/remove, the relation of both estimators). By
default the canaries are isolated nodes: a valid neighbour under add/remove (the relation covers
any node with any edges, none included) and the strongest for the attack below, since an isolated
canary's APPR row is its own one-hot entry, so its features meet its label in its own training row
with full weight. ``canary_edges`` = d > 0 gives each inserted canary d edges to random training
nodes: the canary then also enters its neighbours' APPR rows, and the row cap and the group size m
see it (DPAR only; the MLP reads no edge).

Mechanism. The estimator's own ``fit`` on the graph (every labelled node of ``data`` trains, plus
the inserted canaries): for DPAR the q' Poisson node sample (canaries included), the M seeds,
APPR, DP-APPR rows, Pi (row cap, column clip), the group size m and DP-SGD calibrated by the same
accounting; for the MLP Poisson DP-SGD over the training rows. With q' < 1 an inserted canary is
used only when sampled (probability q'). The audit's fault (``noise_scale``) reaches the DP-SGD
noise through ``fit(..., audit_hook=...)``.

Attack. Score = minus the cross-entropy of the canary's label under the released f_theta on the
canary's features (``model_.mlp``). DPAR's guesser is one-sided by default: "inserted" for the
``guesses`` highest scores (default m q' / 4, half the inserted canaries expected in the sample),
abstaining on the rest, because the low scores mix absent canaries with inserted ones the model
never fits (outside the q' sample, or drawn as seeds whose DP-APPR row is mostly noise). The MLP's
is two-sided (``guesses`` / 2 each way, default m / 5).

Claim. The epsilon of the run's own noise at ``audit_delta`` (the one-run bound adds 2 m delta to
its p-value, useless at the deltas the runs are calibrated at), under the run's accounting mode
(:meth:`~graphpriv.methods.estimator.Estimator.epsilon_at`). For DPAR in ``paper`` mode that is the
paper's analysis, which is not a guarantee: the report's ``accounting`` says so and gives the
rigorous epsilon of the same noise.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch_geometric.data import Data

from graphpriv.audit import registry
from graphpriv.audit.fitting import (
    audited_copy,
    check_audit_args,
    check_enough_guesses,
    claim,
    dataset_name,
    describe,
)
from graphpriv.audit.statistics import AuditReport, audit_from_scores, guesses_made
from graphpriv.data.graph import undirected_pairs
from graphpriv.data.validation import check_data
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.methods.dpar import DPARClassifier
from graphpriv.methods.mlp import MLPClassifier
from graphpriv.privacy.accountant import check_delta
from graphpriv.progress import Progress, no_progress, prefixed_progress

__all__ = ["CALIBRATION_DELTA", "audit_node_classifier", "canary_nodes"]

#: The delta node-level audits calibrate their runs' noise at by default (DPAR's paper setting on
#: Cora-ML); the claim audited is the same noise's epsilon at ``audit_delta``.
CALIBRATION_DELTA = registry.CALIBRATION_DELTA


def canary_nodes(x: torch.Tensor, train: np.ndarray, count: int, num_classes: int,
                 rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` canary nodes: binary features with the training nodes' mean number of active
    features (each set to the mean non-zero value of ``x``) at random positions, random labels.

    Args:
        x: ``[N, F]`` features. train: ``[T]`` training node ids. num_classes: C.

    Returns:
        ``(features [count, F] float32, labels [count] int64)``.
    """
    active = max(1, round(float((x[train] > 0).sum(1).float().mean())))
    value = float(x[x > 0].mean()) if bool((x > 0).any()) else 1.0
    columns = np.argsort(rng.random((count, x.shape[1])), axis=1)[:, :active]
    features = torch.zeros(count, x.shape[1])
    features[torch.arange(count).repeat_interleave(active), torch.from_numpy(columns.ravel())] = value
    return features, torch.from_numpy(rng.integers(0, num_classes, count))


def audit_node_classifier(estimator: DPARClassifier | MLPClassifier, data: Data, *, canaries: int | None = None,
                          seed: int = 0, noise_scale: float = 1.0, guesses: int | None = None,
                          one_sided: bool | None = None, canary_edges: int = 0, confidence: float = 0.95,
                          audit_delta: float = 1e-5, name: str | None = None,
                          progress: Progress = no_progress) -> list[AuditReport]:
    """Node-level canary audit of one fit of ``estimator`` on ``data`` (module docstring).

    Args:
        estimator: a :class:`DPARClassifier` (any ``appr``; ``exact`` is the non-private
            reference) or :class:`MLPClassifier`, whose hyperparameters define the run (a copy
            with ``random_state=seed`` is fitted). data: a graph with ``x [N, F]`` and ``y [N]``
            (-1: unlabelled); every labelled node trains.
        canaries: m (default 1000 for DPAR, 500 for the MLP). seed: the canaries, coins and the
            fit. noise_scale: a deliberate fault on the DP-SGD noise (1.0: the real fit; 0: the
            same steps without noise, claim inf). guesses: how many guesses (default: one-sided,
            m q' / 4 rounded, at least 1; two-sided, m / 5). one_sided: guess "inserted" only
            (default: True for DPAR, False for the MLP). canary_edges: edges from each inserted
            canary to random training nodes (DPAR only; 0: isolated canaries). confidence: of the
            bounds. audit_delta: the delta of the claim and of the one-run bound. name: the
            report's ``method`` (default: the class name).
            progress: reports the audited fit, each of its phases prefixed ``audited``
                (:mod:`graphpriv.progress`).

    Returns:
        ``[AuditReport]`` (unit ``node``).

    Raises:
        ConfigError: another estimator class, fewer than 2 canaries, canary_edges < 0 (or > 0 for
            the MLP), a bad noise_scale or seed. DatasetError: a graph without features or labels.
        PrivacyError: a bad ``audit_delta``.
    """
    is_dpar = type(estimator) is DPARClassifier
    if not is_dpar and type(estimator) is not MLPClassifier:
        raise ConfigError(f"the node-level audit covers DPARClassifier and MLPClassifier (got "
                          f"{type(estimator).__name__})")
    m = (1000 if is_dpar else 500) if canaries is None else canaries
    hook = check_audit_args(m, noise_scale, confidence)
    one_sided = is_dpar if one_sided is None else one_sided
    rate = float(estimator.node_rate) if is_dpar else 1.0

    def guesses_of(count: int) -> int:  # the default one-sided rule: m q' / 4 (half the sampled inserted)
        default = max(1, round(count * rate / 4)) if one_sided and guesses is None else guesses
        return guesses_made(count, default, one_sided=one_sided)

    check_enough_guesses(guesses_of, m, confidence)
    if isinstance(canary_edges, bool) or not isinstance(canary_edges, int) or canary_edges < 0:
        raise ConfigError(f"canary_edges must be an integer >= 0 (got {canary_edges!r})")
    if canary_edges and not is_dpar:
        raise ConfigError("canary_edges needs a classifier that reads edges (DPARClassifier); the MLP reads none")
    check_delta(audit_delta)
    if getattr(data, "x", None) is None or getattr(data, "y", None) is None:
        raise DatasetError("the node-level audit needs node features (data.x) and labels (data.y)")
    data = check_data(data, needs_features=True, needs_labels=True, method="audit_node_classifier",
                      allow_no_edges=True)

    rng = np.random.default_rng([seed, 3041])
    x, y = torch.as_tensor(data.x, dtype=torch.float32), torch.as_tensor(data.y, dtype=torch.long)
    n, num_classes = x.shape[0], int(y.max()) + 1
    train = np.flatnonzero(y.numpy() >= 0)
    canary_x, canary_y = canary_nodes(x, train, m, num_classes, rng)
    inserted = rng.random(m) < 0.5
    ids = n + np.arange(m)
    edges = undirected_pairs(data.edge_index) if data.edge_index.numel() else np.zeros((2, 0), np.int64)
    if canary_edges:
        ends = np.stack([rng.choice(train, min(canary_edges, train.size), replace=False) for _ in range(m)])
        own = np.repeat(ids[:, None], ends.shape[1], axis=1)
        edges = np.concatenate([edges, np.stack([own[inserted].ravel(), ends[inserted].ravel()])], axis=1)
    both = torch.from_numpy(np.concatenate([edges, edges[::-1]], axis=1).copy())
    audited = Data(x=torch.cat([x, canary_x]), y=torch.cat([y, canary_y]), edge_index=both, num_nodes=n + m)
    fitted = audited_copy(estimator, seed).fit(audited, np.concatenate([train, ids[inserted]]),
                                               num_classes=num_classes, audit_hook=hook,
                                               progress=prefixed_progress(progress, "audited"))
    with torch.no_grad():
        scores = -torch.nn.functional.cross_entropy(fitted.model_.mlp(canary_x), canary_y, reduction="none").numpy()

    claimed, accounting = claim(fitted, audit_delta, noise_scale)
    report = fitted.privacy_report_
    if report is not None and report.accounting == "paper" and math.isfinite(claimed):
        accounting += (f"; the paper's analysis is NOT a guarantee: the same noise is eps = "
                       f"{fitted.epsilon_at(audit_delta, accounting='rigorous'):.4g} rigorous")
    if guesses is None and one_sided:
        guesses = max(1, round(m * rate / 4))
    notes = [(f"{m} canary nodes ({'isolated' if not canary_edges else f'{canary_edges} edges each'}, random "
              f"sparse features, random labels), each a training node with probability 1/2; one "
              f"{type(estimator).__name__}.fit")]
    if is_dpar:
        seen = hook.observed
        local = np.flatnonzero(seen["sample"] >= n)  # the sampled canaries' rows in Pi
        own_row = int((seen["pi"].diagonal()[local] != 0).sum())
        notes[0] += f" (q' = {rate:g}, m = {seen['group']}, noise std {seen['noise_std']:.4g})"
        notes.append(f"{int(inserted.sum())} inserted, {local.size} in the q' sample, {own_row} with their own "
                     "features in their own training row")
    return [audit_from_scores(
        scores, inserted, method=describe(estimator, name), dataset=dataset_name(data), unit="node",
        claimed_epsilon=claimed, accounting=accounting,
        attack="loss of the canary's label under f_theta (lowest: inserted" + (")" if one_sided else ", highest: not)"),
        guesses=guesses, confidence=confidence, audit_delta=audit_delta, notes=notes, one_sided=one_sided)]
