"""Attack suite speed: the eight attacks on Cora end to end, and CN/AA/RA at scale.

1. ``--dataset cora``: every attack fit on the published input graph (G minus E_s and the LP test
   edges) and scored on E_s + as many non-edges; seconds per attack and the AUC.
2. ``--heuristics-dataset deezer_europe``: CN, AA and RA for ``--pairs`` (20,000) uniform pairs,
   vectorized on sparse rows, against networkx's per-pair generators on the same pairs in the same
   process (ratio printed); the target is under 5 s per heuristic.

3. ``--dense-release`` (instead of 1 and 2): EdgeRand at epsilon 0.5 on Cora (about 1.4M released
   edges), as ``graphpriv run edgerand -d cora --epsilon 0.5`` runs it: publishing with its utility
   evaluation (``--set attacks=none``) and each of the eight attacks (``--set attacks=ID --set
   utility=false``), then ``graphpriv run seal-gcn -d pb`` and ``graphpriv run dplp-ns -d pb``; each
   against today's path (before the speed-ups) in the same run, with the ratio and the peak
   resident memory of each measurement (a fresh process each). Today's path is reached from here
   only: the GAE with ``edges_per_epoch=None`` (every edge, PyG's ``negative_sampling`` each
   epoch), pecanpy's SparseOTF walks, whole 2-hop subgraphs cut afterwards (SEAL), dense padded
   batches (``collate_dense``) for non-private training and scoring. Where today's path takes
   minutes it is timed on a few epochs (``--old-epochs``) or a few subgraphs and extrapolated, as
   the output says.

    python benchmarks/bench_attacks.py
    python benchmarks/bench_attacks.py --dense-release [--threads 1]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import time
import tracemalloc

import networkx as nx
import numpy as np

from graphpriv.attacks import ATTACKS, make_attack
from graphpriv.attacks.protocol import SensitiveLinkProtocol
from graphpriv.attacks.suite import attack_auc
from graphpriv.data import load
from graphpriv.linkpred.heuristics import (
    adamic_adar,
    common_neighbours,
    resource_allocation,
)
from graphpriv.testing.graphs import to_networkx


def bench_suite(dataset: str, seed: int) -> None:
    protocol = SensitiveLinkProtocol(load(dataset), seed=seed)
    graph = protocol.input_graph
    print(f"## all attacks on {dataset} (seed {seed}): {graph.num_nodes} nodes, {graph.num_edges} published "
          f"edges, {protocol.split.sensitive_pos.shape[1]} sensitive links + as many non-edges\n")
    print("| attack | seconds (fit + score) | attack AUC |\n|---|---|---|")
    total = 0.0
    for name in ATTACKS:
        auc, seconds = attack_auc(make_attack(name, seed=seed), graph, protocol.split.sensitive_pos,
                                  protocol.split.sensitive_neg)
        total += seconds
        print(f"| {name} | {seconds:.2f} | {auc:.4f} |")
    print(f"| **all eight** | {total:.1f} | |\n")


def bench_heuristics(dataset: str, num_pairs: int, reference_pairs: int, seed: int) -> None:
    data = load(dataset)
    protocol = SensitiveLinkProtocol(data, seed=seed)
    adj = protocol.input_graph.adjacency
    rng = np.random.default_rng(seed)
    pairs = rng.integers(0, data.num_nodes, size=(2, num_pairs))
    pairs = pairs[:, pairs[0] != pairs[1]]
    g = to_networkx(protocol.input_graph.pairs, data.num_nodes)
    sample = list(map(tuple, pairs[:, :reference_pairs].T.tolist()))
    refs = {
        "cn": lambda: [len(list(nx.common_neighbors(g, a, b))) for a, b in sample],
        "aa": lambda: [s for _, _, s in nx.adamic_adar_index(g, sample)],
        "ra": lambda: [s for _, _, s in nx.resource_allocation_index(g, sample)],
    }
    print(f"## CN / AA / RA on {dataset}: {data.num_nodes} nodes, {protocol.input_graph.num_edges} edges, "
          f"{pairs.shape[1]} pairs (networkx reference on {len(sample)} of them)\n")
    print("| heuristic | graphpriv, all pairs (s) | per pair (us) | networkx per pair (us) | speed-up | peak traced MiB |")
    print("|---|---|---|---|---|---|")
    for name, fn in (("cn", common_neighbours), ("aa", adamic_adar), ("ra", resource_allocation)):
        tracemalloc.start()
        t0 = time.perf_counter()
        scores = fn(adj, pairs)
        ours = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        t0 = time.perf_counter()
        ref = np.asarray(refs[name](), dtype=np.float64)
        theirs = (time.perf_counter() - t0) / len(sample)
        np.testing.assert_allclose(scores[:len(sample)], ref, rtol=1e-9)
        per = ours / pairs.shape[1]
        print(f"| {name} | {ours:.3f} | {1e6 * per:.2f} | {1e6 * theirs:.2f} | {theirs / per:.0f}x | {peak:.1f} |")
    print()


# -- 3. the dense release (EdgeRand, epsilon 0.5, Cora) and SEAL / DPLP-NS on PolBlogs -------------------

EDGERAND = {"epsilon": 0.5}
GAE_EPOCHS = 200  # gae_embeddings' default, what the protocol and the GAE attacks train


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _old_gae(module, epochs: int, timed: list[tuple[float, float]]) -> None:
    """Today's GAE in ``module`` (every edge, PyG's sampler each epoch), timed on 1 and on
    ``1 + epochs`` epochs: ``timed`` gets (its seconds, the seconds 200 epochs would take)."""
    real = module.gae_embeddings

    def gae(*args, **kwargs):
        kwargs = {**kwargs, "edges_per_epoch": None}
        start = time.perf_counter()
        real(*args, **{**kwargs, "epochs": 1})
        one = time.perf_counter() - start
        z = real(*args, **{**kwargs, "epochs": 1 + epochs})
        more = time.perf_counter() - start - one
        per_epoch = (more - one) / epochs
        timed.append((one + more, one + (GAE_EPOCHS - 1) * per_epoch))
        return z

    module.gae_embeddings = gae


def _edgerand(attacks: str, old: bool, old_epochs: int) -> dict:
    """``graphpriv run edgerand -d cora --epsilon 0.5 --set attacks=...`` (utility only with
    ``attacks=none``), in this process; today's GAE timed on 1 and 1 + ``old_epochs`` epochs and
    scaled to 200 (:func:`_old_gae`)."""
    from graphpriv.attacks import embedding, protocol
    from graphpriv.experiments.runner import run_method
    from graphpriv.linkpred import node2vec

    utility = attacks == "none"
    timed: list[tuple[float, float]] = []
    if old:
        _old_gae(embedding, old_epochs, timed)
        _old_gae(protocol, old_epochs, timed)
        node2vec._UniformOTF.fits = staticmethod(lambda *args: False)  # pecanpy's SparseOTF walks
    result = run_method("edgerand", "cora", seed=0, overrides={**EDGERAND, "attacks": attacks, "utility": utility})
    seconds = result.info["attack_seconds"]["utility" if utility else attacks]
    spent, full = (sum(t[i] for t in timed) for i in (0, 1))
    out = {"seconds": seconds - spent + full,
           "publish": result.timings.get("perturbation", 0.0), "edges": result.info["published_edges"],
           "extrapolated": bool(timed)}
    if not old:
        out["metric"] = (f"LP {result.metrics['lp_auc']:.3f}, NC {result.metrics['nc_f1']:.3f}" if utility
                         else f"AUC {result.metrics[f'attack_auc_{attacks}']:.3f}")
    return out


def _old_seal_extraction(sample: int) -> dict:
    """Today's SEAL attack extraction on the release: whole 2-hop subgraphs (then cut to 200 nodes),
    timed and sized on ``sample`` training pairs and scaled to the attack's pairs."""
    from graphpriv.attacks.protocol import SensitiveLinkProtocol
    from graphpriv.data import load
    from graphpriv.linkpred.subgraphs import Extractor, cap_subgraph_size, extract_subgraphs
    from graphpriv.methods.publishing import EdgeRand

    protocol = SensitiveLinkProtocol(load("cora"), seed=0)
    graph = protocol.input_graph.to_data()
    released = EdgeRand(random_state=0, **EDGERAND).fit(graph, sensitive_links=protocol.sensitive_links).released_
    links = released.pairs[:, np.random.default_rng(0).choice(released.num_edges, sample + 1, replace=False)]
    extract_subgraphs(released.adjacency, links[:, :1], np.ones(1), extractor=Extractor.NEIGHBOURHOOD, h=2)  # compiled
    links = links[:, 1:]
    start = time.perf_counter()
    whole = extract_subgraphs(released.adjacency, links, np.ones(sample), extractor=Extractor.NEIGHBOURHOOD, h=2)
    cap_subgraph_size(whole, 200, np.random.default_rng(0))
    seconds = time.perf_counter() - start
    size = sum(getattr(whole, f).nbytes for f in ("nodes", "z", "edges", "local_edges", "node_ptr", "edge_ptr"))
    pairs = 2 * 2000 + 2 * protocol.split.sensitive_pos.shape[1]  # training pairs, then the scored pairs
    return {"seconds": seconds / sample * pairs, "gib": size / sample * 2 * 2000 / 2**30, "pairs": pairs,
            "sample": sample}


