"""The bad-input case matrix: every case, the outcome it must have, and how it is run.

``CASES`` is shared by ``tests/reliability/test_reliability.py`` (one pytest case each) and
``scripts/reliability.py`` (the counts table). Categories:

- ``cli-args``: every command (run, attack, sweep, reproduce, report, audit, datasets,
  accountant) given bad option values.
- ``graph-files``: malformed, odd or hostile user graph files through ``graphpriv datasets info
  FILE`` and ``graphpriv run -d FILE``.
- ``python-entry``: hand-built PyG ``Data`` and seeds given to every method's ``run`` and to
  :func:`graphpriv.experiments.runner.run_method`.
- ``small-graphs``: graphs too small for a method's split.
- ``attack-release``: releases that do not belong to the dataset they are attacked with.
- ``store``: bad results stores, and stores that fail only after the run (nothing may be lost).
- ``report``: ``graphpriv report`` on missing, corrupt, foreign and partly bad stores.
- ``sweep``: bad sweep files, ``--dry-run`` cells, failing runs and their bookkeeping.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tests.reliability import fixtures as fx
from tests.reliability.harness import (
    CLEAR,
    HANDLED,
    LOST,
    SILENT,
    TRACEBACK,
    UNCLEAR,
    Case,
    Ctx,
    Observation,
    call,
    cli_failure,
    error_line,
    invoke,
    judge_cli,
    one_line,
    output_of,
    patched,
)

CASES: list[Case] = []
REG = fx.REG
SEED_2_63 = str(2**63)


def _add(case: Case) -> None:
    if any(c.id == case.id for c in CASES):
        raise ValueError(f"duplicate case id {case.id}")
    CASES.append(case)


def _fmt(arg: object, env: dict[str, Any]) -> str:
    text = str(arg)
    return text.format(**env) if "{" in text and env else text


def cli(id: str, category: str, args: Sequence[object], mentions: Sequence[Any] = (), *, expect: str = CLEAR,
        setup: Callable[[Ctx], dict[str, Any]] | None = None, codes: Sequence[int] = (2,),
        markers: Sequence[str] = ("error:",), scope: str = "line",
        check: Callable[[Ctx, str], tuple[bool, str]] | None = None,
        after: Callable[[Ctx, str, Observation], Observation | None] | None = None, slow: bool = False) -> None:
    """A CLI case: ``graphpriv ARGS`` (``{name}`` in an argument is filled from ``setup(ctx)``)."""

    def run(ctx: Ctx) -> Observation:
        env = setup(ctx) if setup else {}
        ctx.env.update(env)
        result = invoke([_fmt(a, env) for a in args])
        text = output_of(result)
        obs = judge_cli(result, mentions=mentions, codes=codes, markers=markers, scope=scope,
                        check=(lambda out: check(ctx, out)) if check else None)
        if after is not None:
            override = after(ctx, text, obs)
            if override is not None:
                return override
        return obs

    _add(Case(id, category, expect, run, "graphpriv " + " ".join(map(str, args)), slow,
              needs_data=REG in map(str, args)))


def py(id: str, category: str, fn: Callable[[Ctx], Any], mentions: Sequence[Any] = (), *, expect: str = CLEAR,
       check: Callable[[Ctx, Any], tuple[bool, str]] | None = None, what: str = "", slow: bool = False) -> None:
    """A Python case: ``fn(ctx)`` (a GraphPrivError is the clear answer to bad input)."""

    def run(ctx: Ctx) -> Observation:
        return call(lambda: fn(ctx), mentions, (lambda value: check(ctx, value)) if check else None)

    _add(Case(id, category, expect, run, what or id, slow))


def custom(id: str, category: str, fn: Callable[[Ctx], Observation], *, expect: str, what: str = "",
           slow: bool = False, needs_data: bool = False) -> None:
    _add(Case(id, category, expect, fn, what, slow, needs_data))


# -- shared checks -----------------------------------------------------------------------------------


def no_file(rel: str, what: str) -> Callable[[Ctx, str, Observation], Observation | None]:
    """After-check: ``rel`` must not exist (else ``silent_accept``: something was created or ran)."""

    def after(ctx: Ctx, text: str, obs: Observation) -> Observation | None:
        if ctx.path(rel).exists():
            return Observation(SILENT, f"{what}: {rel} exists ({obs.outcome}: {obs.detail})")
        return None

    return after


def before_work(ctx: Ctx, text: str, obs: Observation) -> Observation | None:
    """After-check of an error that must come before any training: no result table printed."""
    if obs.outcome == CLEAR and "guarantee:" in text:
        return Observation(UNCLEAR, f"refused only after the run (a result table was printed): {obs.detail}")
    return None


def logged_or_printed(phrase: str) -> Callable[[Ctx, str], tuple[bool, str]]:
    def check(ctx: Ctx, out: str) -> tuple[bool, str]:
        if phrase.lower() in out.lower() or ctx.logged(phrase):
            where = "printed" if phrase.lower() in out.lower() else "logged"
            return True, f"{phrase!r} {where}: {one_line([ln for ln in ctx.logs if phrase.lower() in ln.lower()][:1])}"
        return False, f"exit 0 but {phrase!r} neither printed nor logged (logs: {one_line(ctx.logs, 160)})"

    return check


def recorded_in_json(phrase: str, json_name: str = "r.json") -> Callable[[Ctx, str], tuple[bool, str]]:
    """Handled: the normalisation is in the JSON's ``info.input_normalisations``, in the printed
    table, and logged."""

    def check(ctx: Ctx, out: str) -> tuple[bool, str]:
        path = ctx.path(json_name)
        if not path.is_file():
            return False, f"exit 0 but {json_name} was not written"
        notes = json.loads(path.read_text()).get("info", {}).get("input_normalisations") or []
        if not any(phrase.lower() in n.lower() for n in notes):
            return False, f"info.input_normalisations = {notes!r} lacks {phrase!r}"
        if phrase.lower() not in out.lower():
            return False, f"recorded {notes!r} but not printed"
        if not ctx.logged(phrase):
            return False, f"recorded {notes!r} but not logged"
        return True, f"recorded, printed and logged: {notes!r}"

    return check


# ======================================================================================================
# cli-args: graphpriv run
# ======================================================================================================

C = "cli-args"


def _setup_files(ctx: Ctx) -> dict[str, Any]:
    fx.a_file(ctx)
    (ctx.tmp / "adir").mkdir(exist_ok=True)
    (ctx.tmp / "adir.json").mkdir(exist_ok=True)
    fx.tiny_txt(ctx)
    return {}


def run_err(id: str, args: Sequence[object], mentions: Sequence[Any], **kw: Any) -> None:
    kw.setdefault("after", before_work)
    cli(f"cli-run-{id}", C, ["run", *args], mentions, **kw)


run_err("unknown-method", ["nope", "-d", REG, "--no-store"], ["nope", "unknown method"])
run_err("unknown-dataset", ["cn", "-d", "nope", "--no-store"], ["nope", "unknown dataset"])
run_err("missing-dataset-option", ["cn", "--no-store"], ["--dataset"])
run_err("empty-dataset-string", ["cn", "-d", "", "--no-store"], ["dataset"])
run_err("negative-seed", ["cn", "-d", REG, "--seed", "-1", "--no-store"], ["seed", "-1"])
run_err("seed-2-32", ["cn", "-d", REG, "--seed", str(2**32), "--no-store"], ["seed"])
run_err("seed-2-63", ["cn", "-d", REG, "--seed", SEED_2_63, "--no-store"], ["seed"])
run_err("seed-not-int", ["cn", "-d", REG, "--seed", "abc", "--no-store"], ["--seed"])
for _name, _eps in (("zero", "0"), ("negative", "-1"), ("inf", "inf"), ("nan", "nan"), ("1e9", "1e9"),
                    ("101", "101")):
    run_err(f"epsilon-{_name}", ["dplp-ps", "-d", REG, "--epsilon", _eps, "--no-store"], ["epsilon"])
run_err("epsilon-not-number", ["dplp-ps", "-d", REG, "--epsilon", "abc", "--no-store"], ["--epsilon"])
for _name, _delta in (("zero", "0"), ("one", "1"), ("half", "0.5"), ("negative", "-1e-5"), ("nan", "nan")):
    run_err(f"delta-{_name}", ["dplp-ps", "-d", REG, "--delta", _delta, "--no-store"], ["delta"])
run_err("delta-above-1-over-edges", ["dplp-ps", "-d", REG, "--delta", "1e-3", "--no-store"],
        ["delta", str(fx.REG_EDGES)])
run_err("delta-above-1-over-nodes", ["dp-mlp", "-d", "{pt}", "--delta", "0.05", "--set", "epochs=1", "--no-store"],
        ["delta", "60"], setup=lambda ctx: {"pt": fx.tiny_pt(ctx)})
run_err("set-no-equals", ["dplp-ps", "-d", REG, "--set", "k", "--no-store"], ["--set"])
run_err("set-empty-key", ["dplp-ps", "-d", REG, "--set", "=3", "--no-store"], ["--set"])
run_err("set-empty-value", ["dplp-ps", "-d", REG, "--set", "k=", "--no-store"], ["k"])
run_err("set-unknown-key", ["dplp-ps", "-d", REG, "--set", "foo=1", "--no-store"], ["foo"])
run_err("set-wrong-type", ["dplp-ps", "-d", REG, "--set", "k=abc", "--no-store"], ["k"])
run_err("set-out-of-range", ["dplp-ps", "-d", REG, "--set", "k=99", "--no-store"], ["k"])
run_err("set-epochs-zero", ["dplp-ps", "-d", REG, "--set", "epochs=0", "--no-store"], ["epochs"])
run_err("set-batch-size-negative", ["dplp-ps", "-d", REG, "--set", "batch_size=-1", "--no-store"], ["batch_size"])
run_err("set-private-junk", ["dplp-ps", "-d", REG, "--set", "private=maybe", "--no-store"], ["private"])
run_err("set-ratio-out-of-range", ["random-perturb", "-d", REG, "--set", "ratio=1.5", "--no-store"], ["ratio"])
run_err("set-unknown-attack", ["random-perturb", "-d", REG, "--set", "attacks=foo", "--no-store"], ["attack"])
run_err("set-privdpr-s-below-1", ["privdpr", "-d", REG, "--set", "s=0.5", "--no-store"], ["'s'"])
def _names_every_field(ctx: Ctx, text: str, obs: Observation) -> Observation | None:
    if obs.outcome == CLEAR and not re.search(r"^theta: ", text, re.MULTILINE):
        return Observation(UNCLEAR, f"the second invalid field (theta) is not on a line of its own: {obs.detail}")
    return before_work(ctx, text, obs)


run_err("set-two-invalid-fields", ["dplp-ps", "-d", REG, "--set", "k=99", "--set", "theta=0", "--no-store"], ["k"],
        after=_names_every_field)
cli("cli-run-allow-large-delta-keeps-it", C,
    ["run", "dplp-ps", "-d", "{g}", "--delta", "0.05", "--allow-large-delta", "--set", "epochs=1", "--no-store"],
    expect=HANDLED, setup=lambda ctx: {"g": fx.tiny_txt(ctx)},
    check=lambda ctx, out: (bool(re.search(r"delta\s*[│|]\s*0\.05", out)),
                            "the run kept delta 0.05 and printed it" if re.search(r"delta\s*[│|]\s*0\.05", out)
                            else f"no 'delta 0.05' row: {one_line(out[-300:])}"))

run_err("accounting-junk", ["dplp-ps", "-d", REG, "--accounting", "foo", "--no-store"], ["accounting"])
run_err("accounting-for-cn", ["cn", "-d", REG, "--accounting", "paper", "--no-store"], ["accounting"])
for _m in ("mlp", "seal", "cn", "dpr", "dpar-nodp", "ppgsl", "rank-nonprivate"):
    run_err(f"epsilon-for-{_m}", [_m, "-d", REG, "--epsilon", "2", "--no-store"], ["epsilon"])
run_err("epsilon-with-private-false", ["dplp-ps", "-d", REG, "--epsilon", "2", "--set", "private=false",
                                       "--no-store"], ["epsilon"])
run_err("out-for-non-publishing", ["cn", "-d", REG, "--out", "g.txt", "--no-store"], ["--out"])
run_err("out-wrong-suffix", ["random-perturb", "-d", REG, "--out", "g.png", "--no-store"], ["--out"])
run_err("out-under-a-file", ["random-perturb", "-d", REG, "--out", "afile/g.txt", "--no-store"], ["--out"],
        setup=_setup_files)
run_err("json-wrong-suffix", ["cn", "-d", REG, "--json", "r.txt", "--no-store"], ["--json"])
run_err("json-under-a-file", ["cn", "-d", REG, "--json", "afile/r.json", "--no-store"], ["--json"], setup=_setup_files)
run_err("json-is-a-folder", ["cn", "-d", REG, "--json", "adir.json", "--no-store"], ["--json"], setup=_setup_files)
run_err("store-corrupt", ["cn", "-d", REG, "--store", "{s}"], ["corrupt.sqlite"],
        setup=lambda ctx: {"s": fx.corrupt_store(ctx)})
run_err("store-foreign-sqlite", ["cn", "-d", REG, "--store", "{s}"], ["foreign.sqlite"],
        setup=lambda ctx: {"s": fx.foreign_store(ctx)})
run_err("store-under-a-file", ["cn", "-d", REG, "--store", "afile/s.sqlite"], ["afile"], setup=_setup_files)
run_err("store-is-a-folder", ["cn", "-d", REG, "--store", "adir"], ["adir"], setup=_setup_files)
run_err("readme-example-paper-accounting",
        ["dplp-ps", "-d", REG, "--epsilon", "4", "--set", "k=3", "--set", "theta=10", "--accounting", "paper",
         "--no-store"], ["M=", "training examples"])

# ======================================================================================================
# cli-args: attack, sweep (file errors), reproduce, report, audit, datasets, accountant
# ======================================================================================================


def _release(ctx: Ctx) -> dict[str, Any]:
    path = fx.write(ctx, "rel.txt", "# num_nodes 332\n0 1\n1 2\n2 3\n")
    return {"rel": path}


for _id, _args, _m in (
    ("unknown-attack", ["-a", "foo"], ["foo"]),
    ("negative-seed", ["--seed", "-3"], ["seed"]),
    ("seed-2-63", ["--seed", SEED_2_63], ["seed"]),
    ("sensitive-ratio-above-1", ["--sensitive-ratio", "1.5"], ["sensitive_ratio"]),
    ("test-ratio-zero", ["--test-ratio", "0"], ["test_ratio"]),
    ("ratios-sum-above-1", ["--sensitive-ratio", "0.6", "--test-ratio", "0.6"], ["ratio"]),
):
    cli(f"cli-attack-{_id}", C, ["attack", "-g", "{rel}", "-d", REG, *_args], _m, setup=_release)
cli("cli-attack-unknown-dataset", C, ["attack", "-g", "{rel}", "-d", "nope"], ["nope"], setup=_release)

cli("cli-reproduce-unknown-table", C, ["reproduce", "nope", "--store", "s.sqlite"], ["nope", "table"])
cli("cli-reproduce-seeds-zero", C, ["reproduce", "dplp-table2", "--seeds", "0", "--store", "s.sqlite"], ["seeds"])
cli("cli-reproduce-seeds-negative", C, ["reproduce", "dplp-table2", "--seeds", "-1", "--store", "s.sqlite"],
    ["seeds"])
cli("cli-reproduce-store-corrupt", C, ["reproduce", "dplp-table2", "--quick", "--store", "{s}"], ["corrupt.sqlite"],
    setup=lambda ctx: {"s": fx.corrupt_store(ctx)})
cli("cli-reproduce-from-results-missing", C, ["reproduce", "dplp-table2", "--from-results", "--docs", "nodocs"],
    ["no results file", "graphpriv reproduce dplp-table2"])
cli("cli-reproduce-from-results-and-quick", C, ["reproduce", "ppgsl-table1", "--from-results", "--quick"],
    ["--from-results", "--quick"])
cli("cli-reproduce-path-as-table", C, ["reproduce", "../grids/audit", "--store", "s.sqlite"], ["unknown table"])
cli("cli-run-unknown-preset", C, ["run", "dplp-ps", "-d", REG, "--preset", "nope", "--no-store"],
    ["no preset 'nope'", "paper"])
cli("cli-plot-bad-curve", C, ["plot", "--datasets", REG, "--out", "p.png", "--curve", "dp-mlp"], ["LABEL=METHOD"])
cli("cli-plot-missing-store", C, ["plot", "--datasets", REG, "--out", "p.png", "--store", "none.sqlite"],
    ["no results store"])

for _id, _args, _m in (
    ("unknown-method", ["nope"], ["nope"]),
    ("one-canary", ["edgerand", "--canaries", "1"], ["canaries"]),
    ("zero-canaries", ["edgerand", "--canaries", "0"], ["canaries"]),
    ("epsilon-zero", ["edgerand", "--epsilon", "0"], ["epsilon"]),
    ("epsilon-negative", ["edgerand", "--epsilon", "-2"], ["epsilon"]),
    ("epsilon-inf", ["edgerand", "--epsilon", "inf"], ["epsilon"]),
    ("epsilon-nan", ["edgerand", "--epsilon", "nan"], ["epsilon"]),
    ("epsilon-1e9", ["edgerand", "--epsilon", "1e9"], ["epsilon"]),
    ("negative-seed", ["edgerand", "--seed", "-1"], ["seed"]),
    ("epochs-zero", ["dplp-ps", "--epochs", "0"], ["epochs"]),
    ("ratio-above-1", ["random-perturb", "--non-private", "--ratio", "1.5"], ["ratio"]),
    ("attack-for-edgerand", ["edgerand", "--attack", "gradient"], ["attack"]),
    ("ratio-for-edgerand", ["edgerand", "--ratio", "0.5"], ["ratio"]),
    ("non-private-method", ["mlp"], ["non-private"]),
    ("too-few-canaries", ["edgerand", "--canaries", "4"], ["canaries"]),
):
    cli(f"cli-audit-{_id}", C, ["audit", *_args, "-d", REG], _m)
cli("cli-audit-unknown-dataset", C, ["audit", "edgerand", "-d", "nope"], ["nope"])

cli("cli-datasets-info-unknown", C, ["datasets", "info", "nope"], ["nope"])
cli("cli-datasets-unknown-subcommand", C, ["datasets", "nope"], ["nope"])
cli("cli-datasets-info-no-argument", C, ["datasets", "info"], ["name"])

_ACC = ["accountant", "-z", "1", "-m", "10", "-n", "100"]
for _id, _args, _m in (
    ("batch-size-zero", ["accountant", "-z", "1", "-m", "0", "-n", "100", "--steps", "5"], ["batch_size"]),
    ("dataset-size-zero", ["accountant", "-z", "1", "-m", "10", "-n", "0", "--steps", "5"], ["dataset_size"]),
    ("batch-above-dataset", ["accountant", "-z", "1", "-m", "200", "-n", "100", "--steps", "5"], ["batch_size"]),
    ("steps-zero", [*_ACC, "--steps", "0"], ["steps"]),
    ("steps-negative", [*_ACC, "--steps", "-4"], ["steps"]),
    ("epochs-negative", [*_ACC, "--epochs", "-1"], ["epochs"]),
    ("epochs-zero", [*_ACC, "--epochs", "0"], ["epochs"]),
    ("epochs-nan", [*_ACC, "--epochs", "nan"], ["epochs"]),
    ("epochs-inf", [*_ACC, "--epochs", "inf"], ["epochs"]),
    ("sampling-junk", [*_ACC, "--steps", "5", "--sampling", "foo"], ["sampling"]),
    ("group-size-zero", [*_ACC, "--steps", "5", "-K", "0"], ["group_size"]),
    ("group-size-above-n", [*_ACC, "--steps", "5", "-K", "101"], ["group_size"]),
    ("delta-2", [*_ACC, "--steps", "5", "--delta", "2"], ["delta"]),
    ("delta-zero", [*_ACC, "--steps", "5", "--delta", "0"], ["delta"]),
    ("steps-and-epochs", [*_ACC, "--steps", "5", "--epochs", "1"], ["--steps", "--epochs"]),
    ("neither-steps-nor-epochs", [*_ACC], ["--steps", "--epochs"]),
    ("noise-negative", ["accountant", "-z", "-1", "-m", "10", "-n", "100", "--steps", "5"], ["noise_multiplier"]),
    ("noise-zero", ["accountant", "-z", "0", "-m", "10", "-n", "100", "--steps", "5"], ["noise_multiplier"]),
    ("noise-nan", ["accountant", "-z", "nan", "-m", "10", "-n", "100", "--steps", "5"], ["noise_multiplier"]),
    ("noise-and-target", [*_ACC, "--steps", "5", "--target-epsilon", "1"], ["--noise-multiplier"]),
    ("target-epsilon-zero", ["accountant", "--target-epsilon", "0", "-m", "10", "-n", "100", "--steps", "5"],
     ["epsilon"]),
    ("target-epsilon-1e9", ["accountant", "--target-epsilon", "1e9", "-m", "10", "-n", "100", "--steps", "5"],
     ["epsilon"]),
    ("accounting-junk", [*_ACC, "--steps", "5", "--accounting", "foo"], ["accounting"]),
    ("paper-accounting-with-poisson", [*_ACC, "--steps", "5", "--accounting", "paper"], ["paper"]),
):
    cli(f"cli-accountant-{_id}", C, _args, _m)

# ======================================================================================================
# graph-files: datasets info FILE, run -d FILE
# ======================================================================================================

G = "graph-files"


def _pt_data(ctx: Ctx, name: str, **change: Any) -> Path:
    """A saved ``Data`` (the valid labelled graph) with attributes replaced (None deletes)."""
    from torch_geometric.data import Data

    d = fx.labelled(12)
    values = {"edge_index": d.edge_index, "x": d.x, "y": d.y, "num_nodes": d.num_nodes}
    values.update(change)
    return fx.save_pt(ctx, name, Data(**{k: v for k, v in values.items() if v is not None}))


def _file(name: str, content: Callable[[Ctx], Path] | str | bytes) -> Callable[[Ctx], dict[str, Any]]:
    def setup(ctx: Ctx) -> dict[str, Any]:
        path = content(ctx) if callable(content) else fx.write(ctx, name, content)
        return {"f": path}

    return setup


def _npz(kind: str) -> Callable[[Ctx], Path]:
    def make(ctx: Ctx) -> Path:
        import scipy.sparse as sp

        path = ctx.path(f"{kind}.npz")
        if kind == "garbage":
            path.write_bytes(b"PK\x03\x04 definitely not a zip archive" * 8)
        elif kind == "nonsquare":
            sp.save_npz(path, sp.random(5, 7, density=0.3, format="csr", random_state=0))
        elif kind == "empty":
            sp.save_npz(path, sp.csr_matrix((6, 6)))
        return path

    return make


def _mat(kind: str) -> Callable[[Ctx], Path]:
    def make(ctx: Ctx) -> Path:
        import scipy.io as sio

        path = ctx.path(f"{kind}.mat")
        if kind == "garbage":
            path.write_bytes(b"MATLAB 5.0 MAT-file garbage" + bytes(range(256)))
        else:  # no square matrix
            sio.savemat(path, {"a": np.ones((3, 4)), "b": np.arange(5.0)})
        return path

    return make


def _evil_pt(ctx: Ctx) -> Path:
    import torch

    path = ctx.path("evil.pt")
    torch.save({"edge_index": torch.tensor([[0, 1], [1, 0]]), "payload": fx.Evil(str(ctx.path("PWNED")))}, path)
    return path


def _tensor(values, dtype="long"):
    import torch

    return torch.tensor(values, dtype=getattr(torch, dtype))


def _inf_x(kind: str) -> Callable[[Ctx], Path]:
    def make(ctx: Ctx) -> Path:
        d = fx.labelled(12)
        x = d.x.clone()
        x[3, 1] = float("inf") if kind == "inf" else float("nan")
        return _pt_data(ctx, f"{kind}.pt", x=x)

    return make


_FILES: list[tuple[str, Callable[[Ctx], dict[str, Any]], list[Any]]] = [
    ("empty", _file("empty.txt", ""), ["no edges"]),
    ("only-comments", _file("comments.txt", "# a comment\n% another\n// and another\n"), ["no edges"]),
    ("self-loop-only", _file("loop.txt", "3 3\n"), ["no edges"]),
    ("all-weights-non-positive", _file("w0.txt", "0 1 0\n1 2 -1\n"), ["weight"]),
    ("nan-weight", _file("wnan.txt", "0 1 1\n1 2 nan\n"), ["finite"]),
    ("non-numeric-line-in-middle", _file("mid.txt", "0 1\n1 2\nfoo bar\n2 3\n"), [":3:"]),
    ("negative-ids", _file("neg.txt", "0 1\n-1 2\n"), ["out of range"]),
    ("ids-above-int64", _file("big.txt", f"0 1\n1 {2**63}\n"), ["out of range"]),
    ("float-ids", _file("float.txt", "0.5 1.5\n1.5 2.5\n2.5 3.5\n"), ["integer"]),
    ("four-columns", _file("four.txt", "0 1 1 9\n"), ["expected"]),
    ("binary-junk", _file("junk.txt", bytes(range(256)) * 4), ["junk.txt"]),
    ("unsupported-suffix", _file("g.xyz", "0 1\n"), ["unsupported"]),
    ("missing-file", lambda ctx: {"f": "nope.txt"}, ["nope.txt"]),
    ("a-folder", lambda ctx: (ctx.path("adir.txt").mkdir(), {"f": "adir.txt"})[1],
     ["adir.txt", re.compile(r"folder|directory", re.IGNORECASE)]),
    ("npz-garbage", _file("", _npz("garbage")), ["npz"]),
    ("npz-not-square", _file("", _npz("nonsquare")), ["square"]),
    ("npz-no-edges", _file("", _npz("empty")), ["no edges"]),
    ("mat-garbage", _file("", _mat("garbage")), [".mat"]),
    ("mat-no-square-matrix", _file("", _mat("nosquare")), ["square"]),
    ("pt-garbage", _file("garbage.pt", b"\x80\x04 not a torch file" * 10), ["garbage.pt"]),
    ("pt-not-a-data", _file("", lambda ctx: fx.save_pt(ctx, "dict.pt", {"edge_index": _tensor([[0, 1], [1, 0]])})),
     ["Data"]),
    ("pt-inf-features", _file("", _inf_x("inf")), ["finite"]),
    ("pt-nan-features", _file("", _inf_x("nan")), ["finite"]),
    ("pt-edge-index-out-of-range",
     _file("", lambda ctx: _pt_data(ctx, "oor.pt", edge_index=_tensor([[0, 1, 9], [1, 0, 2]]), num_nodes=5, x=None,
                                    y=None)), ["9"]),
    ("pt-float-edge-index",
     _file("", lambda ctx: _pt_data(ctx, "fei.pt", edge_index=_tensor([[0.0, 1.0], [1.0, 0.0]], "float32"))),
     ["integer", "float"]),
    ("pt-edge-index-3-rows",
     _file("", lambda ctx: _pt_data(ctx, "e3.pt", edge_index=_tensor([[0, 1], [1, 0], [2, 2]]))), ["[2, E]"]),
    ("pt-float-labels", _file("", lambda ctx: _pt_data(ctx, "fy.pt", y=fx.labelled(12).y.float())),
     ["labels", "float"]),
    ("pt-negative-num-nodes", _file("", lambda ctx: _pt_data(ctx, "nn.pt", num_nodes=-4, x=None, y=None)),
     ["num_nodes"]),
]
for _id, _setup, _m in _FILES:
    cli(f"file-info-{_id}", G, ["datasets", "info", "{f}"], _m, setup=_setup)

cli("file-info-pt-unpickles-code", G, ["datasets", "info", "{f}"], ["evil.pt"], setup=_file("", _evil_pt),
    after=no_file("PWNED", "the .pt file's pickle ran code"))

# valid-but-odd files: the normalisation must be named
_ODD: list[tuple[str, str, str]] = [
    ("weights-zero-and-negative", fx.edge_text(fx.ring_edges()).replace("0 1\n", "0 1 0\n").replace("1 2\n", "1 2 -3\n"),
     "weight <= 0"),
    ("directed-duplicates", fx.edge_text(fx.ring_edges()) + "1 0\n0 1\n6 5\n", "duplicate"),
    ("header-line", "source target\n" + fx.edge_text(fx.ring_edges()), "header"),
    ("self-loops", fx.edge_text(fx.ring_edges()) + "4 4\n7 7\n", "self-loop"),
]
for _id, _text, _phrase in _ODD:
    cli(f"file-info-{_id}", G, ["datasets", "info", "{f}"], expect=HANDLED, setup=_file("odd.txt", _text),
        check=logged_or_printed(_phrase))
    cli(f"file-run-{_id}", G, ["run", "cn", "-d", "{f}", "--no-store", "--json", "r.json"], expect=HANDLED,
        setup=_file("odd.txt", _text), check=recorded_in_json(_phrase))

cli("file-run-empty", G, ["run", "cn", "-d", "{f}", "--no-store"], ["no edges"], setup=_file("empty.txt", ""))
cli("file-run-one-edge", G, ["run", "cn", "-d", "{f}", "--no-store"], ["too few edges"],
    setup=_file("one.txt", "0 1\n"), after=before_work)
cli("file-run-missing", G, ["run", "cn", "-d", "nope.txt", "--no-store"], ["nope.txt"])
cli("file-run-pt-nan-features", G, ["run", "dp-mlp", "-d", "{f}", "--set", "epochs=1", "--no-store"], ["finite"],
    setup=_file("", _inf_x("nan")))
cli("file-run-pt-unpickles-code", G, ["run", "cn", "-d", "{f}", "--no-store"], ["evil.pt"],
    setup=_file("", _evil_pt), after=no_file("PWNED", "the .pt file's pickle ran code"))
cli("file-run-dp-mlp-without-features", G, ["run", "dp-mlp", "-d", "{f}", "--set", "epochs=1", "--no-store"],
    ["features"], setup=lambda ctx: {"f": fx.tiny_txt(ctx)}, after=before_work)
cli("file-run-dpar-gm-without-labels", G, ["run", "dpar-gm", "-d", "{f}", "--set", "epochs=1", "--no-store"],
    ["label"], setup=_file("", lambda ctx: _pt_data(ctx, "noy.pt", y=None)), after=before_work)

# ======================================================================================================
# python-entry: every method's run, and run_method
# ======================================================================================================

P = "python-entry"


def _method_call(method: str, data_fn: Callable[[], Any], seed: Any = 0) -> Callable[[Ctx], Any]:
    def fn(ctx: Ctx) -> Any:
        from graphpriv.experiments.registry import METHODS, make_config

        return METHODS[method].run(make_config(method, fx.CHEAP[method]), data_fn(), seed=seed, method=method)

    return fn


def _bad(kind: str):
    """A hand-built ``Data`` (from the valid 60-node labelled graph) broken in one way."""
    import torch
    from torch_geometric.data import Data

    d = fx.labelled()
    n = d.num_nodes
    ei, x, y = d.edge_index.clone(), d.x.clone(), d.y.clone()
    if kind == "id-out-of-range":
        ei[1, 0] = n + 5
    elif kind == "negative-id":
        ei[0, 0] = -1
    elif kind == "huge-id":
        ei[0, 0] = 2**40
    elif kind == "float-edge-index":
        ei = ei.float()
    elif kind == "edge-index-3-rows":
        ei = torch.cat([ei, ei[:1]], dim=0)
    elif kind == "no-edges":
        ei = torch.empty(2, 0, dtype=torch.long)
    elif kind == "nan-features":
        x[5, 2] = float("nan")
    elif kind == "inf-features":
        x[5, 2] = float("inf")
    elif kind == "wrong-feature-rows":
        x = torch.cat([x, x[:3]], dim=0)
    elif kind == "labels-minus-5":
        y[4] = -5
    elif kind == "labels-1e9":
        y[4] = 10**9
    elif kind == "one-class":
        y[:] = 0
    elif kind == "float-labels":
        y = y.float()
    name = f"hand-built ({kind})"  # named: a missing name has cases of its own (py-*-data-without-name)
    if kind == "no-num-nodes":
        return Data(edge_index=ei, name=name)
    if kind == "no-labels":
        return Data(edge_index=ei, x=x, num_nodes=n, name=name)
    if kind == "no-features":
        return Data(edge_index=ei, y=y, num_nodes=n, name=name)
    return Data(edge_index=ei, x=x, y=y, num_nodes=n, name=name)


def _named(data=None):
    data = fx.labelled() if data is None else data
    data.name = "hand-built"
    return data


def _ran(ctx: Ctx, result: Any) -> tuple[bool, str]:
    """Handled: a valid hand-built ``Data`` without a name runs, the result names some dataset."""
    name = getattr(result, "dataset", None)
    if not isinstance(name, str) or not name:
        return False, f"ran, but result.dataset = {name!r}"
    return True, f"ran; result.dataset = {name!r}"


_BAD_MENTIONS: dict[str, list[Any]] = {
    "id-out-of-range": ["65"], "negative-id": ["-1"], "huge-id": [str(2**40)], "float-edge-index": ["edge_index", "float"],
    "edge-index-3-rows": ["edge_index"], "no-edges": ["edges"], "no-num-nodes": ["num_nodes"],
    "nan-features": ["finite"], "inf-features": ["finite"], "wrong-feature-rows": ["data.x", "63"],
    "no-labels": ["data.y"], "no-features": ["data.x"], "labels-minus-5": ["-5"], "labels-1e9": [str(10**9)],
    "one-class": ["class"], "float-labels": ["data.y"],
}
_EVERY_METHOD = ("id-out-of-range", "float-edge-index", "no-edges", "nan-features")
_SOME_METHODS = ("negative-id", "huge-id", "edge-index-3-rows", "no-num-nodes", "inf-features", "wrong-feature-rows")
_NODE_ONLY = ("no-labels", "no-features", "labels-minus-5", "labels-1e9", "one-class", "float-labels")

for _m in fx.METHOD_IDS:
    kinds = list(_EVERY_METHOD)
    if _m in ("cn", "dplp-ps", "privdpr", "dp-mlp", "random-perturb", "dpar-gm"):
        kinds += _SOME_METHODS
    if _m in fx.NODE_CLASSIFIERS:
        kinds += _NODE_ONLY
    for _kind in kinds:
        py(f"py-{_m}-{_kind}", P, _method_call(_m, lambda k=_kind: _bad(k)), _BAD_MENTIONS[_kind],
           what=f"METHODS[{_m!r}].run(config, Data with {_kind})")
    py(f"py-{_m}-negative-seed", P, _method_call(_m, _named, seed=-1), ["seed"],
       what=f"METHODS[{_m!r}].run(config, valid Data, seed=-1)")
    py(f"py-{_m}-seed-2-63", P, _method_call(_m, _named, seed=2**63), ["seed"],
       what=f"METHODS[{_m!r}].run(config, valid Data, seed=2**63)")
    py(f"py-{_m}-data-without-name", P, _method_call(_m, fx.labelled), expect=HANDLED, check=_ran,
       what=f"METHODS[{_m!r}].run(config, a valid hand-built Data without .name)")


def _directed():
    """The valid ring graph, each edge given in one direction only."""
    from torch_geometric.data import Data

    return Data(edge_index=_tensor(fx.ring_edges().tolist()), num_nodes=40, name="one-way ring")


def _duplicated():
    """The valid ring graph in both directions, with repeated edges and self-loops."""
    from torch_geometric.data import Data

    e = fx.ring_edges()
    both = np.concatenate([e, e[::-1], e[:, :5], np.array([[3, 9], [3, 9]])], axis=1)
    return Data(edge_index=_tensor(both.tolist()), num_nodes=40, name="ring with repeats")


def _normalised(phrase: str, recorded: bool) -> Callable[[Ctx, Any], tuple[bool, str]]:
    def check(ctx: Ctx, result: Any) -> tuple[bool, str]:
        notes = result.info.get("input_normalisations") or []
        if not ctx.logged(phrase):
            return False, f"ran, but nothing logged about {phrase!r} (info.input_normalisations = {notes!r})"
        if recorded and not any(phrase in n for n in notes):
            return False, f"logged, but result.info['input_normalisations'] = {notes!r} lacks {phrase!r}"
        return True, f"logged{' and recorded' if recorded else ''}: {notes or ctx.logs[:1]!r}"

    return check


def _run_method(method: str, data_fn: Callable[[], Any], **kw: Any) -> Callable[[Ctx], Any]:
    def fn(ctx: Ctx) -> Any:
        from graphpriv.experiments.runner import run_method

        rest = {k: v for k, v in kw.items() if k != "overrides"}
        overrides = {**fx.CHEAP.get(method, {}), **kw.get("overrides", {})}
        return run_method(method, data_fn(), overrides=overrides, **rest)

    return fn


py("py-cn-directed-edges-handled", P, _method_call("cn", _directed), expect=HANDLED,
   check=_normalised("symmetrised", recorded=False), what="METHODS['cn'].run on one-way edges")
py("py-run-method-cn-directed-edges-handled", P, _run_method("cn", _directed), expect=HANDLED,
   check=_normalised("symmetrised", recorded=True), what="run_method('cn', Data with one-way edges)")
py("py-run-method-cn-duplicates-and-self-loops-handled", P, _run_method("cn", _duplicated), expect=HANDLED,
   check=_normalised("duplicate", recorded=True), what="run_method('cn', Data with repeats and self-loops)")
py("py-run-method-random-perturb-directed-handled", P, _run_method("random-perturb", _directed), expect=HANDLED,
   check=_normalised("symmetrised", recorded=True), what="run_method('random-perturb', Data with one-way edges)")
py("py-run-method-epsilon-for-mlp", P, _run_method("mlp", _named, overrides={"epsilon": 2.0}), ["epsilon"])
py("py-run-method-delta-above-1-over-edges", P, _run_method("dplp-ps", _named, overrides={"delta": 0.01}),
   ["delta"])
py("py-run-method-delta-above-1-over-nodes", P, _run_method("dp-mlp", _named, overrides={"delta": 0.05}),
   ["delta"])
py("py-run-method-seed-bool", P, _run_method("cn", _named, seed=True), ["seed"])
py("py-run-method-seed-float", P, _run_method("cn", _named, seed=1.5), ["seed"])
py("py-run-method-seed-string", P, _run_method("cn", _named, seed="3"), ["seed"])
py("py-run-method-unknown-method", P, _run_method("nope", _named), ["nope"])
py("py-run-method-unknown-dataset", P, _run_method("cn", lambda: "nope"), ["nope"])
py("py-run-method-not-a-data", P, _run_method("cn", lambda: {"edge_index": [[0, 1], [1, 0]]}), ["dict"])
py("py-run-method-num-nodes-float", P, _run_method("cn", lambda: _with(_named(), num_nodes=60.0)),
   ["num_nodes"])
py("py-run-method-epsilon-above-100", P, _run_method("dplp-ps", _named, overrides={"epsilon": 1e9}),
   ["epsilon"])
py("py-run-method-store-corrupt", P, lambda ctx: _run_method("cn", _named, store=fx.corrupt_store(ctx))(ctx),
   ["corrupt.sqlite"])


def _with(data, **attrs):
    for k, v in attrs.items():
        data[k] = v
    return data


# ======================================================================================================
# small-graphs: too few edges for the split
# ======================================================================================================

S = "small-graphs"
_NEEDS = re.compile(r"(need|needs|at least|minimum)\D{0,40}\d+", re.IGNORECASE)


def _path_graph(nodes: int, labelled: bool = False):
    import torch
    from torch_geometric.data import Data

    e = np.stack([np.arange(nodes - 1), np.arange(1, nodes)])
    both = np.concatenate([e, e[::-1]], axis=1)
    d = Data(edge_index=_tensor(both.tolist()), num_nodes=nodes, name=f"path-{nodes}")
    if labelled:
        d.x = torch.randn(nodes, 4, generator=torch.Generator().manual_seed(0))
        d.y = _tensor([i % 2 for i in range(nodes)])
    return d


for _m in ("cn", "dplp-ps", "seal", "lapgraph-sgnn", "dplp-rank", "rank-laplace", "privdpr", "random-perturb",
           "edgerand", "ppgsl"):
    py(f"small-{_m}-3-node-path", S, _method_call(_m, lambda: _path_graph(3)), ["edges", _NEEDS])
    # privdpr: 6 nodes are fewer than its batch_nodes (16): naming that setting is the clear answer
    py(f"small-{_m}-5-edges", S, _method_call(_m, lambda: _path_graph(6)),
       ["batch_nodes"] if _m == "privdpr" else ["edges", _NEEDS])
cli("small-cli-cn-3-node-path", S, ["run", "cn", "-d", "{f}", "--no-store"], ["edges", _NEEDS],
    setup=_file("p3.txt", "0 1\n1 2\n"), after=before_work)
cli("small-cli-dplp-ps-5-edges", S, ["run", "dplp-ps", "-d", "{f}", "--no-store"], ["edges", _NEEDS],
    setup=_file("p6.txt", "0 1\n1 2\n2 3\n3 4\n4 5\n"), after=before_work)

# ======================================================================================================
# attack-release: releases that do not fit the dataset
# ======================================================================================================

A = "attack-release"
for _id, _text, _m in (
    ("num-nodes-header-mismatch", "# num_nodes 50\n0 1\n1 2\n", ["50", "332"]),
    ("ids-out-of-range", "0 1\n1 400\n", ["400"]),
    ("negative-ids", "0 1\n-1 4\n", ["out of range"]),
    ("garbage-lines", "hello world\nfoo bar\n", ["rel.txt"]),
    ("empty", "", ["no edges"]),
):
    cli(f"attack-{_id}", A, ["attack", "-g", "{rel}", "-d", REG], _m,
        setup=lambda ctx, t=_text: {"rel": fx.write(ctx, "rel.txt", t)})


def _npz_release(ctx: Ctx) -> dict[str, Any]:
    import scipy.sparse as sp

    path = ctx.path("rel.npz")
    sp.save_npz(path, sp.csr_matrix(np.eye(10, k=1) + np.eye(10, k=-1)))
    return {"rel": path}


cli("attack-npz-wrong-size", A, ["attack", "-g", "{rel}", "-d", REG], ["10", "332"], setup=_npz_release)
cli("attack-missing-release", A, ["attack", "-g", "nope.txt", "-d", REG], ["nope.txt"])
cli("attack-unsupported-suffix", A, ["attack", "-g", "{rel}", "-d", REG], ["unsupported"],
    setup=lambda ctx: {"rel": fx.write(ctx, "rel.png", "0 1\n")})

# ======================================================================================================
# store: bad stores before the run, failing stores after it (nothing may be lost)
# ======================================================================================================

ST = "store"
cli("store-corrupt-fails-before-work", ST, ["run", "cn", "-d", REG, "--store", "{s}"], ["corrupt.sqlite"],
    setup=lambda ctx: {"s": fx.corrupt_store(ctx)}, after=before_work)
cli("store-foreign-fails-before-work", ST, ["run", "cn", "-d", REG, "--store", "{s}"], ["foreign.sqlite"],
    setup=lambda ctx: {"s": fx.foreign_store(ctx)}, after=before_work)
cli("store-newer-schema-fails-before-work", ST, ["run", "cn", "-d", REG, "--store", "{s}"], ["schema"],
    setup=lambda ctx: {"s": fx.future_store(ctx)}, after=before_work)


def _store_untouched(ctx: Ctx, text: str, obs: Observation) -> Observation | None:
    path = ctx.path("s.sqlite")
    if path.exists() and fx.store_rows(path)["runs"]:
        return Observation(SILENT, f"a row was stored despite the error ({obs.detail})")
    return before_work(ctx, text, obs)


cli("store-seed-2-63", ST, ["run", "cn", "-d", REG, "--seed", SEED_2_63, "--store", "s.sqlite"], ["seed"],
    after=_store_untouched)


def _lossless(ctx: Ctx, result, text: str) -> Observation:
    """A run whose store failed after it: the table printed, --json and --out written, exit 1, one
    error line naming the store."""
    failed = cli_failure(result, text)
    if failed is not None:
        return failed
    missing = [name for name in ("r.json", "rel.txt") if not ctx.path(name).is_file()]
    if "guarantee:" not in text:
        missing.append("the printed result table")
    if missing:
        return Observation(LOST, f"exit {result.exit_code}; missing: {', '.join(missing)}; "
                                 f"{one_line(text.strip().splitlines()[-1:] if text.strip() else '', 200)}")
    try:
        stored = json.loads(ctx.path("r.json").read_text())
        assert stored["metrics"]
    except Exception as exc:  # noqa: BLE001
        return Observation(LOST, f"r.json is not the result: {type(exc).__name__}: {exc}")
    if "# num_nodes" not in ctx.path("rel.txt").read_text():
        return Observation(LOST, "rel.txt is not the published graph")
    if result.exit_code == 0:
        return Observation(SILENT, "exit 0 although the result was not stored")
    line = error_line(text)
    if result.exit_code != 1 or line is None or "store" not in line.lower():
        return Observation(UNCLEAR, f"exit {result.exit_code}, error line {line!r}")
    return Observation(HANDLED, f"exit 1, table, r.json and rel.txt written; {one_line(line, 160)}")


_PUBLISH_RUN = ["run", "random-perturb", "-d", "{g}", *fx.PUBLISH_CHEAP, "--json", "r.json", "--out", "rel.txt",
                "--store", "s.sqlite"]


def _store_append_fails(ctx: Ctx) -> Observation:
    from graphpriv.errors import StoreError
    from graphpriv.experiments.store import ResultStore

    def fail(self, result):
        raise StoreError(f"results store {self.path} is locked by another process (simulated)")

    g = fx.tiny_txt(ctx)
    with patched(ResultStore, "append", fail):
        result = invoke([_fmt(a, {"g": g}) for a in _PUBLISH_RUN])
    return _lossless(ctx, result, output_of(result))


def _store_locked_after_run(ctx: Ctx) -> Observation:
    from graphpriv.experiments import runner
    from graphpriv.experiments import store as store_module
    from graphpriv.experiments.store import ResultStore

    g = fx.tiny_txt(ctx)
    store_path = ctx.path("s.sqlite")
    holders: list[sqlite3.Connection] = []
    real_run = runner.run_prepared

    def run_then_lock(*args, **kwargs):
        out = real_run(*args, **kwargs)
        holder = sqlite3.connect(store_path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        holders.append(holder)
        return out

    class ShortWait(ResultStore):  # the lock is met in 0.2 s, not the default minute
        def __init__(self, path, **kwargs):
            super().__init__(path, **{**kwargs, "timeout": 0.2})

    try:
        with patched(store_module, "ResultStore", ShortWait), patched(runner, "run_prepared", run_then_lock):
            result = invoke([_fmt(a, {"g": g}) for a in _PUBLISH_RUN])
    finally:
        for holder in holders:
            holder.rollback()
            holder.close()
    if not holders:
        return Observation(TRACEBACK, f"the run did not reach the store: {one_line(output_of(result)[-300:])}")
    return _lossless(ctx, result, output_of(result))


custom("store-append-fails-after-run", ST, _store_append_fails, expect=HANDLED,
       what="run random-perturb --json --out --store, the store's append raising StoreError")
custom("store-locked-after-run", ST, _store_locked_after_run, expect=HANDLED,
       what="run random-perturb --json --out --store, the store locked by another connection after training")


def _run_method_store_fails(ctx: Ctx) -> Observation:
    from graphpriv.errors import GraphPrivError, StoreError
    from graphpriv.experiments.runner import run_method
    from graphpriv.experiments.store import ResultStore

    def fail(self, result):
        raise StoreError(f"results store {self.path} is locked by another process (simulated)")

    with patched(ResultStore, "append", fail):
        try:
            run_method("cn", _named(), store=ctx.path("s.sqlite"))
        except StoreError as exc:
            if getattr(exc, "result", None) is None:
                return Observation(LOST, f"StoreError without .result: {one_line(exc)}")
            return Observation(HANDLED, f"StoreError carries the result: {one_line(exc, 160)}")
        except GraphPrivError as exc:
            return Observation(LOST, f"{type(exc).__name__} without the result: {one_line(exc)}")
        except Exception as exc:  # noqa: BLE001
            return Observation(TRACEBACK, f"{type(exc).__name__}: {one_line(exc)}")
    return Observation(SILENT, "run_method returned although the result was not stored")


def _json_folder_removed(ctx: Ctx) -> Observation:
    """--json's folder disappears during the run: the table is printed, the result stored, and the
    failed write is one error line (exit 1)."""
    import shutil

    from graphpriv.experiments import runner

    g = fx.tiny_txt(ctx)
    real_run = runner.run_prepared

    def run_then_remove(*args, **kwargs):
        out = real_run(*args, **kwargs)
        shutil.rmtree(ctx.path("out"), ignore_errors=True)
        return out

    with patched(runner, "run_prepared", run_then_remove):
        result = invoke(["run", "cn", "-d", g, "--json", "out/r.json", "--store", "s.sqlite"])
    text = output_of(result)
    failed = cli_failure(result, text)
    if failed is not None:
        return failed
    stored = fx.store_rows(ctx.path("s.sqlite")).get("ok", 0) if ctx.path("s.sqlite").exists() else 0
    if "guarantee:" not in text and not stored:
        return Observation(LOST, f"exit {result.exit_code}: neither printed nor stored")
    line = error_line(text)
    if result.exit_code != 1 or line is None or "--json" not in line:
        return Observation(SILENT if result.exit_code == 0 else UNCLEAR,
                           f"exit {result.exit_code}, error line {line!r}, {stored} stored")
    if not stored:
        return Observation(UNCLEAR, f"the --json failure also kept the result out of the store: {line}")
    return Observation(HANDLED, f"exit 1, table printed, result stored; {one_line(line, 160)}")


custom("store-json-folder-removed-during-run", ST, _json_folder_removed, expect=HANDLED,
       what="run cn --json out/r.json --store s.sqlite, out/ removed while training")


custom("store-run-method-append-fails", ST, _run_method_store_fails, expect=HANDLED,
       what="run_method('cn', data, store=...), the store's append raising StoreError")


def _rerun_twice(ctx: Ctx) -> Observation:
    g = fx.tiny_txt(ctx)
    for attempt in (1, 2):
        result = invoke(["run", "cn", "-d", g, "--seed", "3", "--store", "s.sqlite"])
        text = output_of(result)
        failed = cli_failure(result, text)
        if failed is not None:
            return failed
        if result.exit_code != 0:
            return Observation(UNCLEAR, f"run {attempt}: exit {result.exit_code}: {one_line(text[-200:])}")
    rows = fx.store_rows(ctx.path("s.sqlite"))
    if rows["runs"] != 1:
        return Observation(SILENT, f"the same run stored {rows['runs']} times: {rows}")
    return Observation(HANDLED, f"one row after two identical runs: {rows}")


custom("store-rerun-counted-once", ST, _rerun_twice, expect=HANDLED,
       what="the same `run cn --seed 3 --store s.sqlite` twice: one row")

# ======================================================================================================
# report
# ======================================================================================================

R = "report"
cli("report-mistyped-store-path", R, ["report", "--store", "nope/s.sqlite", "--out", "rep"], ["nope/s.sqlite"],
    after=no_file("nope", "a store (or its folder) was created at the mistyped path"))
cli("report-mistyped-store-name", R, ["report", "--store", "s.sqlit", "--out", "rep"], ["s.sqlit"],
    setup=lambda ctx: {"s": fx.store_with(ctx, [fx.fake_result("usair", 1.0)])},
    after=no_file("s.sqlit", "a store was created at the mistyped path"))
cli("report-corrupt-store", R, ["report", "--store", "{s}", "--out", "rep"], ["corrupt.sqlite"],
    setup=lambda ctx: {"s": fx.corrupt_store(ctx)})
cli("report-foreign-store", R, ["report", "--store", "{s}", "--out", "rep"], ["foreign.sqlite"],
    setup=lambda ctx: {"s": fx.foreign_store(ctx)})
cli("report-newer-schema", R, ["report", "--store", "{s}", "--out", "rep"], ["schema"],
    setup=lambda ctx: {"s": fx.future_store(ctx)})
cli("report-store-is-a-folder", R, ["report", "--store", "adir", "--out", "rep"], ["adir"], setup=_setup_files)
cli("report-empty-store", R, ["report", "--store", "{s}", "--out", "rep"], ["no successful result"],
    setup=lambda ctx: {"s": fx.store_with(ctx, [])})


def _only_garbage(ctx: Ctx) -> dict[str, Any]:
    path = fx.store_with(ctx, [])
    ctx.env["row"] = fx.insert_garbage_row(path)
    return {"s": path}


cli("report-only-bad-rows", R, ["report", "--store", "{s}", "--out", "rep"], ["row"], setup=_only_garbage)


def _good_and_garbage(ctx: Ctx) -> dict[str, Any]:
    path = fx.store_with(ctx, [fx.fake_result("usair", e) for e in (1.0, 4.0)])
    ctx.env["row"] = fx.insert_garbage_row(path)
    return {"s": path}


def _names_skipped_row(ctx: Ctx, out: str) -> tuple[bool, str]:
    row = ctx.env["row"]
    if f"skipped row {row}" not in out:
        return False, f"exit 0 but the bad row {row} is not named: {one_line(out[-200:])}"
    return True, f"skipped row {row} named"


cli("report-bad-row-named-and-skipped", R, ["report", "--store", "{s}", "--out", "rep"], expect=HANDLED,
    setup=_good_and_garbage, check=_names_skipped_row)


def _g_txt_g_csv(ctx: Ctx) -> dict[str, Any]:
    rs = [fx.fake_result(d, e, auc=a) for d, a in (("g.txt", 0.7), ("g.csv", 0.8)) for e in (1.0, 4.0)]
    return {"s": fx.store_with(ctx, rs)}


def _distinct_plot_files(ctx: Ctx, out: str) -> tuple[bool, str]:
    folder = ctx.path("rep")
    on_disk = sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
    found = re.search(r"wrote (\d+) files", out)
    printed = int(found.group(1)) if found else None
    pngs = [n for n in on_disk if n.endswith(".png")]
    if printed != len(on_disk):
        return False, f"printed {printed} files, {len(on_disk)} on disk: {on_disk}"
    if len(pngs) < 2:
        return False, f"g.txt and g.csv share their plot files: {on_disk}"
    return True, f"{len(on_disk)} files on disk as printed, plots {pngs}"


cli("report-g-txt-and-g-csv-distinct-files", R, ["report", "--store", "{s}", "--out", "rep"], expect=HANDLED,
    setup=_g_txt_g_csv, check=_distinct_plot_files)
cli("report-out-under-a-file", R, ["report", "--store", "{s}", "--out", "afile/rep"], ["afile"],
    setup=lambda ctx: {**_setup_files(ctx), "s": fx.store_with(ctx, [fx.fake_result("usair", 1.0)])})

# ======================================================================================================
# sweep
# ======================================================================================================

W = "sweep"


def _sweep(text: str, *files: tuple[str, str]) -> Callable[[Ctx], dict[str, Any]]:
    def setup(ctx: Ctx) -> dict[str, Any]:
        for name, content in files:
            fx.write(ctx, name, content)
        return {"y": fx.write(ctx, "sweep.yaml", text)}

    return setup


_GOOD = "methods: [cn]\ndatasets: [tiny.txt]\nseeds: 1\nstore: s.sqlite\n"
_TINY = ("tiny.txt", fx.edge_text(fx.ring_edges()))
for _id, _text, _m in (
    ("bad-yaml", "methods: [cn\n", ["sweep.yaml"]),
    ("not-a-mapping", "- cn\n- usair\n", ["mapping"]),
    ("unknown-key", _GOOD + "foo: 1\n", ["foo"]),
    ("negative-epsilon", _GOOD + "epsilons: [-1]\n", ["epsilon"]),
    ("seeds-zero", _GOOD.replace("seeds: 1", "seeds: 0"), ["seeds"]),
    ("no-methods", "datasets: [tiny.txt]\n", ["methods"]),
    ("unknown-method", _GOOD.replace("[cn]", "[nope]"), ["nope"]),
    ("stray-method-overrides", _GOOD + "method_overrides: {dplp-ps: {k: 3}}\n", ["dplp-ps"]),
    ("invalid-override", _GOOD + "overrides: [{val_ratio: 2}]\n", ["val_ratio"]),
    ("seed-2-63", _GOOD.replace("seeds: 1", f"seeds: [{2**63}]"), ["seed"]),
    ("negative-seed", _GOOD.replace("seeds: 1", "seeds: [-1]"), ["seed"]),
):
    cli(f"sweep-{_id}", W, ["sweep", "{y}", "--workers", "1"], _m, setup=_sweep(_text, _TINY),
        markers=("error:", "invalid:"), scope="lines", after=no_file("s.sqlite", "the sweep opened its store although the file is invalid"))
cli("sweep-missing-file", W, ["sweep", "nope.yaml", "--workers", "1"], ["nope.yaml"])

_DRY: dict[str, Any] = {"codes": (1, 2), "markers": ("error:", "would fail", "invalid:", "store:"), "scope": "lines"}
cli("sweep-dry-run-missing-dataset", W, ["sweep", "{y}", "--dry-run"], ["nope.txt"],
    setup=_sweep(_GOOD.replace("[tiny.txt]", "[tiny.txt, nope.txt]"), _TINY), **_DRY)
cli("sweep-dry-run-negative-seed", W, ["sweep", "{y}", "--dry-run"], ["seed", "-1"],
    setup=_sweep(_GOOD.replace("seeds: 1", "seeds: [0, -1]"), _TINY), **_DRY)
cli("sweep-dry-run-bad-config", W, ["sweep", "{y}", "--dry-run"], ["val_ratio"],
    setup=_sweep(_GOOD + "overrides: [{}, {val_ratio: 2}]\n", _TINY), **_DRY)
cli("sweep-dry-run-unknown-method", W, ["sweep", "{y}", "--dry-run"], ["nope"],
    setup=_sweep(_GOOD.replace("[cn]", "[cn, nope]"), _TINY), **_DRY)
cli("sweep-dry-run-corrupt-store", W, ["sweep", "{y}", "--dry-run"], ["corrupt.sqlite"],
    setup=lambda ctx: {**_sweep(_GOOD.replace("s.sqlite", "corrupt.sqlite"), _TINY)(ctx),
                       "s": fx.corrupt_store(ctx)}, **_DRY)
cli("sweep-corrupt-store", W, ["sweep", "{y}", "--workers", "1"], ["corrupt.sqlite"],
    setup=lambda ctx: {**_sweep(_GOOD.replace("s.sqlite", "corrupt.sqlite"), _TINY)(ctx),
                       "s": fx.corrupt_store(ctx)})


@contextlib.contextmanager
def _in_process_cluster():
    """Dask's LocalCluster with thread workers in this process (no worker start-up imports; its
    INFO logging quiet): the sweep's submit / as_completed / commit path is unchanged."""
    import logging

    import dask.distributed as dd

    real = dd.LocalCluster

    def local(*args, **kwargs):
        kwargs["processes"] = False
        return real(*args, **kwargs)

    quiet = logging.getLogger("distributed")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        with patched(dd, "LocalCluster", local):
            yield
    finally:
        quiet.setLevel(level)


