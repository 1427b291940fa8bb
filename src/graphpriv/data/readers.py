"""Readers for the raw file formats of the registry datasets and of user graph files.

Each reader returns a :class:`~graphpriv.data.graph.RawGraph`; cleaning happens in
:func:`~graphpriv.data.graph.clean_graph`. Malformed input raises
:class:`~graphpriv.errors.GraphFormatError` naming the file, the line and the fix.
"""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import numpy as np
import scipy.io as sio
import scipy.sparse as sp

from graphpriv.data.graph import RawGraph
from graphpriv.errors import GraphFormatError

_COMMENT = re.compile(r"^\s*(#|%|//)")
_SPLIT = re.compile(r"[,\t ;]+")
_INT64_MAX = 2**63 - 1


def read_edge_list(path: Path) -> RawGraph:
    """Edge list: one ``src dst [weight]`` per line; comma, tab, space or semicolon separated.

    Each line is one undirected edge. Lines starting with ``#``, ``%`` or ``//`` are comments; one
    non-numeric line before the first edge is skipped as a header. Ids may be any integers in
    ``[0, 2**63 - 1]``; they are relabelled to ``0..N-1`` in sorted order with the originals kept
    in ``node_names``. Graphs are binary: an edge with a weight ``<= 0`` is dropped (its nodes are
    kept, isolated if no other edge holds them), any positive weight is an edge.

    Returns:
        :class:`RawGraph` with ``one_per_edge=True`` and ``notes`` naming the header line skipped
        and the number of edges dropped for their weight.

    Raises:
        GraphFormatError: a line without two ids, a non-integer or out-of-range id, a weight that
            is not a finite number, or no edges (also when every weight is ``<= 0``).
    """
    src, dst, dropped = [], [], []
    notes: list[str] = []
    data_lines = non_positive = 0
    with open(path, encoding="utf-8", errors="replace") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip() or _COMMENT.match(line):
                continue
            fields = [f for f in _SPLIT.split(line.strip()) if f]
            if len(fields) not in (2, 3):
                raise GraphFormatError(
                    f"{path}:{lineno}: expected 'src dst' or 'src dst weight', got {line.strip()!r}"
                )
            try:
                a, b = int(fields[0]), int(fields[1])
                weight = float(fields[2]) if len(fields) == 3 else 1.0
            except ValueError:
                if not data_lines:
                    data_lines += 1
                    text = line.strip() if len(line.strip()) <= 80 else line.strip()[:77] + "..."
                    notes.append(f"line {lineno} skipped as a header: {text!r}")
                    continue
                raise GraphFormatError(
                    f"{path}:{lineno}: node ids must be integers (and the weight a number), got "
                    f"{line.strip()!r}"
                ) from None
            data_lines += 1
            if a < 0 or b < 0 or a > _INT64_MAX or b > _INT64_MAX:
                raise GraphFormatError(f"{path}:{lineno}: node id out of range (ids must lie in "
                                       f"[0, {_INT64_MAX}]): {line.strip()!r}")
            if not np.isfinite(weight):
                raise GraphFormatError(f"{path}:{lineno}: the weight must be a finite number, got "
                                       f"{line.strip()!r}; fix or drop the line")
            if weight <= 0:  # no edge, but its nodes are nodes of the graph (isolated if nothing else)
                non_positive += 1
                dropped.extend((a, b))
                continue
            src.append(a)
            dst.append(b)
    if non_positive:
        notes.append(f"{non_positive} edge{'' if non_positive == 1 else 's'} with weight <= 0 dropped")
    if not src:
        extra = f" ({non_positive} lines have weight <= 0, which is no edge)" if non_positive else ""
        raise GraphFormatError(f"{path}: no edges found; the graph has no edges{extra}")
    ids = np.asarray([src, dst], dtype=np.int64)
    names = np.unique(np.concatenate([ids.ravel(), np.asarray(dropped, dtype=np.int64)]))
    return RawGraph(np.searchsorted(names, ids), num_nodes=len(names), node_names=names, notes=tuple(notes),
                    one_per_edge=True)


def read_dense_index_edges(path: Path) -> RawGraph:
    """Edge list whose ids are already ``0..N-1`` (feather / PrivDPR files); N = max id + 1."""
    raw = read_edge_list(path)
    return raw._replace(edge_index=raw.node_names[raw.edge_index], num_nodes=int(raw.node_names.max()) + 1,
                        node_names=None)