def _pb(method: str, old: bool, old_epochs: int) -> dict:
    """``graphpriv run METHOD -d pb``; today's path (dense padded batches) on ``old_epochs`` epochs,
    its training phase scaled to the configured epochs."""
    import graphpriv.methods.dplp_subgraph as dplp
    from graphpriv.experiments.runner import run_method
    from graphpriv.linkpred.subgraphs import collate_dense

    overrides = {}
    if old:
        dplp.collate_sparse = collate_dense
        overrides = {"epochs": old_epochs}
    result = run_method(method, "pb", seed=0, overrides=overrides)
    t = result.timings
    epochs = result.config["epochs"]
    total = t["total"]
    if old:
        full = dplp.SEALConfig().epochs if method == "seal-gcn" else dplp.DPLPConfig().epochs
        total += t["training"] * (full / epochs - 1)
        epochs = full
    return {"seconds": total, "training": t["training"], "extraction": t.get("extraction", 0.0),
            "epochs": epochs, "extrapolated": old, "metric": None if old else f"test AUC {result.metrics['test_auc']:.4f}"}


def _child(threads: int, fn, args, conn) -> None:
    import torch

    torch.set_num_threads(threads)
    try:
        out = fn(*args)
        out["peak_gib"] = _peak_gib()
        conn.send(out)
    except Exception as error:  # noqa: BLE001 - reported in the table
        conn.send({"error": f"{type(error).__name__}: {error}"[:120], "peak_gib": _peak_gib()})


