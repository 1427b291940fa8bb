"""Fast start of the command line: what each front door imports, the registry's import paths, the
deferred ``torch._dynamo``, the console entry's exit, numba's cache folder.

Each check runs in a fresh interpreter (``sys.modules`` of this one holds everything the suite
imported). No timing is asserted here (a shared machine makes it flaky): benchmarks/bench_startup.py
measures it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from graphpriv.experiments import registry
from tests.conftest import needs_data

#: Libraries that take 0.1-2 s each to import; a front door loads one only when its work needs it.
HEAVY = ("torch", "torch_geometric", "dp_accounting", "opacus", "numba", "sklearn", "matplotlib", "dask", "scipy")


def _python(code: str, *, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    """Run ``code`` in a fresh interpreter; its stdout (it must exit with 0)."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, cwd=cwd, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _loaded_after(code: str) -> set[str]:
    """The :data:`HEAVY` libraries (and graphpriv modules) imported once ``code`` ran."""
    out = _python(textwrap.dedent(code) + textwrap.dedent("""
        import json, sys
        print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in HEAVY_ or m.startswith("graphpriv."))))
        """).replace("HEAVY_", repr(HEAVY)))
    return set(json.loads(out.splitlines()[-1]))


def test_the_command_line_and_the_method_list_import_no_heavy_library():
    loaded = _loaded_after("""
        import graphpriv.cli
        from graphpriv.experiments.registry import (DPAR_APPR, ESTIMATORS, METHODS, PRESETS, estimator_args,
                                                    method_spec, preset_settings)
        assert [spec.description for spec in METHODS.values()] and sorted(ESTIMATORS) == sorted(METHODS)
        assert method_spec("cn").id == "cn" and estimator_args("dpar-gm") == {"appr": "gm"}
        assert estimator_args("rank-laplace") == {"transform": "none", "noise": "laplace"}
        assert preset_settings("dplp-ps", "paper", "usair") == {"k": 2} and PRESETS and DPAR_APPR
    """)
    assert not {m.split(".")[0] for m in loaded} & set(HEAVY), sorted(loaded)
    # no method module and no protocol: only the light table of variants (methods/variants.py)
    assert not [m for m in loaded if m.startswith(("graphpriv.methods.", "graphpriv.evaluation."))
                and m != "graphpriv.methods.variants"], sorted(loaded)


def test_a_config_imports_its_method_module_only():
    """A config class lives beside its estimator, so validating one imports that method's module (and
    torch, PyG): never another method's, nor Opacus, matplotlib or Dask."""
    loaded = _loaded_after("""
        from graphpriv.experiments.registry import make_config
        assert make_config("dplp-ps", {}).extractor.value == "path"
        assert make_config("cn", {}).val_ratio > 0
    """)
    assert not {m.split(".")[0] for m in loaded} & {"opacus", "matplotlib", "dask"}, sorted(loaded)
    assert not {"graphpriv.methods.dpar", "graphpriv.methods.ppgsl", "graphpriv.methods.privdpr",
                "graphpriv.evaluation.node"} & loaded


@needs_data
def test_run_cn_loads_neither_opacus_nor_plotting_and_defers_dynamo():
    loaded = _loaded_after("""
        from typer.testing import CliRunner
        from graphpriv.cli import app
        from graphpriv.startup import defer_torch_dynamo
        defer_torch_dynamo()  # as the console entry does
        out = CliRunner().invoke(app, ["run", "cn", "-d", "usair", "--no-store"])
        assert out.exit_code == 0, out.output
        import sys
        assert "torch._dynamo" not in sys.modules  # PyG was imported without it
    """)
    assert not {m.split(".")[0] for m in loaded} & {"opacus", "matplotlib", "dask"}, sorted(loaded)
    assert not {"graphpriv.methods.dpar", "graphpriv.evaluation.node", "graphpriv.attacks"} & loaded


@needs_data
def test_run_cn_loads_no_accountant_and_no_subgraph_kernels():
    loaded = _loaded_after("""
        from typer.testing import CliRunner
        from graphpriv.cli import app
        assert CliRunner().invoke(app, ["run", "cn", "-d", "usair", "--no-store"]).exit_code == 0
    """)
    assert "dp_accounting" not in loaded and "graphpriv.linkpred.paths" not in loaded, sorted(loaded)


