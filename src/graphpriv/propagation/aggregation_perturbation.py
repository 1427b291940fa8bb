"""Aggregation perturbation: K hops of noisy sum aggregation over row-normalised embeddings (GAP).

Sajadmanesh, Shamsabadi, Bellet, Gatica-Perez, "GAP: Differentially Private Graph Neural Networks
with Aggregation Perturbation" (USENIX Security 2023), Sec. 4.2 (Alg. 1, the aggregation module):
``H_0 = normalise(X)``; for k = 1..K, ``H_k = normalise(A H_{k-1} + N(0, sigma^2 I))``, every row
normalised to unit L2 norm; the K + 1 matrices are released and the classification module reads
them.

Privacy (edge level). Each row of ``H_{k-1}`` has norm at most 1, and row i of the sum ``A H`` is
the sum of i's in-neighbours' rows. Adding or removing one undirected edge {u, v} changes row u by
``H[v]`` and row v by ``H[u]``: the L2 (Frobenius) sensitivity of one hop is sqrt(2) (reached
when both rows are unit vectors, which normalisation makes them). Under the directed relation,
where each direction of an edge is its own unit (the public GAP code's ``sensitivity=1``), one
row changes: sensitivity 1. The K hops are adaptive Gaussian mechanisms (hop k reads hop k - 1's
noisy output, normalised: post-processing), each with noise multiplier ``sigma / sensitivity``,
composed by the accountant (:class:`~graphpriv.privacy.accountant.Ledger`, RDP). graphpriv's edge
relation is the undirected one, as for its other edge-level methods; :func:`epsilon_under_relation`
gives the same noise's epsilon under the directed relation, to set numbers beside the paper's.
Tested by brute force on small graphs (``tests/propagation/test_aggregation_perturbation.py``).

Privacy (node level, GAP Sec. 5.2, restated). Neighbouring graphs differ by one node v added or
removed with its features, label and edges, and both have every degree at most D (the
bounded-degree relation; :mod:`graphpriv.propagation.degree_bound` cuts a graph to it and is the
identity on it). Removing v moves the rows of its at most D neighbours by v's unit row each:
L2 sensitivity sqrt(D) over the rows of the nodes other than v (:func:`node_sensitivity`). v's own
row, the sum of up to D neighbours' unit rows (norm up to D), is not in that count: it is read
only by v's own training example, which the node-level estimators train by DP-SGD, where one
node's example may be anything (docs/privacy.md gives the whole argument: the hops' rows other
than v, then DP-SGD given them, composed). A guarantee that also released v's row would need
sensitivity sqrt(D^2 + D).
"""

from __future__ import annotations

import math
from typing import Literal

import torch
import torch.nn.functional as F
from dp_accounting import dp_event
from torch import Tensor

from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.calibration import calibrate_noise_multiplier
from graphpriv.privacy.mechanisms import gaussian_noise

__all__ = ["EDGE_RELATIONS", "aggregate", "aggregation_event", "calibrate_aggregation_noise", "edge_sensitivity",
           "epsilon_under_relation", "node_sensitivity", "noisy_aggregate", "perturbed_aggregations"]

#: The edge-level relations of one hop's sensitivity: ``undirected`` (one undirected edge added or
#: removed: both its directions; graphpriv's) and ``directed`` (one direction: the public GAP code's).
EDGE_RELATIONS: dict[str, float] = {"undirected": math.sqrt(2.0), "directed": 1.0}

EdgeRelation = Literal["undirected", "directed"]


def edge_sensitivity(relation: EdgeRelation = "undirected") -> float:
    """The L2 sensitivity of one hop of sum aggregation over rows of norm at most 1.

    Args:
        relation: ``"undirected"`` (sqrt 2: one undirected edge moves two rows by one unit row
            each) or ``"directed"`` (1: one directed edge moves one row).

    Returns:
        The sensitivity (float).

    Raises:
        ValueError: another relation.
    """
    if relation not in EDGE_RELATIONS:
        raise ValueError(f"'relation' must be one of {', '.join(EDGE_RELATIONS)} (got {relation!r})")
    return EDGE_RELATIONS[relation]


