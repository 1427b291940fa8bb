"""Keep freed memory in the process while a training loop runs (glibc only).

Full-batch GNN training on a large graph allocates and frees tensors of 50-200 MB every epoch
(gathered pair embeddings, propagated features, their gradients). glibc serves each of those with
a fresh ``mmap`` and returns it on ``free``, so every epoch page-faults and zeroes the memory
again: on PPGSL's 100k-node Erdős–Rényi benchmark that took over half of each surrogate epoch's
time (1.19 s against 0.49 s per epoch, ``benchmarks/bench_ppgsl_scale.py``). Inside
:func:`retained_heap`, large blocks come from the heap and freed memory stays there for the next
epoch; peak memory is unchanged (the same tensors are live at the peak).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["retained_heap"]

_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD, _M_MMAP_MAX = -1, -2, -3, -4
# glibc's documented defaults (mallopt(3)); setting them disables the dynamic mmap threshold.
_DEFAULTS = ((_M_MMAP_MAX, 65536), (_M_TRIM_THRESHOLD, 128 * 1024), (_M_TOP_PAD, 128 * 1024))
_RETAIN = ((_M_MMAP_MAX, 0), (_M_TRIM_THRESHOLD, 2**31 - 1), (_M_TOP_PAD, 256 << 20))


def _mallopt():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.mallopt
    except (OSError, AttributeError):  # musl and other C libraries have no mallopt
        return None


@contextmanager
def retained_heap() -> Iterator[bool]:
    """Context manager: while open, glibc's malloc serves large blocks from the heap and does not
    return freed memory to the OS; on exit glibc's default settings are restored and the free
    top of the heap is trimmed.

    Yields:
        True if the settings were applied (Linux with glibc), False where they cannot be (no
        effect then).
    """
    mallopt = _mallopt()
    applied = mallopt is not None and all(mallopt(p, v) == 1 for p, v in _RETAIN)
    try:
        yield applied
    finally:
        if mallopt is not None:
            for p, v in _DEFAULTS:
                mallopt(p, v)
            try:
                ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
            except (OSError, AttributeError):
                pass