@pytest.mark.parametrize("method", sorted(registry.METHODS))
def test_every_import_path_of_the_registry_resolves(method):
    from graphpriv.methods.base import MethodConfig
    from graphpriv.methods.estimator import Estimator

    spec = registry.METHODS[method]
    assert issubclass(spec.config_cls, MethodConfig) and callable(spec.run)
    assert issubclass(registry.ESTIMATORS[method], Estimator) and registry.ESTIMATORS[method] is spec.estimator
    assert set(spec.defaults) <= set(spec.config_cls.model_fields)
    assert type(registry.make_config(method, {})) is spec.config_cls


def test_the_variant_tables_are_one_table():
    from graphpriv.evaluation.node import DPAR_APPR
    from graphpriv.evaluation.ranking import RANK_VARIANTS
    from graphpriv.methods import variants

    assert registry.DPAR_APPR is DPAR_APPR is variants.DPAR_APPR
    assert registry._RANK_VARIANTS is RANK_VARIANTS is variants.RANK_VARIANTS
    assert registry.make_estimator("dpar-gm").appr == "gm"
    assert registry.estimator_args("rank-laplace") == {"transform": "none", "noise": "laplace"}


def test_the_limits_are_the_accountants():
    from graphpriv.privacy import accountant, limits

    assert accountant.MAX_EPSILON is limits.MAX_EPSILON == registry.MAX_EPSILON == 100.0
    assert accountant.check_delta is limits.check_delta and accountant.check_epsilon is limits.check_epsilon


def test_the_privacy_package_exports_on_first_use():
    loaded = _loaded_after("""
        import graphpriv.privacy.report
        import graphpriv.privacy as p
        assert "Ledger" in dir(p)
    """)
    assert "dp_accounting" not in loaded and "graphpriv.privacy.accountant" not in loaded
    out = _python("""
        from graphpriv.privacy import Ledger, PrivacyReport, calibrate_noise_multiplier
        from graphpriv.privacy.accountant import Ledger as L
        assert Ledger is L and callable(calibrate_noise_multiplier) and PrivacyReport
        import graphpriv.privacy as p
        try:
            p.nothing
        except AttributeError as exc:
            print(exc)
    """)
    assert "has no attribute 'nothing'" in out


def _toy_packages(root: Path) -> None:
    """``heavy_parent._heavy`` (a package that counts its runs and its submodule's; its parent loads it
    on attribute access, as torch loads ``_dynamo``), and two importers standing for PyG."""
    (root / "heavy_parent" / "_heavy").mkdir(parents=True)
    (root / "heavy_parent" / "__init__.py").write_text(
        "import importlib\n\ndef __getattr__(name):\n    if name == '_heavy':\n"
        "        return importlib.import_module('.' + name, __name__)\n    raise AttributeError(name)\n")
    (root / "heavy_parent" / "_heavy" / "__init__.py").write_text(
        "import builtins\nbuiltins.RUNS = [*getattr(builtins, 'RUNS', []), 'heavy']\n"
        "from heavy_parent._heavy import child\nVALUE = 42\n")
    (root / "heavy_parent" / "_heavy" / "child.py").write_text(
        "import builtins\nbuiltins.RUNS = [*getattr(builtins, 'RUNS', []), 'child']\n")
    (root / "binds_only.py").write_text(
        "import heavy_parent._heavy\nimport heavy_parent\n\ndef use():\n    return heavy_parent._heavy.VALUE\n")
    (root / "imports_submodule.py").write_text("import heavy_parent._heavy\nimport heavy_parent._heavy.child\n")


_TOY_HOOK = """
    import builtins, sys
    from graphpriv.startup import _DeferDynamo

    class Hook(_DeferDynamo):
        TRIGGER, DEFERRED = TRIGGER_, "heavy_parent._heavy"

    sys.meta_path.insert(0, Hook())
"""


def test_the_deferred_module_loads_on_first_use_and_once(tmp_path):
    _toy_packages(tmp_path)
    out = _python(textwrap.dedent(_TOY_HOOK).replace("TRIGGER_", "'binds_only'") + textwrap.dedent("""
    import binds_only
    assert getattr(builtins, "RUNS", []) == [] and "heavy_parent._heavy" not in sys.modules
    assert not any(isinstance(f, Hook) for f in sys.meta_path)  # one use
    assert binds_only.use() == 42 and builtins.RUNS == ["heavy", "child"]
    assert type(sys.modules["heavy_parent._heavy"]).__name__ == "module"
    print("ok")
    """), cwd=tmp_path)
    assert out.strip() == "ok"
    out = _python(textwrap.dedent(_TOY_HOOK).replace("TRIGGER_", "'imports_submodule'") + textwrap.dedent("""
    import imports_submodule
    assert builtins.RUNS == ["heavy", "child"], builtins.RUNS  # a submodule asked for: each module runs once
    assert sys.modules["heavy_parent._heavy.child"] is sys.modules["heavy_parent._heavy"].child
    print("ok")
    """), cwd=tmp_path)
    assert out.strip() == "ok"


