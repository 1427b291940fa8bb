"""User graph files: edge lists, scipy .npz, MATLAB .mat, saved PyG ``Data`` (.pt)."""

from __future__ import annotations

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


def read_pyg(path: Path) -> RawGraph:
    """A ``torch.save``-d PyG ``Data`` (only load files you trust: this unpickles)."""
    try:
        obj = torch.load(path, weights_only=False)
    except Exception as exc:  # noqa: BLE001 - torch.load raises many types; re-raised as GraphFormatError
        raise GraphFormatError(f"{path}: cannot load a saved PyG Data ({exc})") from None
    if not isinstance(obj, Data) or getattr(obj, "edge_index", None) is None:
        raise GraphFormatError(f"{path}: expected a torch_geometric.data.Data with edge_index, got "
                               f"{type(obj).__name__}")
    ei = obj.edge_index
    if ei.dim() != 2 or ei.size(0) != 2:
        raise GraphFormatError(f"{path}: edge_index must have shape [2, E], got {tuple(ei.shape)}")
    x = obj.x.numpy() if getattr(obj, "x", None) is not None else None
    y = obj.y.numpy() if getattr(obj, "y", None) is not None else None
    return RawGraph(ei.numpy().astype(np.int64), num_nodes=obj.num_nodes, x=x, y=y)


def load_graph_file(path: str | Path) -> Data:
    """Read and clean a user graph file, choosing the reader by suffix.

    Args:
        path: ``.txt/.csv/.tsv`` edge list (``src dst [weight]``, comments with ``#`` or ``%``),
            ``.npz`` (``scipy.sparse.save_npz`` adjacency), ``.mat`` (square adjacency matrix, or a
            variable named ``net``) or ``.pt`` (saved PyG ``Data``).

    Returns:
        Cleaned ``Data`` (see :func:`~graphpriv.data.graph.clean_graph`), ``name`` = file name.

    Raises:
        GraphFormatError: unknown suffix or malformed content. DatasetError: missing file, ids out
            of range, no edges.
    """
    path = Path(path)
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
    return clean_graph(raw, name=path.name)


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


def read_released_graph(path: str | Path, num_nodes: int) -> np.ndarray:
    """Read a released graph whose ids are a dataset's node ids (not relabelled).

    Args:
        path: An edge list (``u v`` per line; comments ``#``/``%``) or a scipy ``.npz`` adjacency.
        num_nodes: N of the dataset the graph was released from.

    Returns:
        ``[2, E]`` int64 undirected edges (u < v, self-loops and duplicates dropped).

    Raises:
        GraphFormatError: missing file, unsupported suffix, malformed content, an ``.npz`` whose
            shape is not ``[N, N]``, or ids outside ``[0, N)``.
    """
    path = Path(path)
    if not path.is_file():
        raise GraphFormatError(f"graph file {path} does not exist")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        raw = read_scipy_npz(path)
        if raw.num_nodes != num_nodes:
            raise GraphFormatError(f"{path}: adjacency is {raw.num_nodes} x {raw.num_nodes}, the dataset "
                                   f"has {num_nodes} nodes")
        ei = raw.edge_index
    elif suffix in EDGE_LIST_SUFFIXES:
        raw = read_edge_list(path)
        ei = raw.node_names[raw.edge_index]
    else:
        raise GraphFormatError(f"{path}: unsupported file type {suffix!r}; use .npz or an edge list")
    if ei.size and ei.max() >= num_nodes:
        raise GraphFormatError(f"{path}: node id {ei.max()} is out of range [0, {num_nodes}); a released "
                               "graph must use the dataset's node ids")
    ei = np.sort(ei, axis=0)
    return np.unique(ei[:, ei[0] != ei[1]], axis=1)
