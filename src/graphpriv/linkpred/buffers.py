"""Growable int64 buffers for compiled (numba) kernels."""

from __future__ import annotations

import numpy as np
from numba import njit

import graphpriv.linkpred._numba_cache  # noqa: F401 (NUMBA_CACHE_DIR set before numba compiles)


@njit(cache=True)
def grow_to(buf, size):  # pragma: no cover - compiled
    """Return ``buf`` or a copy with capacity >= size (doubling)."""
    if size <= buf.size:
        return buf
    cap = max(size, 2 * buf.size)
    out = np.empty(cap, buf.dtype)
    out[: buf.size] = buf
    return out


@njit(cache=True)
def append(buf, length, value):  # pragma: no cover - compiled
    """Append ``value`` at ``length``; returns ``(buf, length + 1)``."""
    buf = grow_to(buf, length + 1)
    buf[length] = value
    return buf, length + 1
