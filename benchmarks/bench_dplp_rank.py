"""DPLP-rank on Facebook (4,039 nodes, 88k edges): base scores for every query and the full DPLP
training, with wall time per phase and peak memory; triad scores against networkx per pair.

    python benchmarks/bench_dplp_rank.py [--dataset facebook] [--base aa]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="facebook")
    parser.add_argument("--base", default="aa")
    parser.add_argument("--reference-pairs", type=int, default=20000)
    args = parser.parse_args()
    import networkx as nx

    from graphpriv.data import load
    from graphpriv.experiments.registry import make_config, method_spec
    from graphpriv.ranking.protocol import ranking_split
    from graphpriv.ranking.scores import triad_scores

    data = load(args.dataset)
    split = ranking_split(data, seed=0)
    rows = np.repeat(split.queries, np.diff(split.test_ptr))
    t0 = time.perf_counter()
    ours = triad_scores(split.train, rows, split.test_nodes, args.base)
    t_ours = time.perf_counter() - t0
    pick = np.random.default_rng(0).choice(rows.size, min(args.reference_pairs, rows.size), replace=False)
    g = nx.from_scipy_sparse_array(split.train)
    fn = {"aa": nx.adamic_adar_index, "jc": nx.jaccard_coefficient, "pa": nx.preferential_attachment}.get(args.base)
    t0 = time.perf_counter()
    if fn is None:
        ref = [len(list(nx.common_neighbors(g, u, v))) for u, v in zip(rows[pick], split.test_nodes[pick])]
    else:
        ref = [p for _, _, p in fn(g, list(zip(rows[pick].tolist(), split.test_nodes[pick].tolist())))]
    t_ref = (time.perf_counter() - t0) * rows.size / pick.size
    assert np.allclose(ours[pick], ref)
    print(f"## DPLP-rank on {args.dataset}: {data.num_nodes:,} nodes, {split.queries.size:,} queries, "
          f"{rows.size:,} test candidates\n")
    print(f"{args.base.upper()} scores of every test candidate: {t_ours:.2f} s; networkx per pair "
          f"(extrapolated from {pick.size:,} pairs): {t_ref:.1f} s; ratio {t_ref / t_ours:.0f}x; scores equal\n")
    print("| method | accounting | AUC@K | precision@K | AUC | epsilon per list | time (s): split / scores / "
          "training / ranking / total |")
    print("|---|---|---|---|---|---|---|")
    for method, accounting in (("dplp-rank", "rigorous"), ("dplp-rank", "paper"), ("dplp-rank-lin", "rigorous"),
                               ("rank-exponential", "rigorous"), ("rank-nonprivate", "rigorous")):
        config = make_config(method, {"base": args.base, "accounting": accounting})
        r = method_spec(method).run(config, data, seed=0, method=method)
        t = r.timings
        eps = f"{r.privacy.epsilon:g}" if r.privacy else "-"
        print(f"| {method} | {accounting} | {r.metrics['auc_at_k']:.3f} | {r.metrics['precision_at_k']:.3f} | "
              f"{r.metrics['auc']:.3f} | {eps} | {t.get('split', 0):.1f} / {t.get('scores', 0):.1f} / "
              f"{t.get('training', 0):.1f} / {t.get('ranking', 0):.1f} / {t['total']:.1f} |", flush=True)
    print(f"\npeak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")


if __name__ == "__main__":
    main()
