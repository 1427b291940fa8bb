"""Node-level canary audit of GAP-NDP and ProGAP-NDP (:class:`~graphpriv.methods.gap.GAPNodeClassifier`,
:class:`~graphpriv.methods.progap.ProGAPNodeClassifier`).

Sources: Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run" (NeurIPS 2023),
Thm. 5.2 (one run, m canaries each included with probability 1/2); Sajadmanesh et al., "GAP"
(USENIX Security 2023), Sec. 5.2, and "ProGAP" (WSDM 2024), Sec. 5 (the mechanisms audited).

Canaries: m synthetic nodes with random sparse binary features and random labels
(:func:`graphpriv.audit.node.canary_nodes`), each added to the graph, isolated and labelled, as a
training node with probability 1/2; a canary left out is absent from the graph (node-level
add/remove). An isolated canary adds no edge, so the degree cut's draws, which depend on the edges
alone, are the same with and without it: the neighbouring inputs stay neighbours after the cut
(on a graph above D the cut is not the identity, but it is the same cut). The estimator's own
``fit`` runs once: the degree cut, DP-SGD of every module with the
inserted canaries among the training nodes, the noisy hops. The audit's fault (``noise_scale``)
scales every calibrated noise of the fit (DP-SGD's and the hops').

Attack: minus the cross-entropy of the canary's label under the released module that reads the
features alone (GAP's encoder, ProGAP's stage 0), on the canary's features; two-sided guesses
(``guesses`` / 2 each way, default m / 5). The claim is the fit's own noise at ``audit_delta``.
"""

from __future__ import annotations

import numpy as np
import torch
from torch_geometric.data import Data

from graphpriv.audit.fitting import audited_copy, check_audit_args, check_enough_guesses, claim, dataset_name, describe
from graphpriv.audit.node import canary_nodes
from graphpriv.audit.statistics import AuditReport, audit_from_scores, guesses_made
from graphpriv.data.validation import check_data
from graphpriv.errors import ConfigError
from graphpriv.methods.gap import GAPNodeClassifier
from graphpriv.methods.progap import ProGAPNodeClassifier
from graphpriv.nn.progap import StageLogits
from graphpriv.privacy.accountant import check_delta
from graphpriv.progress import Progress, no_progress, prefixed_progress

__all__ = ["audit_gap_node"]


def audit_gap_node(estimator: GAPNodeClassifier | ProGAPNodeClassifier, data: Data, *, canaries: int = 500,
                   seed: int = 0, noise_scale: float = 1.0, guesses: int | None = None, confidence: float = 0.95,
                   audit_delta: float = 1e-5, name: str | None = None,
                   progress: Progress = no_progress) -> list[AuditReport]:
    """One-run node-level audit of GAP-NDP or ProGAP-NDP with canary nodes (module docstring).

    Args:
        estimator: the estimator whose hyperparameters define the run (a copy with
            ``random_state=seed`` is fitted). data: a graph with ``x``, ``y`` (-1: unlabelled) and
            ``edge_index``; every labelled node trains.
        canaries: m. seed: the canaries, the coins and the fit. noise_scale: a deliberate fault on
            every calibrated noise of the fit (1.0: the real fit; 0: no noise, claim inf).
        guesses: how many canaries the auditor guesses on (default m / 5, half each way).
        confidence: of the bounds. audit_delta: the delta of the claim and of the one-run bound.
        name: the report's ``method``. progress: the audited fit's phases, prefixed ``audited``.

    Returns:
        ``[AuditReport]`` (unit ``node``).

    Raises:
        ConfigError: another estimator class, fewer than 2 canaries, a bad noise_scale, too few
            guesses for the bound. DatasetError: a graph without features or labels.
        PrivacyError: a bad ``audit_delta``.
    """
    if type(estimator) not in (GAPNodeClassifier, ProGAPNodeClassifier):
        raise ConfigError(f"audit_gap_node audits a GAPNodeClassifier or ProGAPNodeClassifier (got "
                          f"{type(estimator).__name__})")
    hook = check_audit_args(canaries, noise_scale, confidence)
    check_enough_guesses(lambda m: guesses_made(m, guesses), canaries, confidence)
    check_delta(audit_delta)
    data = check_data(data, needs_features=True, needs_labels=True, method="audit_gap_node", allow_no_edges=True)
    rng = np.random.default_rng([seed, 4051])
    x, y = torch.as_tensor(data.x, dtype=torch.float32), torch.as_tensor(data.y, dtype=torch.long)
    n, m, num_classes = int(x.shape[0]), canaries, int(y.max()) + 1
    train = np.flatnonzero(y.numpy() >= 0)
    canary_x, canary_y = canary_nodes(x, train, m, num_classes, rng)
    inserted = rng.random(m) < 0.5
    count = int(inserted.sum())
    audited = Data(x=torch.cat([x, canary_x[torch.from_numpy(inserted)]]),
                   y=torch.cat([y, canary_y[torch.from_numpy(inserted)]]), edge_index=data.edge_index.long(),
                   num_nodes=n + count)
    fitted = audited_copy(estimator, seed).fit(audited, np.concatenate([train, n + np.arange(count)]),
                                               num_classes=num_classes, audit_hook=hook,
                                               progress=prefixed_progress(progress, "audited"))
    with torch.no_grad():
        scores = -torch.nn.functional.cross_entropy(_features_only_logits(fitted, canary_x), canary_y,
                                                    reduction="none").numpy()
    claimed, accounting = claim(fitted, audit_delta, noise_scale)
    module = ("stage 0" if isinstance(fitted, ProGAPNodeClassifier) else "the encoder" if fitted.encoder_layers
              else "the classifier, on the canary's own features and empty hops")
    return [audit_from_scores(
        scores, inserted, method=describe(estimator, name), dataset=dataset_name(data), unit="node",
        claimed_epsilon=claimed, accounting=accounting,
        attack=f"loss of the canary's label under {module} on its features (lowest: inserted, highest: not)",
        guesses=guesses, confidence=confidence, audit_delta=audit_delta,
        notes=[(f"{m} canary nodes (isolated, random sparse features, random labels), each a training node with "
                f"probability 1/2 and absent otherwise; one {type(estimator).__name__}.fit (D = "
                f"{fitted.max_degree}, noise multiplier {fitted.noise_multiplier_:.4g})")])]


def _features_only_logits(fitted: GAPNodeClassifier | ProGAPNodeClassifier, x: torch.Tensor) -> torch.Tensor:
    """``[m, C]`` logits of the released module that reads a node's features alone: ProGAP's stage
    0, GAP's encoder, or (GAP without an encoder) the classifier on the row-normalised features
    with zero rows for the hops (an isolated canary's hops hold noise only)."""
    if isinstance(fitted, ProGAPNodeClassifier):
        return StageLogits(fitted.model_, 0)(x)
    if fitted.encoder_layers:
        return fitted.encoder_(x)
    h0 = torch.nn.functional.normalize(x, p=2.0, dim=-1)
    hops = [torch.zeros_like(h0)] * fitted.hops
    return fitted.classifier_(torch.stack([h0, *hops], dim=-1))
