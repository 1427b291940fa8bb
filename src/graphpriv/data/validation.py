"""Checks of a user's hand-built PyG ``Data`` and seed, run at the top of every method's ``run``.

A ``Data`` as :func:`graphpriv.data.load` returns it passes through unchanged. Anything a method
could not use raises a one-line :class:`~graphpriv.errors.DatasetError` that names the attribute
and the fix. Directed, duplicate and self-loop edges are not errors: they are normalised the way
:func:`~graphpriv.data.graph.clean_graph` does, and each normalisation is logged and listed in the
returned ``data.normalisations``.
"""

from __future__ import annotations

import copy
import numbers

import numpy as np
import torch
from torch_geometric.data import Data

from graphpriv.data.graph import MAX_NODES, edge_normalisations, record_normalisations, simple_edge_index
from graphpriv.errors import ConfigError, DatasetError

__all__ = ["IF_PRESENT", "MAX_SEED", "check_data", "check_node_ids", "check_node_pairs", "check_seed"]

#: Value of ``needs_features`` / ``needs_labels``: the method reads the attribute when it is there.
IF_PRESENT = "if present"
#: Largest seed (numpy's and torch's seeds are 32-bit).
MAX_SEED = 2**32 - 1


def _is_integer_tensor(t: torch.Tensor) -> bool:
    return not (t.is_floating_point() or t.is_complex() or t.dtype == torch.bool)


def _num_nodes(data: Data, where: str) -> int:
    if "num_nodes" in data:
        n = data["num_nodes"]
        if isinstance(n, torch.Tensor) and n.numel() == 1 and _is_integer_tensor(n):
            n = n.item()
        if isinstance(n, bool) or not isinstance(n, numbers.Integral):
            raise DatasetError(f"{where}data.num_nodes must be an integer, got {n!r}; build Data(..., num_nodes=N)")
        n = int(n)
    elif isinstance(getattr(data, "x", None), torch.Tensor) and data.x.dim() == 2:
        n = int(data.x.size(0))
    else:
        raise DatasetError(f"{where}data.num_nodes is missing; build Data(..., num_nodes=N) (isolated nodes "
                           "cannot be inferred from edge_index)")
    if not 1 <= n <= MAX_NODES:
        raise DatasetError(f"{where}data.num_nodes must be in [1, {MAX_NODES}], got {n}; set the real node count")
    return n


def _edge_index(data: Data, n: int, where: str) -> np.ndarray:
    ei = getattr(data, "edge_index", None)
    fix = "build it as torch.tensor([sources, targets], dtype=torch.long)"
    if ei is None:
        raise DatasetError(f"{where}data.edge_index is missing; {fix}")
    if not isinstance(ei, torch.Tensor):
        raise DatasetError(f"{where}data.edge_index must be a torch tensor, got {type(ei).__name__}; {fix}")
    if not _is_integer_tensor(ei) or ei.dim() != 2 or ei.size(0) != 2:
        raise DatasetError(f"{where}data.edge_index must be an integer tensor of shape [2, E], got {ei.dtype} "
                           f"{list(ei.shape)}; {fix}")
    if ei.size(1) == 0:
        raise DatasetError(f"{where}data.edge_index has no edges; graphpriv needs at least one edge")
    lo, hi = int(ei.min()), int(ei.max())
    if lo < 0 or hi >= n:
        bad = lo if lo < 0 else hi
        raise DatasetError(f"{where}data.edge_index has node id {bad} outside [0, {n}) (data.num_nodes = {n}); "
                           "number the nodes 0..N-1 or set num_nodes to the real node count")
    return ei.detach().cpu().numpy().astype(np.int64, copy=False)


def _check_features(data: Data, n: int, needed, where: str, who: str) -> None:
    x = getattr(data, "x", None)
    if x is None:
        if needed is True:
            raise DatasetError(f"{where}data.x is missing: {who} needs node features [N, F]; set data.x")
        return
    if not isinstance(x, torch.Tensor) or x.dim() != 2 or x.size(0) != n or x.is_complex():
        got = f"{x.dtype} {list(x.shape)}" if isinstance(x, torch.Tensor) else type(x).__name__
        raise DatasetError(f"{where}data.x must be a real tensor of shape [N, F] = [{n}, F], got {got}; "
                           "set data.x to one feature row per node")
    if x.is_floating_point():
        bad = ~torch.isfinite(x).all(dim=1)
        count = int(bad.sum())
        if count:
            raise DatasetError(
                f"{where}data.x is not finite (NaN or inf) at {count} node{'' if count == 1 else 's'}, the first "
                f"node {int(torch.nonzero(bad)[0, 0])}; impute or clip them (e.g. torch.nan_to_num) or drop those nodes")


