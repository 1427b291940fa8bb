"""Edge-level canary audit of GAP's released aggregates (:class:`~graphpriv.methods.gap.GAPClassifier`).

Sources: Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run" (NeurIPS 2023),
Sec. 3 (the one-run bound, approximate DP); Sajadmanesh et al., "GAP" (USENIX Security 2023),
Sec. 5.1 (what edge-level DP covers: the aggregates).

2m fresh canary nodes are added in m pairs (u_i, v_i), each node isolated from the graph, unlabelled,
with the features of a random labelled node; each pair is joined by an edge independently with
probability 1/2. The estimator's own ``fit`` (on the original labelled nodes) releases the
aggregates once. Without its edge, u_i's first hop is noise alone; with it, the normalised
embedding of v_i plus noise. The score of a pair is the alignment of each node's first-hop
aggregate with its partner's embedding, ``<H_1[u], H_0[v]> + <H_1[v], H_0[u]>``; the auditor
guesses "inserted" for the highest scores and "not inserted" for the lowest (abstaining on the
rest). The claim is the fit's own (eps, delta) at its delta (all K hops, of which the attack
reads the first: the bound may be loose, never wrong); a noise scaled by ``noise_scale`` < 1 keeps
the calibrated claim (the fault the audit must catch).
"""

from __future__ import annotations

import numpy as np
import torch
from torch_geometric.data import Data

from graphpriv.audit.fitting import audited_copy, check_audit_args, check_enough_guesses, claim, dataset_name, describe
from graphpriv.audit.statistics import AuditReport, audit_from_scores, guesses_made
from graphpriv.data.graph import undirected_pairs
from graphpriv.data.validation import check_data
from graphpriv.errors import ConfigError, DatasetError
from graphpriv.methods.gap import GAPClassifier
from graphpriv.progress import Progress, no_progress, prefixed_progress

__all__ = ["audit_gap"]


def audit_gap(estimator: GAPClassifier, data: Data, *, canaries: int = 500, seed: int = 0, noise_scale: float = 1.0,
              guesses: int | None = None, confidence: float = 0.95, name: str | None = None,
              progress: Progress = no_progress) -> list[AuditReport]:
    """One-run audit of GAP-EDP (or GAP-INF, which claims nothing) with canary edges.

    Args:
        estimator: the :class:`GAPClassifier` whose hyperparameters define the run (a copy with
            ``random_state=seed`` is fitted on the labelled nodes; under
            ``model_selection="best_val"`` a random tenth of them are its validation nodes).
            data: the graph (``x``, ``y``, ``edge_index``).
        canaries: m, canary pairs (2m added nodes). seed: canaries, coins and the fit.
        noise_scale: a deliberate fault on the aggregation noise (1.0 audits the real run; 0: the
            same release without noise). guesses: how many canaries the auditor guesses on
            (default m / 5). confidence: of the bounds. name: the report's ``method``.
        progress: reports the audited fit, each of its phases prefixed ``audited``.

    Returns:
        ``[AuditReport]`` (unit ``edge``).

    Raises:
        ConfigError: another estimator class, fewer than 2 canaries, a bad noise_scale, too few
            guesses for the bound. DatasetError: a graph without features or labels.
    """
    if type(estimator) is not GAPClassifier:
        raise ConfigError(f"audit_gap audits a GAPClassifier (got {type(estimator).__name__})")
    hook = check_audit_args(canaries, noise_scale, confidence)
    check_enough_guesses(lambda m: guesses_made(m, guesses), canaries, confidence)
    data = check_data(data, needs_features=True, needs_labels=True, method="audit_gap", allow_no_edges=True)
    rng = np.random.default_rng([seed, 1031])
    n, m = int(data.num_nodes), canaries
    y = np.asarray(data.y)
    labelled = np.flatnonzero(y >= 0)
    if labelled.size < 2:
        raise DatasetError(f"{dataset_name(data)}: the audit trains on the labelled nodes and needs at least 2")
    donors = rng.choice(labelled, 2 * m)  # canaries look like real nodes to the encoder
    us, vs = n + 2 * np.arange(m), n + 2 * np.arange(m) + 1
    inserted = rng.random(m) < 0.5
    pairs = np.concatenate([undirected_pairs(data.edge_index), np.stack([us[inserted], vs[inserted]])], axis=1)
    x = torch.cat([torch.as_tensor(data.x, dtype=torch.float32), torch.as_tensor(data.x, dtype=torch.float32)[donors]])
    audited = Data(x=x, y=torch.cat([torch.as_tensor(y), torch.full((2 * m,), -1)]),
                   edge_index=torch.from_numpy(np.concatenate([pairs, pairs[::-1]], axis=1).copy()),
                   num_nodes=n + 2 * m)
    train, val = labelled, {}
    if estimator.config.model_selection == "best_val":  # a tenth of the labelled nodes pick the epochs
        held = np.sort(rng.choice(labelled, max(1, labelled.size // 10), replace=False))
        train, val = np.setdiff1d(labelled, held), {"val_nodes": held}
    fitted = audited_copy(estimator, seed).fit(audited, train, num_classes=int(y.max()) + 1, audit_hook=hook,
                                               progress=prefixed_progress(progress, "audited"), **val)
    h0, h1 = fitted.aggregates_[..., 0].double(), fitted.aggregates_[..., 1].double()
    u, v = torch.from_numpy(us), torch.from_numpy(vs)
    scores = ((h1[u] * h0[v]).sum(1) + (h1[v] * h0[u]).sum(1)).numpy()
    claimed, accounting = claim(fitted, None, noise_scale)
    delta = 0.0 if fitted.privacy_report_ is None else float(fitted.privacy_report_.delta)
    return [audit_from_scores(scores, inserted, method=describe(estimator, name), dataset=dataset_name(data),
                              unit="edge", claimed_epsilon=claimed, accounting=accounting,
                              attack="alignment of a canary's first-hop aggregate with its partner's embedding",
                              guesses=guesses, confidence=confidence, audit_delta=delta,
                              notes=[(f"{m} canary pairs of fresh isolated nodes (features of random labelled "
                                      "nodes, unlabelled), each joined by an edge with probability 1/2; one "
                                      f"{type(estimator).__name__}.fit releases the aggregates")])]
