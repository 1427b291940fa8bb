"""User graph files: edge lists, scipy .npz, MATLAB .mat, saved PyG ``Data`` (.pt)."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
from torch_geometric.data import Data

from graphpriv.data.graph import RawGraph, clean_graph
from graphpriv.data.readers import read_edge_list, read_mat, read_scipy_npz
from graphpriv.errors import GraphFormatError

EDGE_LIST_SUFFIXES = (".txt", ".csv", ".tsv", ".edges", ".el")
SUPPORTED = EDGE_LIST_SUFFIXES + (".npz", ".mat", ".pt")


def _pyg_safe_globals() -> list:
    """The classes a ``torch.save(Data(...))`` file references (PyG 2.x): ``Data`` and its storage
    and attribute classes. Nothing else is ever unpickled."""
    from torch_geometric.data.data import DataEdgeAttr, DataTensorAttr
    from torch_geometric.data.storage import EdgeStorage, GlobalStorage, NodeStorage

    return [Data, DataEdgeAttr, DataTensorAttr, GlobalStorage, NodeStorage, EdgeStorage]


def read_pyg(path: Path) -> RawGraph:
    """A ``torch.save``-d PyG ``Data``, loaded without running code from the file.

    The file is read with ``torch.load(weights_only=True)`` and only PyG's ``Data`` classes (and
    the storage classes they need) allowed as globals, so a file that would build any other object
    (a pickled callable, a class of the user's) is refused instead of unpickled.

    Args:
        path: The ``.pt`` file.

    Returns:
        :class:`RawGraph` with the ``edge_index``, ``num_nodes``, ``x`` and ``y`` tensors as numpy.

    Raises:
        GraphFormatError: not a readable torch file, a file that needs any other global, not a
            ``Data``, no ``edge_index`` or one that is not ``[2, E]``.
    """
    try:
        with torch.serialization.safe_globals(_pyg_safe_globals()):
            obj = torch.load(path, weights_only=True, map_location="cpu")
    except pickle.UnpicklingError as exc:
        found = re.search(r"GLOBAL ([\w.]+)", str(exc))
        detail = re.search(r"WeightsUnpickler error:\s*(\S[^\n]*)", str(exc))
        what = f" (it needs {found.group(1)})" if found else f" ({detail.group(1).strip()})" if detail else ""
        raise GraphFormatError(
            f"{path}: not a plain saved PyG Data{what}; graphpriv never unpickles arbitrary objects: save "
            "only tensors, e.g. torch.save(Data(edge_index=..., x=..., y=..., num_nodes=N), path)"
        ) from None
    except Exception as exc:  # noqa: BLE001 - torch.load raises many types; re-raised as GraphFormatError
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise GraphFormatError(f"{path}: cannot load a saved PyG Data ({first}); save it with "
                               "torch.save(Data(...), path)") from None
    if not isinstance(obj, Data) or getattr(obj, "edge_index", None) is None:
        raise GraphFormatError(f"{path}: expected a torch_geometric.data.Data with edge_index, got "
                               f"{type(obj).__name__}")
    ei = obj.edge_index
    if not isinstance(ei, torch.Tensor) or ei.dim() != 2 or ei.size(0) != 2 or ei.is_floating_point() \
            or ei.is_complex() or ei.dtype == torch.bool:
        got = f"{ei.dtype} of shape {tuple(ei.shape)}" if isinstance(ei, torch.Tensor) else type(ei).__name__
        raise GraphFormatError(f"{path}: edge_index must be an integer tensor of shape [2, E], got {got}; save it "
                               "with dtype=torch.long")
    num_nodes = obj.get("num_nodes", None)
    if num_nodes is not None:
        if isinstance(num_nodes, torch.Tensor) and num_nodes.numel() == 1 and not num_nodes.is_floating_point():
            num_nodes = num_nodes.item()
        if isinstance(num_nodes, bool) or not isinstance(num_nodes, int) or num_nodes < 0:
            raise GraphFormatError(f"{path}: num_nodes must be a non-negative integer, got {num_nodes!r}; "
                                   "save Data(..., num_nodes=N)")
    x, y = getattr(obj, "x", None), getattr(obj, "y", None)
    x = x.detach().cpu().float().numpy() if isinstance(x, torch.Tensor) else None
    if isinstance(y, torch.Tensor):
        if y.is_floating_point() or y.is_complex() or y.dtype == torch.bool:
            raise GraphFormatError(f"{path}: y must hold integer class labels, got {y.dtype}; save y.long() "
                                   "(label -1 for an unlabelled node)")
        y = y.detach().cpu().numpy()
    else:
        y = None
    if num_nodes is None and x is not None and x.ndim:
        num_nodes = x.shape[0]
    return RawGraph(ei.detach().cpu().numpy().astype(np.int64), num_nodes=num_nodes, x=x, y=y)


def load_graph_file(path: str | Path) -> Data:
    """Read and clean a user graph file, choosing the reader by suffix.

    Args:
        path: ``.txt/.csv/.tsv`` edge list (``src dst [weight]``, comments with ``#`` or ``%``),
            ``.npz`` (``scipy.sparse.save_npz`` adjacency), ``.mat`` (square adjacency matrix, or a
            variable named ``net``) or ``.pt`` (saved PyG ``Data``).

    Returns:
        Cleaned ``Data`` (see :func:`~graphpriv.data.graph.clean_graph`), ``name`` = file name,
        ``normalisations`` (``list[str]``): each change made to the file's graph (header line
        skipped, edges with weight <= 0 dropped, self-loops and duplicates dropped, edges given in
        both directions merged or directed edges symmetrised), also logged as one warning line each
        on the ``graphpriv.data`` logger; empty when nothing changed.

    Raises:
        GraphFormatError: unknown suffix or malformed content. DatasetError: missing file, ids out
            of range, no edges.
    """
    path = Path(path)
    if path.is_dir():
        raise GraphFormatError(f"{path} is a folder, not a graph file; give the file inside it")
    if not path.is_file():
        raise GraphFormatError(f"graph file {path} does not exist")
    suffix = path.suffix.lower()
    if suffix in EDGE_LIST_SUFFIXES:
        raw = read_edge_list(path)
    elif suffix == ".npz":
        raw = read_scipy_npz(path)
    elif suffix == ".mat":
        raw = read_mat(path)
    elif suffix == ".pt":
        raw = read_pyg(path)
    else:
        raise GraphFormatError(f"{path}: unsupported file type {suffix!r}; use one of {', '.join(SUPPORTED)}")
    return clean_graph(raw, name=path.name, record=True)


def write_released_graph(path: str | Path, pairs: np.ndarray, num_nodes: int) -> Path:
    """Write a released graph over a dataset's node ids (ids kept as they are, not relabelled).

    Args:
        path: ``.txt/.csv/.tsv/.edges/.el`` (one ``u v`` per line, u < v, after a ``# num_nodes N``
            comment) or ``.npz`` (``scipy.sparse.save_npz`` of the symmetric ``[N, N]`` adjacency,
            which keeps isolated nodes).
        pairs: ``[2, E]`` edges. num_nodes: N.

    Returns:
        The path written.

    Raises:
        GraphFormatError: unsupported suffix.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    pairs = np.asarray(pairs, dtype=np.int64).reshape(2, -1)
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".npz":
        from graphpriv.data.graph import to_csr

        sp.save_npz(path, to_csr(pairs, num_nodes).astype(np.int8))
    elif suffix in EDGE_LIST_SUFFIXES:
        sep = "," if suffix == ".csv" else "\t" if suffix == ".tsv" else " "
        np.savetxt(path, pairs.T, fmt="%d", delimiter=sep, header=f"num_nodes {num_nodes}", comments="# ")
    else:
        raise GraphFormatError(f"{path}: cannot write {suffix!r}; use .npz or an edge list "
                               f"({', '.join(EDGE_LIST_SUFFIXES)})")
    return path


_NUM_NODES_HEADER = re.compile(r"^\s*#\s*num_nodes\s+(\d+)\s*$")


def released_num_nodes(path: Path) -> int | None:
    """N from the ``# num_nodes N`` comment :func:`write_released_graph` writes before the edges
    of an edge list; ``None`` when the leading comment lines have none."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.strip():
                continue
            if not line.lstrip().startswith(("#", "%", "//")):
                return None
            found = _NUM_NODES_HEADER.match(line)
            if found:
                return int(found.group(1))
    return None


def _other_graph(path: Path, released: int, num_nodes: int) -> GraphFormatError:
    return GraphFormatError(f"{path.name} was released from a graph with {released} nodes, the dataset has "
                            f"{num_nodes}: attack it with the dataset it was published from")


def read_released_graph(path: str | Path, num_nodes: int) -> np.ndarray:
    """Read a released graph whose ids are a dataset's node ids (not relabelled).

    Args:
        path: An edge list (``u v`` per line; comments ``#``/``%``; the ``# num_nodes N`` comment of
            :func:`write_released_graph` is checked against ``num_nodes`` when present) or a scipy
            ``.npz`` adjacency.
        num_nodes: N of the dataset the graph is attacked with.

    Returns:
        ``[2, E]`` int64 undirected edges (u < v, self-loops and duplicates dropped).

    Raises:
        GraphFormatError: missing file, unsupported suffix, malformed content, a release made from
            a graph of another size (its ``# num_nodes`` header, or an ``.npz`` whose shape is not
            ``[N, N]``), or ids outside ``[0, N)``.
    """
    path = Path(path)
    if path.is_dir():
        raise GraphFormatError(f"{path} is a folder, not a graph file; give the file inside it")
    if not path.is_file():
        raise GraphFormatError(f"graph file {path} does not exist")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        raw = read_scipy_npz(path)
        if raw.num_nodes != num_nodes:
            raise _other_graph(path, raw.num_nodes, num_nodes)
        ei = raw.edge_index
    elif suffix in EDGE_LIST_SUFFIXES:
        released = released_num_nodes(path)
        if released is not None and released != num_nodes:
            raise _other_graph(path, released, num_nodes)
        raw = read_edge_list(path)
        ei = raw.node_names[raw.edge_index]
    else:
        raise GraphFormatError(f"{path}: unsupported file type {suffix!r}; use .npz or an edge list")
    if ei.size and ei.max() >= num_nodes:
        raise GraphFormatError(f"{path}: node id {ei.max()} is out of range [0, {num_nodes}); a released "
                               "graph must use the dataset's node ids")
    ei = np.sort(ei, axis=0)
    return np.unique(ei[:, ei[0] != ei[1]], axis=1)