def _check_labels(data: Data, n: int, needed, where: str, who: str) -> None:
    y = getattr(data, "y", None)
    if y is None:
        if needed is True:
            raise DatasetError(f"{where}data.y is missing: {who} needs node labels [N] (-1 for an unlabelled "
                               "node); set data.y")
        return
    drop = "" if needed is True else " (or delete data.y)"
    if not isinstance(y, torch.Tensor) or not _is_integer_tensor(y) or y.dim() != 1 or y.size(0) != n:
        got = f"{y.dtype} {list(y.shape)}" if isinstance(y, torch.Tensor) else type(y).__name__
        raise DatasetError(f"{where}data.y must be an integer tensor of shape [N] = [{n}] (class ids, -1 for "
                           f"unlabelled), got {got}; convert it with y.long(){drop}")
    if int(y.min()) < -1 or int(y.max()) >= n:
        bad = int(y.min()) if int(y.min()) < -1 else int(y.max())
        raise DatasetError(f"{where}data.y has label {bad}; labels must be class ids 0..C-1 (C <= N) or -1 for "
                           f"an unlabelled node; renumber them, e.g. torch.unique(y, return_inverse=True){drop}")
    labelled = y[y >= 0]
    if labelled.numel() == 0:
        raise DatasetError(f"{where}data.y has no labelled node (all -1): {who} needs labels; label some "
                           f"nodes{drop}")
    classes = torch.unique(labelled)
    if classes.numel() < 2:
        raise DatasetError(f"{where}data.y has one class ({int(classes[0])}) among its labelled nodes: {who} "
                           f"needs at least two; label nodes of another class{drop}")


def _has_no_edges(data: Data) -> bool:
    """No ``edge_index``, or an integer one of shape ``[2, 0]``."""
    ei = getattr(data, "edge_index", None)
    return ei is None or (isinstance(ei, torch.Tensor) and _is_integer_tensor(ei) and ei.dim() == 2
                          and ei.size(0) == 2 and ei.size(1) == 0)


def check_data(data: Data, *, needs_features: bool | str = False, needs_labels: bool | str = False,
               name: str | None = None, method: str | None = None, allow_no_edges: bool = False) -> Data:
    """Check a user's PyG ``Data`` as graphpriv's methods expect it; normalise its edges.

    Args:
        data: ``Data`` with ``edge_index [2, E]`` (integer ids in ``[0, N)``, any direction),
            ``num_nodes`` N (or ``x`` to take N from), optional ``x [N, F]`` and ``y [N]``.
        needs_features, needs_labels: ``True``: the attribute must be there and usable;
            :data:`IF_PRESENT` (``"if present"``): it is checked when it is there (a method that
            uses it when given); ``False``: labels are not looked at, and features present are
            still checked (shape and finiteness: every method entry rejects non-finite features).
            Usable labels are integer class ids ``0..C-1`` (``-1``: unlabelled) with at least one
            labelled node and two classes.
        name: What to call the graph in messages and logs (default ``data.name``, else none).
        method: The method id, for messages (default "this method").
        allow_no_edges: accept a graph without edges (no ``edge_index``, or one of shape
            ``[2, 0]``): a node classifier can score isolated nodes. Such a ``data`` is returned
            as it is once its features and labels pass.

    Returns:
        ``data`` itself when it has a ``name`` and its edges are already undirected and simple (both directions of each
        edge, once each, no self-loop) and int64 (a ``data.normalisations = []`` attribute is added
        when missing). Otherwise a shallow copy whose ``edge_index`` is made undirected and simple
        as :func:`~graphpriv.data.graph.clean_graph` does (``[2, 2|E|]`` int64, sorted), with each
        normalisation appended to ``normalisations`` (``list[str]``, e.g. ``"2 self-loops
        dropped"``) and logged as one warning line on the ``graphpriv.data`` logger. Other
        attributes are shared with ``data``; a ``data`` without a ``name`` gets a copy named
        ``"graph"``.

    Raises:
        DatasetError: not a ``Data``; missing or malformed ``edge_index`` (not a ``[2, E]`` integer
            tensor), ids outside ``[0, N)``, no edges (also after dropping self-loops); missing or
            invalid ``num_nodes``; features that are not ``[N, F]`` or not finite; labels that are
            not an integer ``[N]`` vector, below -1 or not below N, without a labelled node or with
            fewer than two classes (when needed or present and used).
    """
    label = name if name is not None else getattr(data, "name", None) if isinstance(data, Data) else None
    where = f"{label}: " if label else ""
    who = method or "this method"
    if not isinstance(data, Data):
        raise DatasetError(f"{where}expected a torch_geometric.data.Data, got {type(data).__name__}; build "
                           "Data(edge_index=..., num_nodes=N) or use graphpriv.data.load")
    n = _num_nodes(data, where)
    edgeless = allow_no_edges and _has_no_edges(data)
    ei = None if edgeless else _edge_index(data, n, where)
    if needs_features or getattr(data, "x", None) is not None:  # present features are checked by every method
        _check_features(data, n, needs_features or IF_PRESENT, where, who)
    if needs_labels:
        _check_labels(data, n, needs_labels, where, who)
    if edgeless:
        return data
    notes = edge_normalisations(ei)
    named = isinstance(getattr(data, "name", None), str)
    if not notes and data.edge_index.dtype == torch.int64 and named:
        if getattr(data, "normalisations", None) is None:
            data.normalisations = []
        return data
    out = copy.copy(data)
    if not named:
        out.name = "graph"
    if not notes and data.edge_index.dtype == torch.int64:
        out.normalisations = list(getattr(data, "normalisations", None) or [])
        return out
    out.edge_index = simple_edge_index(ei, n, name=label or "data",
                                       where="number the nodes 0..N-1 or set num_nodes to the real node count")
    return record_normalisations(out, notes, name=label or "data")


