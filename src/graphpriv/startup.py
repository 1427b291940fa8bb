"""Quicker start and end of the ``graphpriv`` console script (:func:`graphpriv.cli.main` only).

:func:`defer_torch_dynamo` lets the first ``import torch_geometric`` skip importing ``torch._dynamo``;
:func:`exit_now` ends the process without the interpreter's teardown of torch. Neither is used by the
library or by :data:`graphpriv.cli.app` as tests call it; ``tests/experiments/test_startup.py`` checks
both and ``benchmarks/bench_startup.py`` measures them.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.abc
import importlib.util
import os
import sys
import threading
import types
from typing import Any

__all__ = ["defer_torch_dynamo", "exit_now"]


class _Placeholder(types.ModuleType):
    """Stands in ``sys.modules`` for a module not imported yet: the first attribute asked of it that it
    lacks imports the real module (which takes its place in ``sys.modules``) and answers from it."""

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), name)


class _Loaded(importlib.abc.Loader):
    """Gives the import system a module that is already loaded, instead of running it a second time."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module, self.spec = module, module.__spec__

    def create_module(self, spec: Any) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self.spec  # the import system set it to the one-off spec of this loader


class _DeferDynamo(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The one-use import hook of :func:`defer_torch_dynamo`: it loads :attr:`TRIGGER` through its real
    loader with :attr:`DEFERRED` a :class:`_Placeholder` for the length of that import."""

    TRIGGER, DEFERRED = "torch_geometric", "torch._dynamo"

    def __init__(self) -> None:
        self.loader: Any = None
        self.placeholder: types.ModuleType | None = None
        self.active = False

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name == self.TRIGGER and self.loader is None:
            spec = next((s for f in sys.meta_path if f is not self and hasattr(f, "find_spec")
                         for s in [f.find_spec(name, path, target)] if s is not None), None)
            if spec is None or spec.loader is None:
                self.uninstall()
                return None
            self.loader, spec.loader = spec.loader, self
            return spec
        if self.active and name.startswith(self.DEFERRED + "."):  # a submodule, asked for while TRIGGER
            self.restore()  # imports: the real package first, its submodules from it (each run once)
            importlib.import_module(self.DEFERRED)
            module = sys.modules.get(name)
            return None if module is None else importlib.util.spec_from_loader(name, _Loaded(module))
        return None

    def create_module(self, spec: Any) -> types.ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__loader__ = module.__spec__.loader = self.loader
        try:
            importlib.import_module(self.DEFERRED.rpartition(".")[0])  # its package (torch), imported as usual
            if self.DEFERRED not in sys.modules:
                self.placeholder = _Placeholder(self.DEFERRED)
                self.placeholder.__spec__ = importlib.util.find_spec(self.DEFERRED)
                self.placeholder.__file__ = self.placeholder.__spec__.origin
                sys.modules[self.DEFERRED] = self.placeholder
            self.active = True
            self.loader.exec_module(module)
        finally:
            self.active = False
            self.restore()
            self.uninstall()

    def restore(self) -> None:
        """Take the placeholder out of ``sys.modules`` and its package (the next use imports the real module)."""
        placeholder, self.placeholder = self.placeholder, None
        if placeholder is None:
            return
        if sys.modules.get(self.DEFERRED) is placeholder:
            del sys.modules[self.DEFERRED]
        package, _, attribute = self.DEFERRED.rpartition(".")
        parent = sys.modules.get(package)
        if parent is not None and vars(parent).get(attribute) is placeholder:
            delattr(parent, attribute)

    def uninstall(self) -> None:
        """Leave ``sys.meta_path``."""
        if self in sys.meta_path:
            sys.meta_path.remove(self)


def defer_torch_dynamo() -> None:
    """Let the first ``import torch_geometric`` skip importing ``torch._dynamo`` (0.5-1 s of a 2 s run).

    Why: PyG imports ``torch._dynamo`` when it is imported, for one use: :func:`torch_geometric.is_torch_instance`
    asks whether a model is ``torch.compile``'s wrapper (``torch._dynamo.OptimizedModule``); graphpriv
    compiles nothing. What: a one-use import hook (``sys.meta_path``) waits for the first ``import
    torch_geometric`` and, for the length of that import only, puts a placeholder in ``sys.modules``
    under ``torch._dynamo``, so that PyG's ``import torch._dynamo`` binds without running it. When PyG
    is imported the placeholder and the hook are gone; the first later use of ``torch._dynamo``
    (``torch.compile``, ``is_torch_instance``, a ``torch._dynamo`` attribute) imports it as usual.
    Behaviour is unchanged, only the import moves later (or never happens): an attribute asked of the
    placeholder imports the real module and answers from it, and a ``torch._dynamo`` submodule imported
    during PyG's import comes from the real package, loaded first. Nothing happens when PyG or
    ``torch._dynamo`` is already imported.
    """
    if _DeferDynamo.TRIGGER not in sys.modules and _DeferDynamo.DEFERRED not in sys.modules:
        sys.meta_path.insert(0, _DeferDynamo())


def exit_now(code: Any) -> None:
    """End the process with ``code`` (a ``SystemExit`` code) without the interpreter's teardown.

    Why: tearing down torch's modules takes ~0.35 s after the work is done. What is kept: the exit
    handlers run (``atexit._run_exitfuncs``, the call CPython makes at exit: logging, temporary files,
    multiprocessing, Dask), stdout and stderr are flushed, and the results store commits and closes
    each write itself (nothing of it is pending). What is skipped: the modules' teardown and the
    finalizers of objects still alive, none of which writes anything of graphpriv's. When a thread
    other than the main one (not a daemon) is still alive, the normal exit runs (it waits for it).
    """
    if code is None or isinstance(code, int):
        status = int(code or 0)
    else:  # as sys.exit prints a non-integer code and exits with 1
        print(code, file=sys.stderr)
        status = 1
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(status)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (graphpriv ... | head) or stream
            pass
    os._exit(status)