def node_sensitivity(max_degree: int) -> float:
    """The L2 sensitivity sqrt(D) of one hop over the rows of the nodes other than the one added
    or removed, for graphs whose degrees are at most D and rows of norm at most 1 (module
    docstring: the removed node moves each of its <= D neighbours' rows by one unit row).

    Args:
        max_degree: D >= 1.

    Returns:
        sqrt(D) (float).

    Raises:
        ValueError: D not an integer >= 1.
    """
    if isinstance(max_degree, bool) or not isinstance(max_degree, int) or max_degree < 1:
        raise ValueError(f"'max_degree' (the degree bound D) must be an integer >= 1 (got {max_degree!r})")
    return math.sqrt(max_degree)


def aggregate(h: Tensor, edge_index: Tensor) -> Tensor:
    """One hop of sum aggregation: row i is the sum of the rows of i's in-neighbours.

    Args:
        h: ``[N, d]`` float. edge_index: ``[2, M]`` long, ``(source, target)``; an undirected
            graph lists both directions.

    Returns:
        ``[N, d]``: ``A^T h`` for the adjacency ``A[source, target] = 1`` (``A h`` when symmetric).
    """
    return torch.zeros_like(h).index_add_(0, edge_index[1], h[edge_index[0]])


def aggregation_event(noise_multiplier: float, hops: int) -> dp_event.DpEvent:
    """The K hops as one event: K compositions of ``GaussianDpEvent(noise_multiplier)``."""
    return dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(noise_multiplier), hops)


def calibrate_aggregation_noise(*, epsilon: float, delta: float, hops: int) -> float:
    """The noise multiplier z (noise std = z x sensitivity) whose K-fold composition spends at most
    ``epsilon`` at ``delta`` (RDP accountant, binary search; the reported epsilon is the
    accountant's for the returned z).

    Raises:
        PrivacyError: a bad epsilon or delta. ValueError: ``hops`` < 1.
        BudgetExceededError: the budget cannot be met.
    """
    if isinstance(hops, bool) or not isinstance(hops, int) or hops < 1:
        raise ValueError(f"'hops' must be an integer >= 1 (got {hops!r})")
    return calibrate_noise_multiplier(lambda z: aggregation_event(z, hops), target_epsilon=epsilon, delta=delta)


def epsilon_under_relation(noise_multiplier: float, hops: int, delta: float, *, calibrated_for: EdgeRelation,
                           relation: EdgeRelation) -> float:
    """The epsilon of noise calibrated for one relation, read under another: the noise std is
    ``noise_multiplier * edge_sensitivity(calibrated_for)``, so under ``relation`` its multiplier
    is that std over ``edge_sensitivity(relation)`` (e.g. sqrt 2 times larger read under the
    directed relation, whose sensitivity is 1).

    Returns:
        epsilon at ``delta`` (RDP accountant).
    """
    z = noise_multiplier * edge_sensitivity(calibrated_for) / edge_sensitivity(relation)
    ledger = Ledger("edge", delta=delta)
    ledger.spend(aggregation_event(z, hops), phase="aggregation")
    return ledger.epsilon()