def check_seed(seed: object) -> int:
    """A run's seed as an ``int`` in ``[0, 2**32 - 1]`` (numpy and torch seeds are 32-bit).

    Args:
        seed: an ``int`` or numpy integer (not a bool).

    Returns:
        ``int(seed)``.

    Raises:
        ConfigError: not an integer, negative, or above ``2**32 - 1``.
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= int(seed) <= MAX_SEED:
        raise ConfigError(f"seed must be an integer in [0, {MAX_SEED}] (got {seed!r}); pass a smaller "
                          "non-negative seed")
    return int(seed)


def check_node_pairs(pairs: object, num_nodes: int, *, name: str = "pairs", distinct: bool = False) -> np.ndarray:
    """Node pairs given to a fitted estimator (``predict_proba``, ``score``, validation pairs).

    Args:
        pairs: ``[2, P]`` integer node ids, a torch tensor or a numpy array (or nested lists);
            column j is the pair ``(pairs[0, j], pairs[1, j])``. num_nodes: N of the fitted graph.
        name: the argument's name, for messages. distinct: refuse a pair of a node with itself
            (a link joins two different nodes).

    Returns:
        ``[2, P]`` int64 numpy array (it may share memory with ``pairs``).

    Raises:
        DatasetError: not an integer array, a shape other than ``[2, P]``, an id outside
            ``[0, num_nodes)``, or (``distinct``) a pair (u, u); one line naming ``name``.
    """
    arr = _integer_ids(pairs, name=name, what="a [2, P] integer array of node ids", ndim=2, hint="")
    if arr.ndim != 2 or arr.shape[0] != 2:
        raise DatasetError(f"{name} must have shape [2, P], got {list(arr.shape)}; stack the pairs as "
                           "[sources, targets]")
    _in_range(arr, num_nodes, name=name, graph="the fitted graph")
    if distinct and arr.size and (same := np.flatnonzero(arr[0] == arr[1])).size:
        raise DatasetError(f"{name} pairs a node with itself ({int(arr[0, same[0]])}, {int(arr[0, same[0]])}) at column "
                           f"{int(same[0])}; a link joins two different nodes")
    return arr


def check_node_ids(nodes: object, num_nodes: int, *, name: str = "nodes") -> np.ndarray:
    """Node ids given to a fitted estimator (``predict``'s ``nodes``, ``recommend``'s queries).

    Args:
        nodes: ``[K]`` integer ids (tensor, numpy array or list), or ``None`` for every node.
        num_nodes: N. name: the argument's name, for messages.

    Returns:
        ``[K]`` int64 ids in ``[0, num_nodes)`` (``None``: every node, in order).

    Raises:
        DatasetError: not a 1-D integer array (a tensor, a numpy array or a list), or an id outside
            ``[0, num_nodes)``.
    """
    if nodes is None:
        return np.arange(num_nodes)
    arr = _integer_ids(nodes, name=name, what="a 1-D array of integer node ids", ndim=1,
                       hint=" (for a boolean mask: mask.nonzero().flatten())")
    if arr.ndim != 1:
        raise DatasetError(f"{name} must be a 1-D array of node ids, got shape {list(arr.shape)}")
    _in_range(arr, num_nodes, name=name, graph="the graph")
    return arr


def _integer_ids(value: object, *, name: str, what: str, ndim: int, hint: str) -> np.ndarray:
    """``value`` (tensor, array or nested lists) as an int64 array; an empty array of ``ndim``
    dimensions may have any dtype.

    Raises:
        DatasetError: ragged or not array-like, or not of an integer dtype (bools included).
    """
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        raise DatasetError(f"{name} must be {what}, got {type(value).__name__}") from None
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer) and not (arr.size == 0 and arr.ndim == ndim):
        raise DatasetError(f"{name} must hold integer node ids, got dtype {arr.dtype}; pass a LongTensor or an "
                           f"int64 array{hint}")
    return arr.astype(np.int64, copy=False)


def _in_range(arr: np.ndarray, num_nodes: int, *, name: str, graph: str) -> None:
    """Raise a one-line DatasetError naming ``name`` when an id of ``arr`` is outside ``[0, num_nodes)``."""
    if arr.size and (arr.min() < 0 or arr.max() >= num_nodes):
        bad = int(arr.min()) if arr.min() < 0 else int(arr.max())
        raise DatasetError(f"{name} has node id {bad} outside [0, {num_nodes}) ({graph} has {num_nodes} nodes); "
                           "use the graph's node ids")
