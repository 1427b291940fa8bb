"""Probe: can node embeddings learn proximity under node-level DP when the noise goes only where
one node can reach? (The design PrivDPR's tighter variants point to; not offered as a method.)

Usage: python scripts/probe_row_noise.py [--datasets cora citeseer] [--seed 0]

PrivDPR noises the whole ``[N, r]`` gradient of V because one node can enter any pair of a step.
The best case for a per-node embedding under node-level DP is the opposite: a bound on how many
pairs one node can enter. This probe builds that best case and measures it:

- **Relation**: node-level, replace one node and its edges (N public), over graphs whose every
  degree is at most D (the bounded-degree relation of graphpriv's GAP-NDP; the degree cut of
  :func:`graphpriv.propagation.degree_bound.bound_degree` is the identity on them).
- **Pairs**: the edges (i, j) of the training graph, 1 hop (a walk of length R_wl would let one
  node reach D^R_wl rows).
- **Step** (full batch, T steps): row i's gradient is the sum over its neighbours j of the
  gradient of -log sigmoid(v_i . v_j) with respect to v_i, v_j read from the current (released)
  V, each pair's term clipped to norm c; plus 5 negatives per node drawn independently of the
  graph (no sensitivity). V <- V - lr (G + N(0, (Delta z)^2 I)) / D.
- **Sensitivity** (:func:`sensitivity`): replacing node u changes u's row by at most 2 D c (at
  most D pairs leave, D enter), and the row of each node that gains or loses u as a neighbour by
  one pair's term, at most c (at most 2 D such rows; a pair (w, u) kept in both graphs gives the
  same term, since it reads V only): Delta = c sqrt(4 D^2 + 2 D) in Frobenius norm. The T steps
  compose as T Gaussian mechanisms in RDP (graphpriv's accountant), z calibrated to (eps, 1e-5).

What is measured is an upper bound on what a generator built on such a V could give: the AUC of
v_i . v_j itself on the 20% held-out edges against as many non-edges (no graph is generated, no
GAE trained), and the same score on the training edges (memorised, not predicted).

Why it cannot reach 0.60 at eps 3.2 (docs/privdpr.md): each row's signal is at most deg(i) c per
step against noise Delta z = c sqrt(4 D^2 + 2 D) z per coordinate, and z grows as sqrt(T); the
per-coordinate signal-to-noise of the final V is about deg(i) / (sqrt(r) sqrt(4 D^2 + 2 D) z_1),
z_1 the one-step multiplier of the whole budget (1.4 at eps 3.2), about 0.1 whatever T, lr or
D, and a held-out edge is predicted by two-hop structure, weaker still.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import torch
from dp_accounting import dp_event
from sklearn.metrics import roc_auc_score

#: (label, epsilon or None for no noise, D, r, T, lr): the settings the probe prints.
SETTINGS = (
    ("no noise", None, 8, 16, 100, 0.5),
    ("no noise", None, 4, 8, 10, 0.5),
    ("eps 3.2", 3.2, 8, 16, 100, 0.5),
    ("eps 3.2", 3.2, 4, 8, 10, 0.5),
    ("eps 3.2", 3.2, 2, 4, 1, 2.0),
    ("eps 32", 32.0, 4, 8, 10, 0.5),
    ("eps 100", 100.0, 4, 8, 10, 0.5),
)


def sensitivity(max_degree: int, clip: float) -> float:
    """Delta = c sqrt(4 D^2 + 2 D): the Frobenius norm by which replacing one node (both graphs with
    every degree <= D) can move :func:`row_gradients` (module docstring)."""
    return clip * math.sqrt(4 * max_degree**2 + 2 * max_degree)


def row_gradients(V: torch.Tensor, src: torch.Tensor, dst: torch.Tensor, clip: float) -> torch.Tensor:
    """``[N, r]``: row i = sum over pairs (i, j) of the gradient of -log sigmoid(v_i . v_j) in v_i,
    each clipped to norm ``clip`` (``src``, ``dst``: ``[P]`` long, both directions of every edge)."""
    vi, vj = V[src], V[dst]
    grad = -(1 - torch.sigmoid((vi * vj).sum(1))).unsqueeze(1) * vj
    grad = grad * (clip / grad.norm(dim=1, keepdim=True).clamp_min(1e-12)).clamp(max=1.0)
    return torch.zeros_like(V).index_add_(0, src, grad)


def train(src: torch.Tensor, dst: torch.Tensor, num_nodes: int, *, epsilon: float | None, max_degree: int, r: int,
          steps: int, lr: float, clip: float = 1.0, delta: float = 1e-5, seed: int = 0) -> tuple[torch.Tensor, float]:
    """V ``[N, r]`` after ``steps`` full-batch noisy steps, and the noise multiplier z (0 without noise)."""
    from graphpriv.privacy.calibration import calibrate_noise_multiplier

    z = 0.0
    if epsilon is not None:
        z = calibrate_noise_multiplier(lambda m: dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(m), steps),
                                       target_epsilon=epsilon, delta=delta)
    std = sensitivity(max_degree, clip) * z
    gen = torch.Generator().manual_seed(seed)
    V = torch.randn(num_nodes, r, generator=gen) * 0.1
    for _ in range(steps):
        G = row_gradients(V, src, dst, clip)
        neg = torch.randint(0, num_nodes, (num_nodes, 5), generator=gen)  # public: drawn without the graph
        g_neg = (torch.sigmoid((V.unsqueeze(1) * V[neg]).sum(2)).unsqueeze(2) * V[neg]).sum(1)
        G += g_neg * (max_degree * clip / g_neg.norm(dim=1, keepdim=True).clamp_min(1e-12)).clamp(max=1.0)
        if std:
            G += torch.randn(num_nodes, r, generator=gen) * std
        V = V - lr * G / max_degree
    return V, z


def _auc(V: torch.Tensor, pos: torch.Tensor, neg: torch.Tensor) -> float:
    sp = (V[pos[0]] * V[pos[1]]).sum(1).numpy()
    sn = (V[neg[0]] * V[neg[1]]).sum(1).numpy()
    return float(roc_auc_score(np.r_[np.ones(sp.size), np.zeros(sn.size)], np.r_[sp, sn]))


def probe(name: str, seed: int = 0) -> list[tuple]:
    """One row per :data:`SETTINGS`: (label, D, r, T, z, held-out AUC, training-edge AUC)."""
    from graphpriv.data import load
    from graphpriv.data.splits import link_split
    from graphpriv.propagation.degree_bound import bound_degree

    data = load(name)
    n = int(data.num_nodes)
    split = link_split(data, val_ratio=0.0, test_ratio=0.2, seed=seed)
    test_pos, test_neg = torch.as_tensor(split.test_pos), torch.as_tensor(split.test_neg)
    rows = []
    for label, epsilon, max_degree, r, steps, lr in SETTINGS:
        edges = bound_degree(torch.as_tensor(split.train_edge_index), n, max_degree,
                             generator=torch.Generator().manual_seed(seed))
        edges = edges[:, edges[0] != edges[1]]
        V, z = train(edges[0], edges[1], n, epsilon=epsilon, max_degree=max_degree, r=r, steps=steps, lr=lr, seed=seed)
        rows.append((label, max_degree, r, steps, z, _auc(V, test_pos, test_neg), _auc(V, edges, test_neg)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["cora", "citeseer"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("| graph | setting | D | r | T | z | held-out AUC | training-edge AUC |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.datasets:
        for label, max_degree, r, steps, z, held_out, train_auc in probe(name, args.seed):
            print(f"| {name} | {label} | {max_degree} | {r} | {steps} | {z:.2f} | {100 * held_out:.1f} | "
                  f"{100 * train_auc:.1f} |")


if __name__ == "__main__":
    main()