def _measure(threads: int, timeout: float, fn, *args) -> dict:
    """``fn(*args)`` in a fresh process (its own peak resident memory), at most ``timeout`` s."""
    ctx = multiprocessing.get_context("spawn")
    here, there = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(threads, fn, args, there))
    start = time.perf_counter()
    proc.start()
    out = here.recv() if here.poll(timeout) else {"error": f"timed out after {timeout:.0f} s"}
    proc.join(5)
    if proc.is_alive():
        proc.kill()
    if "error" in out and proc.exitcode and proc.exitcode < 0:
        out["error"] += f" (exit {proc.exitcode})"
    out["wall"] = time.perf_counter() - start
    return out


def _cell(m: dict | None) -> str:
    if m is None:
        return "same code"
    if "error" in m:
        return m["error"]
    return f"{m['seconds']:.1f}{' (extrapolated)' if m.get('extrapolated') else ''}"


def _ratio(old: dict | None, new: dict) -> str:
    if old is None or "error" in old or "error" in new:
        return "-"
    return f"{old['seconds'] / new['seconds']:.1f}x"


def _mem(m: dict | None) -> str:
    return "-" if m is None else f"{m.get('peak_gib', float('nan')):.2f}"


def bench_dense_release(threads: int, old_epochs: int, pb_old_epochs: int, seal_sample: int, timeout: float) -> None:
    from graphpriv.attacks import ATTACKS

    load = os.getloadavg()
    print(f"## EdgeRand (epsilon 0.5) on Cora, and SEAL / DPLP-NS on PolBlogs: new path against today's\n\n"
          f"torch threads {threads}, {os.cpu_count()} CPUs, load average {load[0]:.2f} at the start; each cell "
          "is one fresh process (seconds of the measured step; peak resident memory of that process).\n")
    print("| step (graphpriv run ...) | new (s) | today's path (s) | speed-up | new peak GiB | today's peak GiB | result (new) |")
    print("|---|---|---|---|---|---|---|")
    new = _measure(threads, timeout, _edgerand, "none", False, old_epochs)
    old = _measure(threads, timeout, _edgerand, "none", True, old_epochs)
    print(f"| edgerand -d cora --epsilon 0.5 --set attacks=none: publishing (perturbation phase) | "
          f"{new.get('publish', float('nan')):.2f} | {old.get('publish', float('nan')):.2f} | same code | | | "
          f"{new.get('edges', '?'):,} edges |")
    print(f"| ... utility (GAE LP + GCN NC) | {_cell(new)} | {_cell(old)} | {_ratio(old, new)} | {_mem(new)} | "
          f"{_mem(old)} | {new.get('metric', '')} |")
    for name in ATTACKS:
        new = _measure(threads, timeout, _edgerand, name, False, old_epochs)
        if name in ("cn", "aa", "ra"):
            old = None
        elif name == "seal":
            old = _measure(threads, timeout, _old_seal_extraction, seal_sample)
        else:
            old = _measure(threads, timeout, _edgerand, name, True, old_epochs)
        if name == "seal" and "error" not in old:
            cell = (f"{old['seconds']:.0f} (extraction alone, extrapolated from {old['sample']} of {old['pairs']} "
                    f"subgraphs; its training set alone needs {old['gib']:.0f} GiB: killed, out of memory)")
        else:
            cell = _cell(old)
        print(f"| edgerand ... --set attacks={name} --set utility=false | {_cell(new)} | {cell} | "
              f"{_ratio(old, new)} | {_mem(new)} | {_mem(old) if name != 'seal' else '-'} | {new.get('metric', '')} |")
    for method in ("seal-gcn", "dplp-ns"):  # the subgraph GCN (seal-gcn: what this row has always timed)
        new = _measure(threads, timeout, _pb, method, False, pb_old_epochs)
        old = _measure(threads, timeout, _pb, method, True, pb_old_epochs)
        print(f"| {method} -d pb ({new.get('epochs', '?')} epochs) | {_cell(new)} | {_cell(old)} | {_ratio(old, new)} | "
              f"{_mem(new)} | {_mem(old)} | {new.get('metric', '')} |")
    print(f"\n(extrapolated: today's GAE timed on 1 and on {1 + old_epochs} epochs, scaled to {GAE_EPOCHS} "
          f"epochs; SEAL / DPLP-NS on PolBlogs on {pb_old_epochs} epochs, the rest of each run measured; "
          "'same code': the step did not change)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="cora")
    parser.add_argument("--heuristics-dataset", default="deezer_europe")
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--reference-pairs", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-suite", action="store_true")
    parser.add_argument("--dense-release", action="store_true",
                        help="EdgeRand at epsilon 0.5 on Cora and SEAL / DPLP-NS on pb, new against today's path")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of each measurement (--dense-release)")
    parser.add_argument("--old-epochs", type=int, default=3, help="GAE epochs today's path is timed on")
    parser.add_argument("--pb-old-epochs", type=int, default=2, help="SEAL / DPLP-NS epochs today's path is timed on")
    parser.add_argument("--seal-sample", type=int, default=8, help="subgraphs today's SEAL extraction is timed on")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before a measurement is stopped")
    args = parser.parse_args()
    if args.dense_release:
        bench_dense_release(args.threads, args.old_epochs, args.pb_old_epochs, args.seal_sample, args.timeout)
        return
    bench_heuristics(args.heuristics_dataset, args.pairs, args.reference_pairs, args.seed)
    if not args.skip_suite:
        bench_suite(args.dataset, args.seed)
    print(f"peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")


if __name__ == "__main__":
    main()
