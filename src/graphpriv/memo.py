"""A small process-local memo keyed on array contents: the results a run would compute again for the
same inputs (a GAE trained twice on one graph, the input graph's ceiling and queries asked for by
every generator and epsilon of a leaderboard).

Used by :func:`graphpriv.nn.gae.gae_embeddings`, DPLP's evaluation subgraphs
(:func:`graphpriv.linkpred.evaluation_sets.evaluation_subgraphs`), the synthesis protocol
(:mod:`graphpriv.evaluation.synthesis`) and the publishing protocol's input-graph baseline
(:func:`graphpriv.evaluation.publishing.input_graph_metrics`). Imports nothing heavy (no torch: tensors are read through
``detach().cpu().numpy()``).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

__all__ = ["Memo", "array_digest"]


def array_digest(*arrays: Any) -> str:
    """SHA-256 of the arrays' dtypes, shapes and bytes, in order.

    Args:
        *arrays: numpy arrays (or anything ``np.ascontiguousarray`` takes), torch tensors (read
            through ``detach().cpu().numpy()``), or None (counted as such).

    Returns:
        64 hex digits; equal arrays (same dtype, shape and values) give the same digest.
    """
    digest = hashlib.sha256()
    for part in arrays:
        if part is None:
            digest.update(b"none")
            continue
        if hasattr(part, "detach"):  # a torch tensor
            part = part.detach().cpu().numpy()
        array = np.ascontiguousarray(part)
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


class Memo:
    """A least-recently-used memo of at most ``size`` values (and, with ``weigh``, at most
    ``max_weight`` of their total weight), guarded by a lock (Dask workers may run tasks on threads).

    Args:
        size: the most values kept. weigh: ``value -> weight`` (e.g. bytes), or None (unweighed).
        max_weight: the most total weight kept (with ``weigh``): the least recently used values
            are dropped beyond it, and a value heavier on its own is not kept.

    Attributes:
        size, weigh, max_weight: as given. items: key -> value, least recently used first.
    """

    def __init__(self, size: int, *, weigh: Callable[[Any], float] | None = None,
                 max_weight: float = float("inf")) -> None:
        self.size: int = size
        self.weigh = weigh
        self.max_weight = max_weight
        self.items: OrderedDict[Hashable, Any] = OrderedDict()
        self.lock = threading.Lock()

    def _weight(self) -> float:
        return sum(self.weigh(value) for value in self.items.values()) if self.weigh else 0.0

    def get(self, key: Hashable, compute: Callable[[], Any], *, keep: Callable[[Any], bool] = lambda value: True,
            free_first: bool = False) -> Any:
        """The value kept for ``key``, or ``compute()``, kept when ``keep(value)`` and it weighs at
        most ``max_weight`` (dropping the least recently used beyond ``size`` or ``max_weight``).
        The value itself is returned: a caller that may change it returns a copy to its own
        callers. ``free_first``: on a miss, drop the least recently used value before computing
        when the memo is full, so that a memo of large values never holds ``size`` of them while
        computing one more."""
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
            if free_first:
                while self.items and len(self.items) >= self.size:
                    self.items.popitem(last=False)
        value = compute()
        if keep(value) and (self.weigh is None or self.weigh(value) <= self.max_weight):
            with self.lock:
                self.items[key] = value
                while len(self.items) > self.size or self._weight() > self.max_weight:
                    self.items.popitem(last=False)
        return value
