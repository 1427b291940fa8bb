"""Node-level canary audit of DPAR (``dpar-em0``, ``dpar-em1``, ``dpar-gm``; ``dpar-nodp`` as the
non-private reference). Issue 10; the DPAR counterpart of :func:`graphpriv.privacy.audit.audit_dp_mlp`.

Sources: Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run" (NeurIPS 2023),
Thm. 5.2 (one run, m canaries each included with probability 1/2, (eps, delta)-DP); Zhang et al.,
DPAR (WWW 2024) for the mechanism audited (:mod:`graphpriv.methods.dpar`).

Canaries. m synthetic nodes, each with random sparse binary features (the training nodes' mean
number of active features, set to the mean non-zero feature value, as in ``audit_dp_mlp``) and a
uniformly random label: examples the model can only fit by memorising them. Each canary is added
to the graph as a training node independently with probability 1/2 (node-level add/remove, DPAR's
relation). By default the canaries are isolated nodes: a valid neighbour under add/remove (the
relation covers any node with any edges, none included) and the strongest for the attack below,
since an isolated canary's APPR row is its own one-hot entry, so its features meet its label in
its own training row with full weight. ``canary_edges`` = d > 0 gives each canary d edges to
random training nodes (present only with the canary): the canary then also enters its
neighbours' APPR rows, and the row cap and the group size m see it.

Mechanism. The split, the real training nodes and the canaries go through DPAR's private part
unchanged (:func:`graphpriv.methods.dpar.train_dpar`, the code
:meth:`~graphpriv.methods.dpar.DPARClassifier.fit` runs): the q' Poisson node sample (canaries
included), the M seeds drawn from the sample, APPR, DP-APPR rows, Pi (row cap, column clip), the
group size m, DP-SGD calibrated by the same accounting. With q' < 1 an inserted canary is used only when sampled (probability q').

Attack. Score = minus the cross-entropy of the canary's label under the released f_theta on the
canary's features (the MLP DPAR releases). The guesser is one-sided by default: it guesses
"inserted" for the ``guesses`` highest scores (default m q' / 4, half the inserted canaries
expected in the sample) and abstains on the rest. The low scores mix the absent canaries with
inserted ones the model never fits: those outside the q' sample, and those drawn as seeds, whose
DP-APPR row is mostly noise and rarely holds their own entry (with ``max_rows`` = 1 such a row is
left empty), so "not inserted" guesses add errors; ``one_sided=False`` gives the two-sided guesser
of ``audit_dp_mlp`` (``guesses`` / 2 each way, default m / 5).

Claim. The epsilon of the run's own noise at ``audit_delta`` (the one-run bound adds 2 m delta to
its p-value, useless at DPAR's delta of 2e-3), under the run's accounting mode
(:func:`graphpriv.methods.dpar.fit_epsilon`: the q' amplification, DP-APPR and DP-SGD at the
run's delta split). In ``paper`` mode that is the paper's analysis, which is not a guarantee: the
report's ``accounting`` says so and gives the rigorous epsilon of the same noise.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch_geometric.data import Data

from graphpriv.errors import ConfigError, DatasetError, describe_validation_error
from graphpriv.privacy.accountant import check_epsilon
from graphpriv.privacy.audit import CALIBRATION_DELTA, AuditReport, audit_from_scores

if TYPE_CHECKING:
    from graphpriv.methods.dpar import DPARConfig

__all__ = ["DPAR_AUDITABLE", "audit_dpar", "canary_nodes"]

#: The DPAR variants the node-level audit covers.
DPAR_AUDITABLE = ("dpar-em0", "dpar-em1", "dpar-gm", "dpar-nodp")


def canary_nodes(x: torch.Tensor, train: np.ndarray, count: int, num_classes: int,
                 rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` canary nodes: binary features with the training nodes' mean number of active
    features (each set to the mean non-zero value of ``x``) at random positions, random labels.

    Returns:
        ``(features [count, F] float32, labels [count] int64)``.
    """
    active = max(1, round(float((x[train] > 0).sum(1).float().mean())))
    value = float(x[x > 0].mean()) if bool((x > 0).any()) else 1.0
    columns = np.argsort(rng.random((count, x.shape[1])), axis=1)[:, :active]
    features = torch.zeros(count, x.shape[1])
    features[torch.arange(count).repeat_interleave(active), torch.from_numpy(columns.ravel())] = value
    return features, torch.from_numpy(rng.integers(0, num_classes, count))


