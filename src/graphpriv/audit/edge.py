"""Edge-level canary audit of a published graph: EdgeRand, LapGraph and the non-private RandomPerturb,
and of the LapGraph release inside :class:`~graphpriv.methods.lapgraph_sgnn.LapGraphLinkPredictor`.

Sources: Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run" (NeurIPS 2023),
Theorem 3.1 (the one-run bound, pure DP); Jagielski, Ullman, Oprea, "Auditing differentially
private machine learning" (NeurIPS 2020) for the Clopper–Pearson bound; Wu, Long, Gunter, Gong,
"LinkTeller" (IEEE S&P 2022) for the two mechanisms audited.

m canary pairs (non-edges of the graph) are each inserted as an edge independently with
probability 1/2; the publisher's own ``fit`` releases the graph with the inserted canaries once;
the attack scores each canary by its presence in the release and guesses "inserted" exactly when
it is present. Two lower bounds at 95% confidence:

- ``one_run`` (the verdict's): the number of correct guesses out of r is dominated by
  Binomial(r, e^eps / (1 + e^eps)) for an eps-DP mechanism (add/remove one edge), dependent
  canaries included, and the guesser may abstain. Two guessers, each at 2.5%: "inserted iff
  present" on all m canaries, and "inserted" on the present ones only (abstaining on the rest);
  the bound is the larger of the two largest eps whose binomial tail is still <= 2.5%.
- ``clopper_pearson``: TPR and FPR with Clopper–Pearson bounds, eps >= max(ln(TPR / FPR),
  ln(TNR / FNR)); it treats the canaries as independent trials, which holds for EdgeRand
  (independent bits), not exactly for LapGraph's top-T selection.

LapGraphLinkPredictor releases a LapGraph graph and trains a non-private SGNN on it
(post-processing); its audit reads the released graph it keeps (``graph_``), the strongest view of
what the guarantee covers.

The claim is pure: EdgeRand and LapGraph are epsilon-DP by construction (their reports state the
same mechanisms at a delta through the PLD accountant, which is never above epsilon), so both
bounds use delta = 0 and the claimed epsilon is the estimator's ``epsilon``.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch_geometric.data import Data

from graphpriv.audit.fitting import audited_copy, check_audit_args, check_enough_guesses, dataset_name, describe
from graphpriv.audit.statistics import AuditReport, audit_from_presence
from graphpriv.data.graph import pair_codes, undirected_pairs
from graphpriv.data.splits import sample_non_edges
from graphpriv.data.validation import check_data
from graphpriv.errors import ConfigError
from graphpriv.methods.lapgraph_sgnn import LapGraphLinkPredictor
from graphpriv.methods.publishing import EdgeRand, LapGraph, RandomPerturb
from graphpriv.progress import Progress, no_progress, prefixed_progress

__all__ = ["audit_edge_release"]

#: The publishers this audit covers (a DP publisher's claim is its ``epsilon``; RandomPerturb claims nothing).
EDGE_PUBLISHERS = (EdgeRand, LapGraph, RandomPerturb, LapGraphLinkPredictor)


def audit_edge_release(estimator: EdgeRand | LapGraph | RandomPerturb | LapGraphLinkPredictor, data: Data, *, canaries: int = 5000,
                       seed: int = 0, noise_scale: float = 1.0, confidence: float = 0.95,
                       name: str | None = None, progress: Progress = no_progress) -> list[AuditReport]:
    """Audit one release of ``estimator`` on ``data`` with ``canaries`` canary edges (module docstring).

    Args:
        estimator: the publisher whose hyperparameters define the release (fitted or not; a copy
            with ``random_state=seed`` is fitted). data: the graph (``edge_index``, ``num_nodes``).
        canaries: m, canary pairs drawn among the graph's non-edges. seed: canaries, coins and the
            release's noise. noise_scale: a deliberate fault on the mechanism's noise (the audit's
            own test; 1.0 audits the real release, 0 the input published as is). confidence: of
            the bounds. name: the report's ``method`` (default: the class name).
            progress: reports the audited fit, each of its phases prefixed ``audited``
                (:mod:`graphpriv.progress`).

    Returns:
        ``[AuditReport]`` (unit ``edge``).

    Raises:
        ConfigError: another estimator class, fewer than 2 canaries, a bad noise_scale or seed.
        DatasetError: ``data`` is not a graph (:func:`~graphpriv.data.validation.check_data`), or
            has fewer than ``canaries`` non-edges.
    """
    if type(estimator) not in EDGE_PUBLISHERS:
        raise ConfigError(f"the edge-release audit covers {', '.join(c.__name__ for c in EDGE_PUBLISHERS)} "
                          f"(got {type(estimator).__name__})")
    hook = check_audit_args(canaries, noise_scale, confidence)
    check_enough_guesses(lambda count: count, canaries, 1 - (1 - confidence) / 2)  # "inserted iff present": m guesses
    data = check_data(data, method="audit_edge_release")
    rng = np.random.default_rng([seed, 1013])
    n = int(data.num_nodes)
    pairs = undirected_pairs(data.edge_index)
    canary_pairs = sample_non_edges(n, canaries, forbidden=pairs, rng=rng)
    inserted = rng.random(canary_pairs.shape[1]) < 0.5
    graph = np.concatenate([pairs, canary_pairs[:, inserted]], axis=1)
    both = torch.from_numpy(np.concatenate([graph, graph[::-1]], axis=1).copy())
    fitted = audited_copy(estimator, seed).fit(Data(edge_index=both, num_nodes=n), audit_hook=hook,
                                                  progress=prefixed_progress(progress, "audited"))
    released = (fitted.graph_.numpy() if isinstance(fitted, LapGraphLinkPredictor) else fitted.released_.pairs)
    private = fitted.privacy_report_ is not None and noise_scale > 0
    claimed = float(fitted.epsilon) if private else math.inf
    if fitted.privacy_report_ is None:
        accounting = "non-private"
    elif noise_scale == 0:
        accounting = "non-private (the same release without noise)"
    else:
        accounting = "rigorous (pure epsilon-DP)" + (f"; NOISE SCALED BY {noise_scale:g} (a deliberate fault)"
                                                    if noise_scale != 1 else "")
    present = np.isin(pair_codes(canary_pairs, n), pair_codes(released, n))
    m = canary_pairs.shape[1]
    return [audit_from_presence(present, inserted, method=describe(estimator, name), dataset=dataset_name(data),
                                unit="edge", claimed_epsilon=claimed, accounting=accounting,
                                attack="canary present in the release", confidence=confidence,
                                notes=[(f"{m} canary non-edges, each inserted with probability 1/2; one release by "
                                        f"{type(estimator).__name__}.fit; the guess is 'inserted' iff the pair is "
                                        "in the release")])]
