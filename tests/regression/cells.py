"""One small fixed-seed cell per method: the numbers the estimator redesign must keep.

``python -m tests.regression.cells`` recomputes every cell and rewrites this machine's pins (run it
only on purpose: the files pin what the current code computes); ``test_golden.py`` runs each cell
through :func:`graphpriv.experiments.runner.run_method` and compares with :func:`golden_values`.

Float kernels are pinned to AVX2 before torch is first imported (:func:`pin_kernels`, called by
tests/conftest.py and by the writer): torch's own kernels (ATEN_CPU_CAPABILITY) and MKL's
(MKL_CBWR, conditional numerical reproducibility). On an AVX-512 machine MKL's CNR needs its
strict mode (``AVX2,STRICT``): without it, three cells (edgerand-synthesis' and
lapgraph-synthesis' lp_auc, gap-edp's val_accuracy) differed there from the AVX2 machine's pins;
with it they are equal (measured on an AVX-512 Intel Xeon; OpenBLAS, oneDNN and numpy's dispatch
pins changed none of them). One metric still differs there, PrivDPR's lp_auc (3.5e-5, its
training's gradient norm by 7e-8 relative; the kernel is not found: on the AVX-512 machine no
setting tried gives both of the AVX2 machine's numbers: MKL_ENABLE_INSTRUCTIONS=AVX2, MKL_CBWR
AVX512 or the pins plus OPENBLAS_CORETYPE=Haswell, ONEDNN_MAX_CPU_ISA=AVX2 and numpy's AVX-512
features disabled give the pins' numbers; MKL_CBWR=AVX2 or COMPATIBLE a third lp_auc;
ATEN_CPU_CAPABILITY=default the AVX2 lp_auc with a third gradient norm; finding it needs an AVX2
machine to compare intermediate tensors with). ``golden.json`` holds an AVX2 machine's numbers;
``golden_avx512.json`` holds only the metrics an Intel AVX-512 machine computes differently, and
such machines read golden.json with those replaced (an AVX-512 AMD EPYC computes golden.json's
numbers: MKL dispatches by vendor, :func:`has_intel_avx512`). The writer keeps that split: on an
AVX2 machine (or an AVX-512 AMD one) it rewrites golden.json; on an Intel AVX-512 machine it
leaves golden.json alone and rewrites only golden_avx512.json, with the metrics that differ from golden.json (so a
change of the code's numbers made on an AVX-512 machine shows up as a failure on AVX2 machines
until it is re-pinned there, instead of being written into both).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path

GOLDEN = Path(__file__).with_name("golden.json")
GOLDEN_AVX512 = GOLDEN.with_name("golden_avx512.json")

#: method -> config overrides; every cell runs on ``graph()`` with seed 0.
CELLS: dict[str, dict] = {
    "dplp-ps": {"epochs": 2, "batch_size": 32, "epsilon": 4.0},
    "dplp-ns": {"epochs": 2, "batch_size": 32, "epsilon": 4.0},
    "seal": {"epochs": 2, "h": 1},
    "seal-gcn": {"epochs": 2, "batch_size": 32},
    "lapgraph-sgnn": {"epochs": 2, "batch_size": 32, "epsilon": 4.0},
    "cn": {},
    "aa": {},
    "ra": {},
    "ra3": {},
    "dp-heuristic-mix": {"epsilon": 4.0},
    "gae": {"epochs": 20},
    "edgerand-gae": {"epochs": 20, "epsilon": 4.0},
    "lapgraph-gae": {"epochs": 20, "epsilon": 4.0},
    "dplp-rank": {"lin_epochs": 1, "umnn_epochs": 1},
    "dplp-rank-lin": {"lin_epochs": 1},
    "rank-exponential": {},
    "rank-laplace": {},
    "rank-staircase": {},
    "rank-nonprivate": {},
    # the edge count the cells were pinned with (the default was "model" then; it is "input" now)
    "privdpr": {"epochs": 1, "attacks": "none", "edge_count": "model"},
    "dpr": {"epochs": 1, "attacks": "none", "edge_count": "model"},
    "privdpr-tight": {"epochs": 1, "attacks": "none"},
    # the DPAR paper's setting the cells were pinned with (the defaults were; the one-row setting is now)
    "dpar-em0": {"epochs": 2, "node_rate": 0.09, "max_rows": None, "appr_share": 0.5},
    "dpar-em1": {"epochs": 2, "node_rate": 0.09, "max_rows": None, "appr_share": 0.5},
    "dpar-gm": {"epochs": 2, "node_rate": 0.09, "max_rows": None, "appr_share": 0.5},
    "dpar-nodp": {"epochs": 2, "max_rows": None, "appr_share": 0.5},
    "gap-edp": {"encoder_epochs": 5, "epochs": 5, "epsilon": 4.0},
    "gap-inf": {"encoder_epochs": 5, "epochs": 5},
    "gcn": {"epochs": 20},
    "progap-edp": {"epochs": 5, "epsilon": 4.0},
    "progap-inf": {"epochs": 5},
    "gap-ndp": {"encoder_epochs": 2, "epochs": 2, "epsilon": 4.0, "max_degree": 10},
    "progap-ndp": {"epochs": 2, "epsilon": 4.0, "max_degree": 10},
    "sage-ndp": {"epochs": 2, "epsilon": 4.0, "max_degree": 5},
    "dp-mlp-transductive": {"epochs": 2, "epsilon": 4.0},
    "mlp-transductive": {"epochs": 2},
    "dp-mlp": {"epochs": 2},
    "mlp": {"epochs": 2},
    "ppgsl": {"learner_steps": 2, "surrogate_epochs": 2, "attacks": "cn", "utility_normalisation": "none",
              "alpha": 0.005},  # the loss and alpha the cell was pinned with (the paper's; now the preset)
    "random-perturb": {"ratio": 0.2, "attacks": "cn"},
    "dice": {"ratio": 0.2, "attacks": "cn"},
    "edgerand": {"epsilon": 4.0, "attacks": "cn"},
    "lapgraph": {"epsilon": 4.0, "attacks": "cn"},
    "tmf": {"epsilon": 4.0, "attacks": "cn"},
    "dp-1k": {"epsilon": 4.0, "attacks": "cn"},
    "privgraph": {"epsilon": 4.0, "attacks": "cn"},
    "edgerand-synthesis": {"epsilon": 4.0, "attacks": "cn"},
    "lapgraph-synthesis": {"epsilon": 4.0, "attacks": "cn"},
}


def graph():
    """A 200-node, 4-class labelled SBM with features (seeded): every method can run on it."""
    from graphpriv.testing.graphs import labelled_sbm

    data = labelled_sbm(200, 4, p_in=0.15, seed=11)
    data.name = "sbm200"
    return data


@functools.cache
def run_cell(method: str):
    """The cell's :class:`~graphpriv.methods.base.Result` (seed 0, one torch thread); computed once
    per test session (the golden and the baseline tests read the same result)."""
    import torch

    from graphpriv.experiments.runner import run_method

    torch.set_num_threads(1)
    return run_method(method, graph(), seed=0, overrides=CELLS[method])


def summary(result) -> dict:
    """What a cell pins: every metric, and the epsilon and delta spent (None when non-private)."""
    privacy = result.privacy
    return {"metrics": result.metrics, "epsilon": privacy.epsilon if privacy else None,
            "delta": privacy.delta if privacy else None}


def _cpuinfo_words(cpuinfo: Path) -> set[str]:
    """The whitespace-separated words of ``cpuinfo`` (flags, vendor); empty where the file cannot be
    read (not Linux)."""
    try:
        return set(cpuinfo.read_text().split())
    except OSError:
        return set()


def has_avx512(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this machine's CPU has AVX-512 (the ``avx512f`` flag in ``cpuinfo``); False where
    the file cannot be read (not Linux)."""
    return "avx512f" in _cpuinfo_words(cpuinfo)


