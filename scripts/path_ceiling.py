"""Probe: how high can a link predictor score that reads only paths of length <= L between a pair?

Usage: python scripts/path_ceiling.py [--datasets citeseer cora] [--lengths 2 3 4] [--seeds 5]
           [--store runs/linkpred.sqlite]

DPLP-PS with path subgraphs of length k (L = k), common neighbours and resource allocation (L = 2),
RA's length-3 form RA3 and graphpriv's private mixture of the two (L = 3) all give a pair that no path
of length <= L joins in the training graph the same score as every other such pair: its subgraph
or its path sum is empty. On a sparse graph most test pairs are such pairs, positives included,
so their ranking is a tie whatever the model. For each seed's split of the link-prediction
leaderboard (DPLP's 85/5/10 protocol, :func:`graphpriv.data.splits.link_split`), this prints for
each L:

- ``reach_pos`` and ``reach_neg``: the share of the test positives and of the test non-edges that a
  path of length <= L joins in the training graph;
- ``indicator``: the test AUC (%) of scoring a pair 1 if such a path joins it, else 0;
- ``ceiling``: the highest test AUC (%) any score with that blind spot can reach, the joined
  positives first, the unjoined pairs tied, the joined non-edges last: reach_pos + (1 - reach_pos)
  (1 + reach_neg) / 2.

A path-based model's gap to CN is then bounded by its graph's ceiling, not by its privacy. With
``--store`` (a results store holding the leaderboard's runs), it also counts the DPLP-PS runs with a
fixed k among the lengths whose test AUC is exactly the 0/1 score's at L = k on their seed's split
(to 1e-9): the runs whose model learned nothing beyond "a path of length <= k joins the pair".
"""

from __future__ import annotations

import argparse

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import roc_auc_score

from graphpriv.data import load
from graphpriv.data.graph import to_csr
from graphpriv.data.splits import link_split
from graphpriv.experiments.store import ResultStore


def within_length(adjacency: sp.csr_matrix, pairs: np.ndarray, max_length: int, *, chunk: int = 1024) -> np.ndarray:
    """Whether a path of at most ``max_length`` edges joins each pair.

    Args:
        adjacency: ``[N, N]`` symmetric 0/1 CSR adjacency of the graph the paths run in.
        pairs: ``[2, m]`` int node pairs (u, v), u != v.
        max_length: L >= 1, in edges. chunk: pairs handled at once (memory: chunk rows of balls).

    Returns:
        ``[m]`` bool. Computed as ball(u, ceil(L / 2)) meeting ball(v, floor(L / 2)), one sparse
        row per pair, never an ``[N, N]`` power of the adjacency.

    Raises:
        ValueError: ``max_length < 1``.
    """
    if max_length < 1:
        raise ValueError(f"max_length must be >= 1 (got {max_length})")
    n = adjacency.shape[0]

    def ball(nodes: np.ndarray, radius: int) -> sp.csr_matrix:
        reached = sp.csr_matrix((np.ones(nodes.size, dtype=bool), (np.arange(nodes.size), nodes)),
                                shape=(nodes.size, n))
        for _ in range(radius):
            reached = (reached + reached @ adjacency).astype(bool).tocsr()
        return reached

    joined = np.zeros(pairs.shape[1], dtype=bool)
    for start in range(0, pairs.shape[1], chunk):
        part = pairs[:, start:start + chunk]
        meet = ball(part[0], (max_length + 1) // 2).multiply(ball(part[1], max_length // 2))
        joined[start:start + chunk] = np.asarray(meet.sum(axis=1)).ravel() > 0
    return joined


def path_ceiling(joined: np.ndarray, labels: np.ndarray) -> tuple[float, float, float, float]:
    """``(reach_pos, reach_neg, indicator AUC, ceiling AUC)``, all in [0, 1], of a score blind
    beyond the joined pairs.

    Args:
        joined: ``[m]`` bool, whether a path of length <= L joins each pair (:func:`within_length`).
        labels: ``[m]`` 0/1, 1 for the positives; both classes present.

    Returns:
        The shares of the positives and of the negatives joined, the AUC of ``joined`` itself, and
        the best AUC of a score equal on every unjoined pair
        (ties counting 1/2): the joined positives ranked first, the unjoined pairs tied, the
        joined non-edges last.
    """
    pos, neg = joined[labels == 1].mean(), joined[labels == 0].mean()
    return (float(pos), float(neg), float(roc_auc_score(labels, joined.astype(float))),
            float(pos + (1 - pos) * (1 + neg) / 2))


def runs_at_indicator(runs, indicator: dict[tuple[int, int], float], *,
                      tol: float = 1e-9) -> dict[int, tuple[int, int]]:
    """Count the path-model runs whose test AUC is exactly the 0/1 "joined within k" score's.

    Args:
        runs: stored results (``.seed``, ``.config["k"]``, ``.metrics["test_auc"]`` in [0, 1]); a run whose
            (seed, k) has no entry in ``indicator`` is skipped.
        indicator: (seed, k) -> the indicator score's AUC on that seed's test pairs, in [0, 1].
        tol: the absolute difference below which two AUCs count as the same.

    Returns:
        k -> (runs at the indicator's AUC, runs with that k), for each k in ``indicator``, ascending.
    """
    counts = {length: [0, 0] for length in sorted({length for _, length in indicator})}
    for run in runs:
        key = (run.seed, run.config.get("k"))
        if key not in indicator:
            continue
        counts[key[1]][1] += 1
        counts[key[1]][0] += abs(run.metrics["test_auc"] - indicator[key]) < tol
    return {length: (same, total) for length, (same, total) in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["citeseer", "cora"])
    parser.add_argument("--lengths", nargs="+", type=int, default=[2, 3, 4])
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..n-1, the leaderboard's splits")
    parser.add_argument("--store", default=None, help="a results store with the leaderboard's runs")
    args = parser.parse_args()
    store = ResultStore.open_existing(args.store) if args.store else None
    print("| dataset | L | reach_pos | reach_neg | indicator AUC | ceiling AUC |")
    print("|---|---|---|---|---|---|")
    matches = []
    for name in args.datasets:
        data = load(name)
        rows = {length: [] for length in args.lengths}
        for seed in range(args.seeds):
            split = link_split(data, seed=seed)
            adjacency = to_csr(split.train_edge_index, split.num_nodes)
            pairs = np.concatenate([split.test_pos, split.test_neg], axis=1)
            labels = np.r_[np.ones(split.test_pos.shape[1]), np.zeros(split.test_neg.shape[1])]
            for length in args.lengths:
                rows[length].append(path_ceiling(within_length(adjacency, pairs, length), labels))
        for length, values in rows.items():
            mean, std = 100 * np.mean(values, axis=0), 100 * np.std(values, axis=0, ddof=1)
            print(f"| {name} | {length} | " + " | ".join(f"{m:.2f} ± {s:.2f}" for m, s in zip(mean, std)) + " |")
        if store is not None:
            indicator = {(seed, length): values[seed][2] for length, values in rows.items()
                         for seed in range(args.seeds)}
            counts = runs_at_indicator(store.results(method="dplp-ps", dataset=name), indicator)
            matches += [f"| {name} | {length} | {same} of {total} |" for length, (same, total) in counts.items()]
    if matches:
        print("\n| dataset | k | DPLP-PS runs at exactly the 0/1 score's AUC |\n|---|---|---|")
        print("\n".join(matches))


if __name__ == "__main__":
    main()