def perturbed_aggregations(x: Tensor, edge_index: Tensor, *, hops: int, noise_multiplier: float,
                           generator: torch.Generator, relation: EdgeRelation = "undirected",
                           ledger: Ledger | None = None, phase: str = "aggregation",
                           noise_scale: float = 1.0, sensitivity: float | None = None) -> Tensor:
    """GAP's aggregation module: ``H_0 = normalise(x)``, then K hops of
    ``H_k = normalise(aggregate(H_{k-1}) + N(0, (noise_multiplier * sensitivity)^2))``.

    Privacy: with ``noise_multiplier`` > 0 the output is (eps, delta)-DP under ``relation``
    (edge level; the module docstring has the argument) for the eps of
    :func:`aggregation_event`; the K hops are spent on ``ledger`` (if given) as one phase.
    ``noise_multiplier`` = 0 aggregates without noise (GAP-INF) and spends nothing.

    Args:
        x: ``[N, d]`` float node embeddings (the encoder's output). edge_index: ``[2, M]`` long.
        hops: K >= 1. noise_multiplier: z >= 0. generator: the noise's randomness.
        relation: the edge relation the sensitivity is taken under. ledger, phase: where the
            hops are spent. noise_scale: the noise std times this factor while the ledger still
            spends the calibrated hops (1.0; other values only from a privacy audit's fault test,
            :class:`graphpriv.privacy.hooks.AuditHook`).
        sensitivity: the hop's L2 sensitivity the noise is scaled to (default:
            ``edge_sensitivity(relation)``; node level: :func:`node_sensitivity`).

    Returns:
        ``[N, d, K + 1]`` float: ``H_0 .. H_K`` stacked on the last axis, every row of norm 1 (or
        0: a zero row stays zero).

    Raises:
        ValueError: ``hops`` < 1, a negative or non-finite ``noise_multiplier``, another relation.
    """
    if isinstance(hops, bool) or not isinstance(hops, int) or hops < 1:
        raise ValueError(f"'hops' must be an integer >= 1 (got {hops!r})")
    if not (math.isfinite(noise_multiplier) and noise_multiplier >= 0):
        raise ValueError(f"'noise_multiplier' must be a finite number >= 0 (got {noise_multiplier!r})")
    h = F.normalize(x, p=2.0, dim=-1)
    out = [h]
    for _ in range(hops):
        h = F.normalize(noisy_aggregate(h, edge_index, noise_multiplier=noise_multiplier, generator=generator,
                                        relation=relation, ledger=ledger, phase=phase, noise_scale=noise_scale,
                                        sensitivity=sensitivity),
                        p=2.0, dim=-1)
        out.append(h)
    return torch.stack(out, dim=-1)


def noisy_aggregate(h: Tensor, edge_index: Tensor, *, noise_multiplier: float, generator: torch.Generator,
                    relation: EdgeRelation = "undirected", ledger: Ledger | None = None, phase: str = "aggregation",
                    noise_scale: float = 1.0, sensitivity: float | None = None) -> Tensor:
    """One hop of aggregation perturbation: ``aggregate(h) + N(0, (noise_multiplier * sensitivity)^2)``,
    spent on ``ledger`` as one ``GaussianDpEvent(noise_multiplier)`` (nothing when the multiplier is 0).

    Privacy: (eps, delta)-DP under ``relation`` at edge level when every row of ``h`` has norm at
    most 1 (the caller normalises: GAP's hops and ProGAP's stages do); with ``sensitivity`` =
    :func:`node_sensitivity` (D), node level over graphs of degree <= D for the rows other than
    the removed node's (module docstring).

    Args:
        h: ``[N, d]`` rows of norm <= 1. edge_index: ``[2, M]``. noise_multiplier: z >= 0.
        generator, relation, ledger, phase, noise_scale, sensitivity: as :func:`perturbed_aggregations`.

    Returns:
        ``[N, d]`` the noisy sums (not normalised).
    """
    std = noise_multiplier * (edge_sensitivity(relation) if sensitivity is None else sensitivity) * noise_scale
    s = aggregate(h, edge_index)
    if std > 0:
        s = s + gaussian_noise(s.shape, std, generator=generator, dtype=s.dtype)
    if ledger is not None and noise_multiplier > 0:
        ledger.spend(dp_event.GaussianDpEvent(noise_multiplier), phase=phase, noise_multiplier=noise_multiplier,
                     label="Gaussian sum aggregation (one hop)")
    return s
