"""Edge-level DP synthetic graphs at speed: the generators' fit + generate, and PGB's query suite against networkx.

    GRAPHPRIV_DATA=MIRROR python benchmarks/bench_synthesis.py \
        [--datasets p2p_gnutella08 fb100-cornell5] [--epsilon 1 8] [--methods tmf dp-1k privgraph] \
        [--query-dataset deezer_europe] [--threads 1] [--note "..."] [--out docs/results/bench_synthesis.txt]

Part 1, generators. Each (generator, dataset, epsilon) runs in a fresh process: ``fit(data)`` then
``generate(seed=1)`` of ``tmf`` (:class:`graphpriv.methods.tmf.TmF`), ``dp-1k``
(:class:`graphpriv.methods.dp_1k.DP1K`) and ``privgraph``
(:class:`graphpriv.methods.privgraph.PrivGraph`), with their default settings and ``random_state=0``:
the wall time of each call (the dataset load is not counted) and the process's peak resident memory
(and its resident memory after the load, so the generator's own share shows). Reference, timed in
the same process after the generator: reading the graph's undirected edge set, i.e.
``undirected_pairs(data.edge_index)`` plus the symmetric scipy CSR (``to_csr``), best of 3; the
table prints the generator's time as a multiple of it. Goal: every generator under 60 s on
each graph at each epsilon.

Part 2, queries. ``graphpriv.metrics.graph_queries.graph_queries`` (all fifteen PGB queries) on a
real graph of about 100k edges (default ``deezer_europe``, 28,281 nodes, 92,752 edges: above the
suite's 20,000-node exact limit, so its path queries run from its 1,000 seeded BFS sources;
``--query-dataset random`` gives a seeded G(10,000 nodes, 100,000 edges) instead), then
``compare_queries`` of that graph against one drawn by ``dp-1k`` at epsilon 8 (both graphs' queries
computed, as a caller without cached :class:`GraphQueries` would). One process times the whole
suite (first, cold: numba's kernels load from their cache), each query family on its own (graphpriv's
own helpers, warm) and ``compare_queries``. Reference, in a second fresh process of the same run:
networkx computing the same queries on the same graph (``nx.triangles``, ``nx.transitivity``,
``nx.average_clustering``; ``louvain_communities(seed=0)`` + ``modularity``;
``degree_assortativity_coefficient``; ``eigenvector_centrality`` with its defaults, as PGB; the path
queries by ``single_source_shortest_path_length`` from the suite's own sources, all nodes when the
suite is exact, plus the same double sweeps). When a probe of 50 sources projects networkx's path
queries above ``--nx-path-budget`` seconds (180), networkx runs only a subsample of the sources and
its time is extrapolated linearly, which the output says. The table prints each family's time for
both, the speed-up (networkx / graphpriv), and both processes' values so that the two are seen to
compute the same numbers. Goal: the whole suite, and ``compare_queries``, under 60 s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time

# shared by both children: a dataset of the registry, or "random" (seeded G(n, m), n = 10k, m = 100k)
_LOAD = r"""
import numpy as np
import torch
from torch_geometric.data import Data
from graphpriv import load_dataset

def load_graph(name):
    if name != "random":
        return load_dataset(name)
    rng = np.random.default_rng(0)
    n, m = 10_000, 100_000
    codes = np.empty(0, dtype=np.int64)
    while codes.size < m:
        u, v = rng.integers(0, n, size=(2, 2 * m))
        keep = u != v
        lo, hi = np.minimum(u, v)[keep], np.maximum(u, v)[keep]
        codes = np.unique(np.concatenate([codes, lo * n + hi]))
    codes = rng.permutation(codes)[:m]
    lo, hi = codes // n, codes % n
    ei = torch.from_numpy(np.stack([np.concatenate([lo, hi]), np.concatenate([hi, lo])]))
    return Data(edge_index=ei, num_nodes=n)
"""

_GEN_CHILD = _LOAD + r"""
import json, resource, sys, time
torch.set_num_threads(int(sys.argv[4]))
from graphpriv.data.graph import to_csr, undirected_pairs
from graphpriv.methods.dp_1k import DP1K
from graphpriv.methods.privgraph import PrivGraph
from graphpriv.methods.tmf import TmF

