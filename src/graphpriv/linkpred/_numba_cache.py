"""One numba cache folder per user, whatever the working directory.

The compiled kernels (``@njit(cache=True)`` in ``linkpred/`` and ``metrics/``) are cached by numba
in ``NUMBA_CACHE_DIR`` when it is set, else beside their source (``__pycache__``, which a read-only
install cannot write, and one more copy per working tree). Importing this module, which every
kernel module does before it decorates a kernel, sets the default once for the process (and the
processes it starts, e.g. Dask workers)::

    NUMBA_CACHE_DIR = $GRAPHPRIV_CACHE/numba                      when GRAPHPRIV_CACHE is set
                      ${XDG_CACHE_HOME:-~/.cache}/graphpriv/numba   otherwise

``$GRAPHPRIV_CACHE`` and ``~/.cache/graphpriv`` are the data cache's root
(:func:`graphpriv.data.fetch.cache_dir`; not imported here, the data package imports PyG). A
``NUMBA_CACHE_DIR`` the user set is kept. numba reads its environment when it is imported (PyG
imports it before any graphpriv kernel), so numba's configuration is reloaded here when numba is
already loaded: numba picks a kernel's cache folder when the kernel is decorated, after this ran.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["default_cache_dir", "ensure_cache_dir"]


def default_cache_dir() -> Path:
    """graphpriv's numba cache folder when the user names none (see the module docstring)."""
    root = os.environ.get("GRAPHPRIV_CACHE")
    if root:
        return Path(root) / "numba"
    user_cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(user_cache) / "graphpriv" / "numba"


def ensure_cache_dir() -> str:
    """Set ``NUMBA_CACHE_DIR`` to :func:`default_cache_dir` unless the user set it; return its value.

    numba's configuration is reloaded when numba is already imported, so that kernels decorated
    from now on cache there.
    """
    value = os.environ.setdefault("NUMBA_CACHE_DIR", str(default_cache_dir()))
    config = sys.modules.get("numba.core.config")
    if config is not None and getattr(config, "CACHE_DIR", value) != value:
        config.reload_config()
    return value


ensure_cache_dir()