def test_pyg_without_dynamo_still_sees_compiled_models():
    out = _python("""
        import sys
        from graphpriv.startup import defer_torch_dynamo
        defer_torch_dynamo()
        import torch, torch_geometric
        assert "torch._dynamo" not in sys.modules
        lin = torch.nn.Linear(2, 2)
        assert torch_geometric.is_torch_instance(lin, torch.nn.Linear)
        assert type(sys.modules["torch._dynamo"]).__name__ == "module" and torch._dynamo is sys.modules["torch._dynamo"]
        assert torch_geometric.is_torch_instance(torch.compile(lin), torch.nn.Linear)
        print(torch_geometric.__loader__ is torch_geometric.__spec__.loader)
    """)
    assert out.strip() == "True"


@needs_data
def test_the_console_entry_exits_with_the_code_and_keeps_the_store(tmp_path):
    store = tmp_path / "s.sqlite"
    done = subprocess.run([sys.executable, "-m", "graphpriv.cli", "run", "cn", "-d", "usair", "--store", str(store)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "test auc" in done.stdout and "guarantee" in done.stdout  # flushed before the fast exit
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT method, status FROM runs").fetchall() == [("cn", "ok")]
    bad = subprocess.run([sys.executable, "-m", "graphpriv.cli", "run", "nosuch", "-d", "usair", "--no-store"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "unknown method" in bad.stdout
    usage = subprocess.run([sys.executable, "-m", "graphpriv.cli", "run"], capture_output=True, text=True, check=False)
    assert usage.returncode == 2 and "Missing argument" in usage.stderr


def _cache_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "GRAPHPRIV_CACHE", "XDG_CACHE_HOME")}
    return {**env, "XDG_CACHE_HOME": str(tmp_path / "xdg"), **extra}


_CACHE_DIR = """
    import torch_geometric  # imports numba before any graphpriv kernel, as a run does
    import numpy as np
    import numba, os
    from graphpriv.linkpred.buffers import grow_to
    assert grow_to(np.zeros(1, np.int64), 3).size == 3
    print(os.environ["NUMBA_CACHE_DIR"], numba.core.config.CACHE_DIR, sep="\\n")
"""


def test_numba_caches_in_the_user_cache_folder(tmp_path):
    default = tmp_path / "xdg" / "graphpriv" / "numba"
    out = _python(_CACHE_DIR, env=_cache_env(tmp_path)).split()
    assert out == [str(default)] * 2
    assert list(default.rglob("buffers.grow_to-*.nbi")), "the kernel was not cached there"
    assert _python(_CACHE_DIR, env=_cache_env(tmp_path, GRAPHPRIV_CACHE=str(tmp_path / "gp"))).split() == \
        [str(tmp_path / "gp" / "numba")] * 2
    mine = str(tmp_path / "mine")
    assert _python(_CACHE_DIR, env=_cache_env(tmp_path, NUMBA_CACHE_DIR=mine)).split() == [mine] * 2


def test_lazy_exports_load_a_name_once_and_refuse_unknown_ones():
    import graphpriv.data.graph as graph_module
    from graphpriv.lazy import lazy_exports

    namespace = {"__all__": ["x"]}
    getattr_, dir_ = lazy_exports("pkg", {"pair_codes": "graphpriv.data.graph", "codes": "graphpriv.data.graph:pair_codes"},
                                  namespace)
    assert getattr_("pair_codes") is graph_module.pair_codes and namespace["pair_codes"] is graph_module.pair_codes
    assert getattr_("codes") is graph_module.pair_codes  # "module:attribute": another name there
    assert dir_() == ["codes", "pair_codes", "x"]
    with pytest.raises(AttributeError, match="module 'pkg' has no attribute 'nope'"):
        getattr_("nope")
    import graphpriv
    import graphpriv.privacy

    assert "DPARClassifier" in dir(graphpriv) and "Ledger" in dir(graphpriv.privacy)
    with pytest.raises(AttributeError, match="module 'graphpriv.privacy' has no attribute 'nope'"):
        graphpriv.privacy.nope  # noqa: B018
