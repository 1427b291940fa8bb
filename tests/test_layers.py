"""The package's floors: every graphpriv import runs down a layer (or stays on its floor), and
privacy/ imports only data/ and errors. Function-local imports count: the walk reads every import
statement of every module, wherever it stands.

cli -> experiments, testing -> audit -> evaluation -> methods -> kernels (attacks, ranking,
synthesis, publishing; then linkpred, propagation, metrics) -> privacy -> data, nn -> errors.
"""

import ast
from pathlib import Path

import graphpriv

ROOT = Path(graphpriv.__file__).parent

#: Lower number = lower floor; a package may import packages of a lower or equal floor only.
LAYER = {"errors": 0, "progress": 0, "lazy": 0, "memo": 0, "data": 1, "nn": 1, "privacy": 2, "linkpred": 3, "propagation": 3, "metrics": 3,
         "publishing": 4, "ranking": 4, "synthesis": 4, "attacks": 4, "methods": 5, "evaluation": 6, "audit": 7,
         "experiments": 8, "testing": 8, "cli": 9, "startup": 9}

#: What privacy/ may import of graphpriv.
PRIVACY_MAY_IMPORT = {"privacy", "data", "errors"}


def _graphpriv_imports(path: Path):
    """``(line, imported graphpriv package)`` of every import statement in the file."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "graphpriv" and len(parts) > 1:
                yield node.lineno, parts[1]


def _modules():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        package = rel.parts[0].removesuffix(".py")
        if package != "__init__":
            yield path, rel, package


def test_every_package_has_a_floor():
    packages = {package for _, _, package in _modules()}
    assert packages <= set(LAYER), f"packages without a floor: {sorted(packages - set(LAYER))}"


def test_no_import_runs_up_a_floor():
    upward = [f"{rel}:{line} {package} -> {target}" for path, rel, package in _modules()
              for line, target in _graphpriv_imports(path)
              if target in LAYER and LAYER[target] > LAYER[package]]
    assert not upward, "imports that run up a floor:\n" + "\n".join(upward)


def test_privacy_imports_only_data_and_errors():
    wrong = [f"{rel}:{line} privacy -> {target}" for path, rel, package in _modules() if package == "privacy"
             for line, target in _graphpriv_imports(path) if target not in PRIVACY_MAY_IMPORT]
    assert not wrong, "privacy/ imports beyond data/ and errors:\n" + "\n".join(wrong)


def test_the_walk_sees_function_local_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from graphpriv.experiments import runner\n")
    assert list(_graphpriv_imports(module)) == [(2, "experiments")]
