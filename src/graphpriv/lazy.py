"""Names loaded on first use: :func:`resolve` (an import path to its object) and :func:`lazy_exports`
(a package's PEP 562 ``__getattr__`` / ``__dir__``).

What keeps ``import graphpriv`` and the command line light: a package lists its public names with
the module that defines each, and a name's module (PyTorch Geometric, dp-accounting, a method) is
imported only when the name is first read. On the lowest floor: it imports nothing of graphpriv.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports", "resolve"]


@functools.cache
def resolve(path: str) -> Any:
    """The object an import path names: ``"package.module:attribute"``, importing the module on
    first use (cached).

    Raises:
        ImportError, AttributeError: a stale path (a bug of the caller's table, not of user input).
    """
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def lazy_exports(package: str, exports: Mapping[str, str],
                 namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``(__getattr__, __dir__)`` for names loaded on first access (PEP 562).

    Args:
        package: the package's name, for the error message (``"graphpriv.privacy"``).
        exports: public name -> the module that defines it under that name, or
            ``"module:attribute"`` when the attribute is named otherwise there.
        namespace: the package's ``globals()``: a name, once loaded, is kept there, so the next
            access is an ordinary attribute lookup.

    Returns:
        ``(__getattr__, __dir__)`` to assign in the package's ``__init__``.

    Raises:
        (from ``__getattr__``) AttributeError: a name the package does not export.
    """

    def __getattr__(name: str) -> Any:
        target = exports.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = target.partition(":")
        value = resolve(f"{module}:{attribute or name}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace.get("__all__", ()), *exports})

    return __getattr__, __dir__
