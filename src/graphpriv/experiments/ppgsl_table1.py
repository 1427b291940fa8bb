"""PPGSL Table I: proximity of visible-link, hidden-link and no-link pairs.

``python -m graphpriv.experiments.ppgsl_table1 --seeds 5 --out docs/reproduction/ppgsl-table1.md``

Source: Wu, Yang, Han, Wang, Wu, "Learning-based Privacy-Preserving Graph Publishing Against
Sensitive Link Inference Attacks" (IEEE TKDE 2025), Sec. I, Table I.

Protocol (the paper's Sec. V-A.1, as in :mod:`graphpriv.attacks.protocol`): 10% of the edges,
chosen at random, are hidden
(E_s) and a disjoint 10% are held out as link-prediction test edges; the visible graph is G minus
both (the graph a publisher starts from). The paper's values are matched only with both removed;
``--test-ratio 0`` gives the E_s-only variant (shorter distances, fewer disconnected pairs). Pair types: visible links (the visible edges), hidden links (E_s)
and no-link pairs (as many uniform non-edges of G as E_s). For each type: average hop distance
in the visible graph over connected pairs, and the share of disconnected pairs. Mean ± std over
seeds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from graphpriv.data import load
from graphpriv.data.graph import to_csr
from graphpriv.data.splits import sensitive_link_split
from graphpriv.metrics.proximity import pair_proximity

#: The paper's values (Table I): dataset -> pair type -> (avg shortest path, disconnected ratio).
PAPER = {
    "cora": {"visible": (1.000, 0.000), "hidden": (3.206, 0.164), "no-link": (7.007, 0.254)},
    "lastfm_asia": {"visible": (1.000, 0.000), "hidden": (2.480, 0.089), "no-link": (5.560, 0.124)},
}


def proximity_rows(dataset: str, seeds: list[int], sensitive_ratio: float = 0.10,
                   test_ratio: float = 0.10) -> dict[str, np.ndarray]:
    """pair type -> ``[len(seeds), 2]`` (mean distance, disconnected ratio) per seed."""
    data = load(dataset)
    rows: dict[str, list] = {"visible": [], "hidden": [], "no-link": []}
    for seed in seeds:
        split = sensitive_link_split(data, sensitive_ratio=sensitive_ratio, test_ratio=test_ratio, seed=seed)
        adj = to_csr(split.published_edge_index, data.num_nodes)
        for name, pairs in (("visible", split.published_edge_index), ("hidden", split.sensitive_pos),
                            ("no-link", split.sensitive_neg)):
            p = pair_proximity(adj, pairs)
            rows[name].append((p.mean_distance, p.disconnected_ratio))
    return {k: np.asarray(v) for k, v in rows.items()}


def markdown(datasets: list[str], seeds: list[int], test_ratio: float = 0.10) -> str:
    """The reproduction table as markdown, the paper's values beside ours."""
    lines = [(f"Seeds {seeds[0]}-{seeds[-1]} ({len(seeds)}); 10% of edges hidden as E_s, "
             f"{100 * test_ratio:g}% held out as LP test edges; distances in the visible graph (G minus the hidden "
             "and held-out edges); mean ± std over seeds. Command: `python -m graphpriv.experiments.ppgsl_table1 "
             f"--seeds {len(seeds)} --test-ratio {test_ratio:g}`."), "",
             "| dataset | pair type | avg shortest path (graphpriv) | paper | disconnected ratio (graphpriv) | paper |",
             "|---|---|---|---|---|---|"]
    for dataset in datasets:
        rows = proximity_rows(dataset, seeds, test_ratio=test_ratio)
        for name, values in rows.items():
            mean, std = values.mean(axis=0), values.std(axis=0)
            paper = PAPER.get(dataset, {}).get(name, (float("nan"),) * 2)
            lines.append(f"| {dataset} | {name} | {mean[0]:.3f} ± {std[0]:.3f} | {paper[0]:.3f} | "
                         f"{mean[1]:.3f} ± {std[1]:.3f} | {paper[1]:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(PAPER))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--test-ratio", type=float, default=0.10)
    parser.add_argument("--out", type=Path, default=None, help="append the table to this markdown file")
    args = parser.parse_args(argv)
    text = markdown(args.datasets, list(range(args.seeds)), args.test_ratio)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as handle:
            handle.write(text + "\n")


if __name__ == "__main__":  # pragma: no cover
    main()