_FAILING = "methods: [cn]\ndatasets: [p3.txt]\nseeds: 1\nstore: s.sqlite\n"
_P3 = ("p3.txt", "0 1\n1 2\n")


def _sweep_all_fail(ctx: Ctx) -> Observation:
    _sweep(_FAILING, _P3)(ctx)
    with _in_process_cluster():
        result = invoke(["sweep", "sweep.yaml", "--workers", "1"])
    return judge_cli(result, mentions=["p3.txt", "too few edges"], codes=(1,), markers=("failed:",), scope="lines")


custom("sweep-every-run-fails", W, _sweep_all_fail, expect=CLEAR,
       what="a sweep whose one run raises (a 3-node path): exit 1, the cell and the reason named")


def _sweep_failure_once(ctx: Ctx) -> Observation:
    _sweep(_FAILING, _P3)(ctx)
    store = ctx.path("s.sqlite")
    steps = []
    with _in_process_cluster():
        for label, extra in (("first", []), ("resume", []), ("retry", ["--retry-failed"])):
            result = invoke(["sweep", "sweep.yaml", "--workers", "1", *extra])
            text = output_of(result)
            failed = cli_failure(result, text)
            if failed is not None:
                return Observation(failed.outcome, f"{label}: {failed.detail}")
            rows = fx.store_rows(store) if store.exists() else {}
            steps.append((label, result.exit_code, rows, text))
    (_, c1, r1, _), (_, c2, r2, t2), (_, c3, r3, _) = steps
    problems = []
    if c1 == 0 or c2 == 0 or c3 == 0:
        problems.append(f"exit codes {c1}/{c2}/{c3} (a failed run must exit non-zero)")
    if r1.get("error") != 1 or r1.get("runs") != 1:
        problems.append(f"after the first sweep {r1} (expected one error row)")
    if r2 != r1:
        problems.append(f"the resumed sweep changed the store: {r1} -> {r2} (a deterministic failure is run once)")
    if "failed before" not in t2 or not re.search(r"\b1 failed before", t2):
        problems.append(f"the resumed sweep does not say the run failed before: {one_line(t2[-200:])}")
    if r3.get("runs") != 1 or r3.get("superseded", 0) != r1.get("superseded", 0) + 1:
        problems.append(f"--retry-failed did not re-run it once: {r1} -> {r3}")
    if problems:
        return Observation(SILENT, "; ".join(problems))
    return Observation(HANDLED, f"recorded once {r1}, resume skipped it, --retry-failed re-ran it {r3}")


custom("sweep-failure-recorded-once-and-retried", W, _sweep_failure_once, expect=HANDLED,
       what="a failing run: recorded once, not re-run on resume, re-run with --retry-failed")


# -- summaries -----------------------------------------------------------------------------------------


def categories() -> dict[str, int]:
    out: dict[str, int] = {}
    for case in CASES:
        out[case.category] = out.get(case.category, 0) + 1
    return out


__all__ = ["CASES", "Case", "Observation", "categories"]
_ = (TRACEBACK, Path)  # re-exported names used by the script