method, dataset, epsilon = sys.argv[1], sys.argv[2], float(sys.argv[3])
data = load_graph(dataset)
loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
cls = {"tmf": TmF, "dp-1k": DP1K, "privgraph": PrivGraph}[method]
t0 = time.perf_counter()
est = cls(epsilon=epsilon, random_state=0).fit(data)
t1 = time.perf_counter()
graph = est.generate(seed=1)
t2 = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
reference = float("inf")
for _ in range(3):  # reading the undirected edge set: pairs u < v, then the symmetric CSR
    r0 = time.perf_counter()
    pairs = undirected_pairs(data.edge_index)
    adj = to_csr(pairs, int(data.num_nodes))
    reference = min(reference, time.perf_counter() - r0)
assert adj.nnz == 2 * pairs.shape[1]
print(json.dumps({"fit": t1 - t0, "generate": t2 - t1, "seconds": t2 - t0, "reference": reference,
                  "peak_gib": peak, "loaded_gib": loaded, "nodes": int(data.num_nodes),
                  "edges": int(pairs.shape[1]), "out_edges": int(graph.edge_index.size(1) // 2),
                  "epsilon": est.privacy_report_.epsilon}))
"""

_SUITE_CHILD = _LOAD + r"""
import json, resource, sys, time
torch.set_num_threads(int(sys.argv[4]))
import scipy.sparse as sp
from graphpriv.metrics import graph_queries as gq
from graphpriv.methods.dp_1k import DP1K
from graphpriv.methods.privgraph import PrivGraph
from graphpriv.methods.tmf import TmF

dataset, generator, gen_eps = sys.argv[1], sys.argv[2], float(sys.argv[3])
data = load_graph(dataset)
cls = {"tmf": TmF, "dp-1k": DP1K, "privgraph": PrivGraph}[generator]
synthetic = cls(epsilon=gen_eps, random_state=0).fit(data).generate(seed=1)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
opts = dict(random_state=0, exact_max_nodes=20_000, num_sources=1_000)

def clock(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out

tiny = sp.csr_matrix(np.ones((3, 3)) - np.eye(3))
first_call, _ = clock(lambda: gq.graph_queries(tiny, **opts))  # numba kernels: cache load (or compile)
whole, q = clock(lambda: gq.graph_queries(data, **opts))
t = {}
t["input"], (a, d) = clock(lambda: (lambda a: (a, gq._degrees(a)))(gq._as_simple(data)))
t["clustering"], _ = clock(lambda: gq._clustering(a, d))
t["paths"], paths = clock(lambda: gq._path_queries(a, **{k: opts[k] for k in opts}))
t["communities"], _ = clock(lambda: gq._modularity(a, d, gq._louvain(a, opts["random_state"])))
t["assortativity"], _ = clock(lambda: gq._assortativity(a, d))
t["eigenvector"], _ = clock(lambda: gq._eigenvector_centrality(a))
compare, errors = clock(lambda: gq.compare_queries(data, synthetic, **opts))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
values = {"input": f"N {q.num_nodes:,}, E {q.num_edges:,}, deg var {q.degree_variance:.3f}",
          "clustering": f"T {q.triangles:,}, GCC {q.transitivity:.6f}, ACC {q.average_clustering:.6f}",
          "paths": f"diam {q.diameter}, ASPL {q.average_shortest_path_length:.6f}, "
                   f"pairs {q.distance_histogram.sum() - q.num_nodes:.6g}",
          "communities": f"{int(q.communities.max()) + 1} comms, Q {q.modularity:.6f}",
          "assortativity": f"r {q.degree_assortativity:.6f}",
          "eigenvector": f"max {q.eigenvector_centrality.max():.6f}"}
print(json.dumps({"first_call": first_call, "whole": whole, "families": t, "compare": compare,
                  "values": values, "sources": q.path_sources, "estimated": bool(q.estimated),
                  "nodes": q.num_nodes, "edges": q.num_edges,
                  "synthetic_edges": int(synthetic.edge_index.size(1) // 2),
                  "errors": {k: errors[k] for k in ("num_edges_re", "triangles_re", "average_shortest_path_length_re",
                                                    "community_nmi", "eigenvector_centrality_mae")},
                  "eig": q.eigenvector_centrality.tolist(), "before_gib": before, "peak_gib": peak}))
"""

_NX_CHILD = _LOAD + r"""
import json, resource, sys, time
torch.set_num_threads(int(sys.argv[2]))
import networkx as nx
from graphpriv.data.graph import undirected_pairs

dataset, budget, probe_size = sys.argv[1], float(sys.argv[3]), int(sys.argv[4])
exact_max_nodes, num_sources, random_state = 20_000, 1_000, 0  # graph_queries' defaults, as the suite child
data = load_graph(dataset)
pairs = undirected_pairs(data.edge_index)
pairs = pairs[:, np.lexsort((pairs[1], pairs[0]))]  # the suite's order (upper triangle, row-major)
n = int(data.num_nodes)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20

def clock(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out

def build():
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(pairs.T.tolist())
    deg = np.array([x for _, x in g.degree()])
    return g, (nx.degree_histogram(g), float(np.var(deg, ddof=1)))

t, values, notes = {}, {}, []
t["input"], (g, (hist, var)) = clock(build)
values["input"] = f"N {g.number_of_nodes():,}, E {g.number_of_edges():,}, deg var {var:.3f}"
t["clustering"], (tri, gcc, acc) = clock(lambda: (sum(nx.triangles(g).values()) // 3, nx.transitivity(g),
                                                   nx.average_clustering(g)))
values["clustering"] = f"T {tri:,}, GCC {gcc:.6f}, ACC {acc:.6f}"

# path queries: the suite's sources (all nodes when exact, else its seeded sample)
if n <= exact_max_nodes:
    sources = np.arange(n)
else:
    sources = np.sort(np.random.default_rng(random_state).choice(n, min(num_sources, n), replace=False))

def bfs(srcs):
    out = []
    for s in srcs.tolist():
        dist = nx.single_source_shortest_path_length(g, s)
        far = next(reversed(dist))
        out.append((sum(dist.values()), len(dist), dist[far], far, np.bincount(list(dist.values()))))
    return out

probe_idx = np.unique(np.linspace(0, sources.size - 1, min(probe_size, sources.size)).astype(np.int64))
probe_time, probe = clock(lambda: bfs(sources[probe_idx]))
projected = probe_time * sources.size / probe_idx.size
if projected <= budget:
    rest_idx = np.setdiff1d(np.arange(sources.size), probe_idx)
    rest_time, rest = clock(lambda: bfs(sources[rest_idx]))
    runs = probe + rest
    ecc = np.array([r[2] for r in runs])
    diameter, start = int(ecc.max()), runs[int(np.argmax(ecc))][3]
    def sweeps():
        global diameter, start
        if n > exact_max_nodes:
            for _ in range(8):
                dist = nx.single_source_shortest_path_length(g, start)
                far = next(reversed(dist))
                if dist[far] <= diameter:
                    break
                diameter, start = dist[far], far
    sweep_time, _ = clock(sweeps)
    t["paths"] = probe_time + rest_time + sweep_time
    pairs_reached = sum(r[1] - 1 for r in runs)
    aspl = sum(r[0] for r in runs) / pairs_reached
    scale = n / sources.size if n > exact_max_nodes else 1.0
    values["paths"] = f"diam {diameter}, ASPL {aspl:.6f}, pairs {pairs_reached * scale:.6g}"
    path_note = f"{sources.size:,} sources, all timed"
else:
    t["paths"] = projected
    reached = sum(r[1] - 1 for r in probe)
    values["paths"] = (f"{probe_idx.size} sources only: ecc max {max(r[2] for r in probe)}, "
                       f"ASPL {sum(r[0] for r in probe) / reached:.6f}")
    path_note = (f"EXTRAPOLATED: networkx's BFS ran from {probe_idx.size} of the {sources.size:,} sources (evenly "
                 f"spaced) in {probe_time:.2f} s; its time for all {sources.size:,} is that x "
                 f"{sources.size / probe_idx.size:.1f} (linear), above the {budget:g} s budget")

def louvain():
    comms = nx.community.louvain_communities(g, seed=random_state)
    return comms, nx.community.modularity(g, comms)
t["communities"], (comms, mod) = clock(louvain)
values["communities"] = f"{len(comms)} comms, Q {mod:.6f}"
t["assortativity"], r = clock(lambda: nx.degree_assortativity_coefficient(g))
values["assortativity"] = f"r {r:.6f}"
try:
    t["eigenvector"], evc = clock(lambda: nx.eigenvector_centrality(g))
    eig = [evc[i] for i in range(n)]
    values["eigenvector"] = f"max {max(eig):.6f}"
except nx.PowerIterationFailedConvergence:
    t0 = time.perf_counter()
    evc = nx.eigenvector_centrality(g, max_iter=10_000)
    t["eigenvector"] = time.perf_counter() - t0
    eig = [evc[i] for i in range(n)]
    values["eigenvector"] = f"max {max(eig):.6f} (no convergence in 100 iterations; timed with max_iter=10000)"
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
print(json.dumps({"families": t, "values": values, "path_note": path_note, "extrapolated": projected > budget,
                  "eig": eig, "before_gib": before, "peak_gib": peak}))
"""

FAMILIES = [  # key, label
    ("input", "input graph + degree queries (Q1, Q2, Q4-Q6)"),
    ("clustering", "triangles, transitivity, avg clustering (Q3, Q10, Q11)"),
    ("paths", "diameter, ASPL, distance distribution (Q7-Q9)"),
    ("communities", "Louvain + modularity (Q12, Q13)"),
    ("assortativity", "degree assortativity (Q14)"),
    ("eigenvector", "eigenvector centrality (Q15)"),
]


def _child(code: str, *args: object) -> dict:
    argv = [sys.executable, "-c", code, *map(str, args)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, args))} exited with {done.returncode}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _machine(note: str) -> str:
    load = os.getloadavg()
    text = (f"machine: {platform.node()}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}; load average {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} "
            "(1 / 5 / 15 min) at start")
    return f"{text}\nnote: {note}" if note else text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["p2p_gnutella08", "fb100-cornell5"])
    parser.add_argument("--epsilon", type=float, nargs="+", default=[1.0, 8.0])
    parser.add_argument("--methods", nargs="+", default=["tmf", "dp-1k", "privgraph"],
                        choices=["tmf", "dp-1k", "privgraph"])
    parser.add_argument("--query-dataset", default="deezer_europe",
                        help="a registry id, or 'random' (seeded G(10,000 nodes, 100,000 edges))")
    parser.add_argument("--query-generator", default="dp-1k", choices=["tmf", "dp-1k", "privgraph"],
                        help="draws the synthetic graph for compare_queries")
    parser.add_argument("--query-epsilon", type=float, default=8.0)
    parser.add_argument("--nx-path-budget", type=float, default=180.0,
                        help="seconds networkx's path queries may take before they are extrapolated")
    parser.add_argument("--nx-probe", type=int, default=50, help="BFS sources in networkx's probe")
    parser.add_argument("--threads", type=int, default=1, help="torch threads in every child")
    parser.add_argument("--skip-generators", action="store_true")
    parser.add_argument("--skip-queries", action="store_true")
    parser.add_argument("--note", default="", help="a line on the machine's state (e.g. other jobs running)")
    parser.add_argument("--out", help="also write the output here, the command line and machine note on top")
    args = parser.parse_args()

    lines: list[str] = []

    def emit(line: str = "") -> None:
        print(line, flush=True)
        lines.append(line)

    started = time.perf_counter()
    env = f"GRAPHPRIV_DATA={shlex.quote(os.environ['GRAPHPRIV_DATA'])} " if "GRAPHPRIV_DATA" in os.environ else ""
    emit("command: " + env + shlex.join(["python", *sys.argv]))
    emit(_machine(args.note))
    emit()
    goals: list[str] = []

    if not args.skip_generators:
        emit(f"## 1. generators: fit(data) + generate(seed=1), default settings, random_state 0, {args.threads} torch "
             "thread(s), each run a fresh process")
        emit("reference (same process): reading the undirected edge set, undirected_pairs(edge_index) + symmetric "
             "scipy CSR (to_csr), best of 3\n")
        emit("| generator | dataset | nodes | edges | eps (accountant) | fit (s) | generate (s) | total (s) | "
             "reference (s) | total / reference | edges out | RSS after load GiB | peak RSS GiB |")
        emit("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        worst: dict[str, float] = {}
        for dataset in args.datasets:
            for method in args.methods:
                for eps in args.epsilon:
                    r = _child(_GEN_CHILD, method, dataset, eps, args.threads)
                    worst[method] = max(worst.get(method, 0.0), r["seconds"])
                    emit(f"| {method} | {dataset} | {r['nodes']:,} | {r['edges']:,} | {eps:g} ({r['epsilon']:.4f}) | "
                         f"{r['fit']:.2f} | {r['generate']:.2f} | {r['seconds']:.2f} | {r['reference']:.4f} | "
                         f"{r['seconds'] / r['reference']:,.0f}x | {r['out_edges']:,} | {r['loaded_gib']:.2f} | "
                         f"{r['peak_gib']:.2f} |")
        for method, seconds in worst.items():
            goals.append(f"{method}: slowest run {seconds:.1f} s, goal under 60 s on every graph and epsilon: "
                         f"{'MET' if seconds < 60 else 'NOT MET'}")
        emit()

    if not args.skip_queries:
        suite = _child(_SUITE_CHILD, args.query_dataset, args.query_generator, args.query_epsilon, args.threads)
        ref = _child(_NX_CHILD, args.query_dataset, args.threads, args.nx_path_budget, args.nx_probe)
        how = (f"{suite['sources']:,} seeded BFS sources (estimated path queries)" if suite["estimated"]
               else "BFS from every node (exact path queries)")
        emit(f"## 2. PGB query suite on {args.query_dataset} ({suite['nodes']:,} nodes, {suite['edges']:,} edges), "
             f"path queries by {how}; graphpriv and networkx each in a fresh process, {args.threads} torch thread(s)")
        emit(f"networkx path queries: {ref['path_note']}\n")
        emit("| query family | graphpriv (s) | networkx (s) | speed-up | graphpriv value | networkx value |")
        emit("|---|---|---|---|---|---|")
        total_nx = 0.0
        for key, label in FAMILIES:
            ours, theirs = suite["families"][key], ref["families"][key]
            total_nx += theirs
            star = " (extrapolated)" if key == "paths" and ref["extrapolated"] else ""
            emit(f"| {label} | {ours:.2f} | {theirs:.2f}{star} | {theirs / ours:,.1f}x | {suite['values'][key]} | "
                 f"{ref['values'][key]} |")
        fam_sum = sum(suite["families"].values())
        emit(f"| sum of the families | {fam_sum:.2f} | {total_nx:.2f} | {total_nx / fam_sum:,.1f}x | | |")
        emit(f"| graph_queries, whole suite (first call on the graph) | {suite['whole']:.2f} | {total_nx:.2f} | "
             f"{total_nx / suite['whole']:,.1f}x | | |")
        emit(f"| first graph_queries call of the process (tiny graph: numba kernels load) | {suite['first_call']:.2f} "
             "| | | | |")
        emit(f"| compare_queries(graph, synthetic), both graphs' queries | {suite['compare']:.2f} | | | | |")
        diff = max(abs(x - y) for x, y in zip(suite["eig"], ref["eig"]))
        emit(f"\nsynthetic graph for compare_queries: {args.query_generator} at epsilon {args.query_epsilon:g}, "
             f"{suite['synthetic_edges']:,} edges; errors: "
             + ", ".join(f"{k} {v:.4g}" for k, v in suite["errors"].items()))
        emit(f"eigenvector centrality, max |graphpriv - networkx| over the nodes: {diff:.2e} (networkx's tolerance "
             "is N * 1e-6 on the L1 change)")
        emit(f"peak RSS: graphpriv {suite['peak_gib']:.2f} GiB ({suite['before_gib']:.2f} after load + "
             f"synthetic graph), networkx {ref['peak_gib']:.2f} GiB ({ref['before_gib']:.2f} after load)")
        emit("graphpriv's family rows run its own helpers (_clustering, _path_queries, _louvain + _modularity, "
             "_assortativity, _eigenvector_centrality) after the whole-suite call; its Louvain is networkx's")
        goals.append(f"graph_queries whole suite {suite['whole']:.1f} s (+ {suite['first_call']:.1f} s first-call "
                     f"kernel load), goal under 60 s: {'MET' if suite['whole'] + suite['first_call'] < 60 else 'NOT MET'}")
        goals.append(f"compare_queries {suite['compare']:.1f} s, goal under 60 s: "
                     f"{'MET' if suite['compare'] < 60 else 'NOT MET'}")
        emit()

    emit("## goals")
    for goal in goals:
        emit(f"- {goal}")
    load = os.getloadavg()
    emit(f"\nbenchmark wall time {time.perf_counter() - started:.0f} s; load average at the end "
         f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
