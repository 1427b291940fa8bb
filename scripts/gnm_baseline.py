"""The trivial baseline of PGB's structure queries: G(n, m), set beside the synthesis leaderboard.

Usage: python scripts/gnm_baseline.py [--datasets cora citeseer ...] [--seeds 5]
           [--results docs/results] [--out docs/results/synthesis-gnm-baseline.md]

A synthetic graph's query error means something only against what a release that knows nothing
of the structure gets. That release is G(n, m): the public node set and the input's edge count,
with the m edges drawn uniformly among all node pairs. Its edge count costs next to no privacy
(one Laplace count of sensitivity 1; the leaderboard's TmF spends a tenth of epsilon on it and is
off by about 1% at epsilon 1 on Cora), so a generator that does not beat G(n, m) on a query has
told nothing about that query beyond the number of edges.

For each graph and seed this draws G(n, m) with m the true edge count of the protocol's 80% graph
(the same split as the leaderboard's runs, ``link_split(val_ratio=0, test_ratio=0.2, seed)``),
computes PGB's query errors exactly as the protocol does
(:func:`graphpriv.evaluation.synthesis.query_errors`, the same queries' seed), and prints the mean
over seeds. With ``--results`` it reads the leaderboard's per-run results
(``synthesis-leaderboard-{degrees,paths,communities}.csv``) and shows, per graph and query, the
best edge-level generator's mean at each ``--at-epsilon`` beside G(n, m)'s. Means only: no test
over seeds (the table's "which series wins where" has those). The generators and their names are
the leaderboard grid's series; those its "which series wins where" leaves out are node level.
Community NMI is higher-better; every other query is an error (lower-better). Node and edge
counts and average degree are left out of the comparison: G(n, m) is given them exactly.

A last table counts, per generator (PrivDPR, node level, in its own row) and epsilon, the (graph,
query) pairs on which its mean beats G(n, m)'s. A generator whose release is mostly uniform pairs
(TmF and LapGraph at a small epsilon, where few true edges pass the threshold) is close to G(n, m)
and beats it on about half the pairs (a coin's share).
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np

from graphpriv.data import load
from graphpriv.data.graph import sample_absent_pairs
from graphpriv.data.release import PublishedGraph
from graphpriv.data.splits import link_split
from graphpriv.evaluation.synthesis import query_errors
from graphpriv.experiments.grid import load_grid
from graphpriv.experiments.results import read_results
from graphpriv.experiments.tables import BASELINE_PREFIX

DATASETS = ["cora", "citeseer", "usair", "yeast", "facebook", "p2p_gnutella08", "fb100-amherst41"]
TABLES = ["degrees", "paths", "communities"]
HIGHER_BETTER = {"community_nmi"}
GIVEN = {"num_nodes_re", "num_edges_re", "average_degree_re"}


def generators() -> tuple[list[str], list[str]]:
    """The leaderboard's series, in its grid's order: ``(edge level, node level)``, the node-level
    ones being those its "which series wins where" leaves out (``winners_exclude``)."""
    grid = load_grid(f"synthesis-leaderboard-{TABLES[0]}")
    series = list(dict.fromkeys(row.series for row in grid.rows))
    return ([s for s in series if s not in grid.winners_exclude],
            [s for s in series if s in grid.winners_exclude])


def gnm_graph(graph: PublishedGraph, rng: np.random.Generator) -> PublishedGraph:
    """G(n, m) on ``graph``'s N nodes with its edge count: m distinct pairs, uniform over all N(N-1)/2."""
    pairs = sample_absent_pairs(np.empty(0, dtype=np.int64), graph.num_nodes, graph.num_edges, rng)
    return PublishedGraph(pairs, graph.num_nodes)


def gnm_errors(data, seed: int) -> dict[str, float]:
    """PGB's query errors of one G(n, m) draw against the protocol's 80% graph of ``data`` (PyG Data)."""
    split = link_split(data, val_ratio=0.0, test_ratio=0.2, seed=seed)
    train = PublishedGraph(split.train_edge_index, int(data.num_nodes))
    metrics, _ = query_errors(gnm_graph(train, np.random.default_rng([seed, 0x6E6D])), train, seed=seed)
    return metrics


def graph_facts(data) -> dict[str, float]:
    """What the trivial baselines of ``data`` (PyG Data) rest on: N, the protocol's 80% graph's edge
    count m, its density rho = m / (N(N-1)/2), ln(1/rho) (the epsilon at which half of a
    pair-by-pair release, TmF, LapGraph or EdgeRand, is true edges: docs/synthesis.md) and, for a
    labelled graph, the majority class's share of the labelled nodes (nan without labels)."""
    split = link_split(data, val_ratio=0.0, test_ratio=0.2, seed=0)  # m is the same for every seed
    n, m = int(data.num_nodes), int(PublishedGraph(split.train_edge_index, int(data.num_nodes)).num_edges)
    rho = m / (n * (n - 1) / 2)
    y = getattr(data, "y", None)
    labelled = y[y >= 0] if y is not None and y.dim() == 1 else None
    majority = (float(labelled.bincount().max()) / labelled.numel() if labelled is not None and labelled.numel()
                else float("nan"))
    return {"nodes": n, "edges": m, "density": rho, "ln_inverse_density": float(np.log(1 / rho)),
            "majority_share": majority}


