"""User graph files: edge lists, scipy .npz, MATLAB .mat, saved PyG ``Data`` (.pt)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
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
    except Exception as exc:
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