def adjacency_to_raw(adj: sp.spmatrix | np.ndarray, *, source: str) -> RawGraph:
    """Square adjacency matrix (sparse or dense) -> RawGraph (nonzeros are edges)."""
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1]:
        raise GraphFormatError(f"{source}: adjacency must be square, got shape {adj.shape}")
    coo = sp.coo_matrix(adj)
    keep = coo.data != 0
    return RawGraph(np.stack([coo.row[keep], coo.col[keep]]).astype(np.int64), num_nodes=adj.shape[0])


def read_mat_variables(path: Path, names: tuple[str, ...]) -> dict:
    """The variables ``names`` of a MATLAB .mat file.

    Raises:
        GraphFormatError: unreadable file, or a variable missing (the message names it).
    """
    try:
        mat = sio.loadmat(path)
    except Exception as exc:  # noqa: BLE001 - scipy raises several types for corrupt files
        raise GraphFormatError(f"{path}: not a readable MATLAB .mat file ({exc})") from None
    missing = [n for n in names if n not in mat]
    if missing:
        present = ", ".join(k for k in mat if not k.startswith("__"))
        raise GraphFormatError(f"{path}: no variable {', '.join(missing)} (it has {present})")
    return {n: mat[n] for n in names}


def read_mat(path: Path, key: str | None = None) -> RawGraph:
    """MATLAB .mat with an adjacency matrix (``net`` in SEAL's files, else the only square matrix).

    Raises:
        GraphFormatError: unreadable file, or no unique square matrix when ``key`` is not given.
    """
    try:
        mat = sio.loadmat(path)
    except Exception as exc:  # noqa: BLE001 - scipy raises several types for corrupt files
        raise GraphFormatError(f"{path}: not a readable MATLAB .mat file ({exc})") from None
    if key is None:
        square = [k for k, v in mat.items() if not k.startswith("__") and getattr(v, "ndim", 0) == 2
                  and v.shape[0] == v.shape[1] and v.shape[0] > 1]
        if "net" in square:
            square = ["net"]
        if len(square) != 1:
            raise GraphFormatError(
                f"{path}: expected one square adjacency matrix (or a variable named 'net'), found "
                f"{square or 'none'}"
            )
        key = square[0]
    return adjacency_to_raw(mat[key], source=str(path))


def read_scipy_npz(path: Path) -> RawGraph:
    """``scipy.sparse.save_npz`` file holding the adjacency matrix."""
    try:  # our own handle: numpy leaves its own open when a file with the zip magic is not a zip
        with open(path, "rb") as handle:
            adj = sp.load_npz(handle)
    except Exception as exc:  # noqa: BLE001 - numpy/scipy raise several types; re-raised as GraphFormatError
        raise GraphFormatError(
            f"{path}: not a scipy sparse .npz (save it with scipy.sparse.save_npz) ({exc})"
        ) from None
    return adjacency_to_raw(adj, source=str(path))


def read_prefixed_csr(path: Path, prefix: str) -> sp.csr_matrix:
    """CSR matrix stored as ``{prefix}data``, ``indices``, ``indptr``, ``shape`` arrays in an npz."""
    with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as z:  # closed even when np.load raises
        return sp.csr_matrix(
            (z[f"{prefix}data"], z[f"{prefix}indices"], z[f"{prefix}indptr"]),
            shape=tuple(z[f"{prefix}shape"]),
        )


def read_npz_labels(path: Path, key: str = "labels") -> np.ndarray:
    """One array from an npz file."""
    with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as z:  # closed even when np.load raises
        return np.asarray(z[key])


def read_pickle_latin1(path: Path) -> object:
    """Planetoid's pickled objects (Python 2 pickles: latin1)."""
    with open(path, "rb") as handle:
        return pickle.load(handle, encoding="latin1")


def read_index_file(path: Path) -> np.ndarray:
    """One integer per line."""
    return np.loadtxt(path, dtype=np.int64).reshape(-1)


def read_target_csv(path: Path) -> np.ndarray:
    """feather ``id,target`` file -> labels ordered by id."""
    table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64).reshape(-1, 2)
    labels = np.full(table[:, 0].max() + 1, -1, dtype=np.int64)
    labels[table[:, 0]] = table[:, 1]
    return labels