def audit_dpar(method: str, data: Data, *, epsilon: float | None = None, canaries: int = 1000, seed: int = 0,
               config: DPARConfig | None = None, epochs: int | None = None, guesses: int | None = None, one_sided: bool = True,
               canary_edges: int = 0, confidence: float = 0.95, audit_delta: float = 1e-5,
               **overrides) -> AuditReport:
    """Node-level canary audit of one DPAR run (see the module docstring).

    Args:
        method: ``dpar-em0``, ``dpar-em1``, ``dpar-gm`` or ``dpar-nodp``. data: a graph with node
            features and labels. epsilon: the run's target (default: the config's). canaries: m.
        seed: the split, the canaries and coins, and the run. config: a
            :class:`~graphpriv.methods.dpar.DPARConfig` (default: the method's registry defaults);
            ``overrides`` (DPARConfig fields, e.g. ``node_rate=1.0, max_rows=1``) and ``epochs``
            update it. guesses: how many guesses (default: one-sided, m q' / 4 rounded, at least 1;
            two-sided, m / 5). one_sided: guess "inserted" only (default). canary_edges: edges
            from each canary to random training nodes (0: isolated canaries). audit_delta: the
            delta of the claim and of the one-run bound.

    Returns:
        :class:`~graphpriv.privacy.audit.AuditReport` (unit ``node``).

    Raises:
        ConfigError: a method the audit does not cover, or an invalid setting. DatasetError: a graph
            without features or labels. ValueError: fewer than 2 canaries, canary_edges < 0.
            PrivacyError: bad epsilon.
    """
    from graphpriv.data.splits import node_split
    from graphpriv.experiments.registry import DPAR_APPR, make_config
    from graphpriv.methods.dpar import DPARConfig, fit_epsilon, train_dpar

    if method not in DPAR_AUDITABLE:
        raise ConfigError(f"the DPAR audit covers {', '.join(DPAR_AUDITABLE)} (got {method!r})")
    if getattr(data, "x", None) is None or getattr(data, "y", None) is None:
        raise DatasetError("the DPAR audit needs node features and labels")
    if canaries < 2 or canary_edges < 0:
        raise ValueError(f"need canaries >= 2 and canary_edges >= 0 (got {canaries}, {canary_edges})")
    updates = dict(overrides)
    if epsilon is not None:
        check_epsilon(epsilon)
        updates["epsilon"] = epsilon
    if epochs is not None:
        updates["epochs"] = epochs
    if config is None:  # the noise is calibrated at the paper's delta unless the overrides say otherwise
        config = make_config(method, {"delta": CALIBRATION_DELTA, **updates})
    elif updates:
        try:
            config = DPARConfig(**{**config.model_dump(), **updates})
        except ValueError as exc:  # pydantic.ValidationError: one line per field
            raise ConfigError(f"invalid setting for {method}: {describe_validation_error(exc)}") from None
    private = config.private and method != "dpar-nodp"

    rng = np.random.default_rng([seed, 3041])
    x, y = torch.as_tensor(data.x, dtype=torch.float32), torch.as_tensor(data.y, dtype=torch.long)
    n, num_classes = x.shape[0], int(y.max()) + 1
    split = node_split(data, train_ratio=1 - config.test_ratio, seed=seed, inductive=True)
    train = split.train_idx[y.numpy()[split.train_idx] >= 0]
    canary_x, canary_y = canary_nodes(x, train, canaries, num_classes, rng)
    inserted = rng.random(canaries) < 0.5
    ids = n + np.arange(canaries)
    edges = np.asarray(split.train_edge_index)
    if canary_edges:
        ends = np.stack([rng.choice(train, min(canary_edges, train.size), replace=False) for _ in range(canaries)])
        own = np.repeat(ids[:, None], ends.shape[1], axis=1)
        edges = np.concatenate([edges, np.stack([own[inserted].ravel(), ends[inserted].ravel()])], axis=1)
    fit = train_dpar(config, torch.cat([x, canary_x]), torch.cat([y, canary_y]),
                     np.concatenate([train, ids[inserted]]), edges, rng=np.random.default_rng([seed, 97]),
                     seed=seed, appr=DPAR_APPR[method], num_classes=num_classes)
    with torch.no_grad():
        scores = -torch.nn.functional.cross_entropy(fit.model.mlp(canary_x), canary_y, reduction="none").numpy()

    if private:
        claimed = fit_epsilon(config, fit, audit_delta, accounting=config.accounting)
        if config.accounting == "paper":
            rigorous = fit_epsilon(config, fit, audit_delta, accounting="rigorous")
            accounting = (f"paper (the paper's analysis at delta = {audit_delta:g}, NOT a guarantee; the same noise "
                          f"is eps = {rigorous:.4g} rigorous; run calibrated to eps {config.epsilon:g} at delta "
                          f"{config.delta:g})")
        else:
            accounting = (f"rigorous (at delta = {audit_delta:g}; run calibrated to eps {config.epsilon:g} at delta "
                          f"{config.delta:g})")
    else:
        claimed, accounting = math.inf, "non-private"
    if guesses is None and one_sided:
        guesses = max(1, round(canaries * config.node_rate / 4))

    local = np.flatnonzero(fit.sample >= n)  # the sampled canaries' rows in Pi
    own_row = int((fit.pi.diagonal()[local] != 0).sum())
    notes = [(f"{canaries} canary nodes ({'isolated' if not canary_edges else f'{canary_edges} edges each'}, random "
              f"sparse features, random labels), each a training node with probability 1/2; one DPAR run "
              f"(q' = {config.node_rate:g}, m = {fit.group}, noise std "
              f"{fit.noise.noise_std if fit.noise else 0:.4g})"),
             (f"{int(inserted.sum())} inserted, {local.size} in the q' sample, {own_row} with their own "
              f"features in their own training row")]
    return audit_from_scores(
        scores, inserted, method=method, dataset=str(getattr(data, "name", "graph")), unit="node",
        claimed_epsilon=claimed, accounting=accounting,
        attack="loss of the canary's label under f_theta (lowest: inserted" + (")" if one_sided else ", highest: not)"),
        guesses=guesses, confidence=confidence, audit_delta=audit_delta, notes=notes, one_sided=one_sided)