def leaderboard_means(results: Path) -> dict[tuple[str, str, str, float], float]:
    """Mean over seeds of each (dataset, series, query, epsilon) in the leaderboard's result files
    (``results/synthesis-leaderboard-{degrees,paths,communities}.csv``, read as their tables read
    them: :func:`graphpriv.experiments.results.read_results`); epsilon is the row's nominal one, and
    a query undefined on a run is left out of that cell's mean.
    """
    values: dict[tuple[str, str, str, float], list[float]] = defaultdict(list)
    for table in TABLES:
        grid = load_grid(f"synthesis-leaderboard-{table}")
        rows = {row.label: row for row in grid.rows}
        records, _ = read_results(results / f"{grid.name}.csv", grid)
        for record in records:
            row = rows[record.row]
            for query, value in record.metrics.items():
                if not query.startswith(BASELINE_PREFIX):
                    values[(record.dataset, row.series, query, float(row.settings["epsilon"]))].append(value)
    return {key: float(np.mean(v)) for key, v in values.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--results", type=Path, default=None,
                        help="folder of the leaderboard's result CSVs (docs/results) to compare with")
    parser.add_argument("--at-epsilon", type=float, nargs="+", default=[1.0, 8.0],
                        help="epsilons at which to show the best generator against G(n, m)")
    parser.add_argument("--out", type=Path, default=None, help="also write the report here (markdown)")
    args = parser.parse_args()

    gnm: dict[str, dict[str, float]] = {}
    facts: dict[str, dict[str, float]] = {}
    for dataset in args.datasets:
        data = load(dataset)
        facts[dataset] = graph_facts(data)
        runs = [gnm_errors(data, seed) for seed in range(args.seeds)]
        keys = sorted(set().union(*runs))
        gnm[dataset] = {k: float(np.mean([r[k] for r in runs if k in r])) for k in keys}
    queries = sorted(set().union(*(g.keys() for g in gnm.values())))
    command = f"python scripts/gnm_baseline.py --seeds {args.seeds}"
    command += f" --results {args.results}" if args.results is not None else ""
    command += f" --out {args.out}" if args.out is not None else ""
    lines = [(f"G(n, m) with the 80% graph's edge count, mean of {args.seeds} seeds, x 100 like the "
             f"tables (`{command}`)"), "",
             "| query | " + " | ".join(args.datasets) + " |", "|---|" + "---|" * len(args.datasets)]
    for q in queries:
        cells = [f"{100 * gnm[d][q]:.2f}" if q in gnm[d] else "-" for d in args.datasets]
        lines.append(f"| {q} | " + " | ".join(cells) + " |")
    lines += ["", ("The graphs: the 80% graph's nodes, edges, density rho and ln(1/rho), and the majority "
                  "class's share of the labelled nodes (%)"), "",
              "| graph | nodes | edges | rho | ln(1/rho) | majority class (%) |", "|---|---|---|---|---|---|"]
    for d in args.datasets:
        f = facts[d]
        majority = f"{100 * f['majority_share']:.1f}" if np.isfinite(f["majority_share"]) else "-"
        lines.append(f"| {d} | {f['nodes']} | {f['edges']} | {f['density']:.2e} | {f['ln_inverse_density']:.2f} | "
                     f"{majority} |")
    if args.results is not None:
        means = leaderboard_means(args.results)
        edge_level, node_level = generators()
        compared = [q for q in queries if q not in GIVEN and any(k[2] == q for k in means)]
        sign = {q: 1 if q in HIGHER_BETTER else -1 for q in compared}
        for eps in args.at_epsilon:
            lines += ["", (f"The best edge-level generator at epsilon {eps:g} (its mean, x 100) and G(n, m)'s mean; "
                          "**bold**: the generator beats G(n, m)"), "",
                      "| query | " + " | ".join(args.datasets) + " |", "|---|" + "---|" * len(args.datasets)]
            for q in compared:
                cells = []
                for d in args.datasets:
                    cands = [(sign[q] * means[(d, m, q, eps)], m) for m in edge_level if (d, m, q, eps) in means]
                    if not cands or q not in gnm[d]:
                        cells.append("-")
                        continue
                    value, best = max(cands)
                    text = f"{best} {100 * sign[q] * value:.1f}"
                    cells.append((f"**{text}**" if value > sign[q] * gnm[d][q] else text) + f" ({100 * gnm[d][q]:.1f})")
                lines.append(f"| {q} | " + " | ".join(cells) + " |")
        epsilons = sorted({k[3] for k in means})
        lines += ["", (f"(graph, query) pairs on which a generator's mean beats G(n, m)'s, of those it has "
                      f"(the {len(compared)} queries above on {len(args.datasets)} graphs)"), "",
                  "| generator | " + " | ".join(f"eps {e:g}" for e in epsilons) + " |",
                  "|---|" + "---|" * len(epsilons)]
        for m in edge_level + node_level:
            cells = []
            for eps in epsilons:
                pairs = [(d, q) for d in args.datasets for q in compared
                         if (d, m, q, eps) in means and q in gnm[d]]
                wins = sum(sign[q] * means[(d, m, q, eps)] > sign[q] * gnm[d][q] for d, q in pairs)
                cells.append(f"{wins} of {len(pairs)}" if pairs else "-")
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out is not None:
        args.out.write_text(report)


if __name__ == "__main__":
    main()