def pin_kernels() -> None:
    """Pin torch's and MKL's float kernels to AVX2 (environment variables already set win); must
    run before torch is first imported. MKL's strict CNR mode on AVX-512 machines only: AVX2
    machines keep the setting golden.json was pinned with."""
    os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
    os.environ.setdefault("MKL_CBWR", "AVX2,STRICT" if has_avx512() else "AVX2")


def has_intel_avx512(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether MKL takes its AVX-512 paths here: an AVX-512 CPU (:func:`has_avx512`) from Intel
    (``vendor_id`` GenuineIntel). MKL dispatches by vendor: on an AVX-512 AMD EPYC every cell,
    PrivDPR's lp_auc included, gives golden.json's AVX2 numbers (measured with pin_kernels' strict
    CNR), so golden_avx512.json applies to Intel's AVX-512 CPUs only."""
    return {"avx512f", "GenuineIntel"} <= _cpuinfo_words(cpuinfo)


def golden_values(avx512: bool | None = None) -> dict:
    """The pins this machine's cells must match: golden.json, with golden_avx512.json's metrics
    in place of its own where ``avx512`` (default: :func:`has_intel_avx512`)."""
    if avx512 is None:
        avx512 = has_intel_avx512()
    values = json.loads(GOLDEN.read_text())
    if avx512:
        for method, metrics in json.loads(GOLDEN_AVX512.read_text()).items():
            values[method]["metrics"].update(metrics)
    return values


def avx512_overrides(computed: dict, base: dict) -> dict:
    """The metrics of ``computed`` (method -> summary) that differ from ``base``'s (golden.json):
    what golden_avx512.json holds. Epsilon and delta are never overridden (they do not depend on
    the machine); a method or metric missing from ``base`` raises KeyError (re-pin on AVX2 first)."""
    out: dict = {}
    for method, got in computed.items():
        diff = {name: value for name, value in got["metrics"].items()
                if value != base[method]["metrics"][name]}
        if diff:
            out[method] = diff
    return out


def main() -> None:
    if "torch" in sys.modules:
        raise RuntimeError("pin_kernels() must run before torch is imported")
    pin_kernels()
    out = {}
    for method in CELLS:
        out[method] = summary(run_cell(method))
        print(method, out[method], file=sys.stderr, flush=True)
    if has_intel_avx512():
        overrides = avx512_overrides(out, json.loads(GOLDEN.read_text()))
        GOLDEN_AVX512.write_text(json.dumps(overrides, indent=1, sort_keys=True) + "\n")
        print(f"Intel AVX-512 machine: wrote {GOLDEN_AVX512.name} ({len(overrides)} methods differ from "
              f"{GOLDEN.name}, left unchanged; re-pin it on an AVX2 machine)", file=sys.stderr)
    else:
        GOLDEN.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
