"""Per-source builders: located raw files -> RawGraph (before cleaning)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from graphpriv.data.graph import RawGraph
from graphpriv.data.readers import (
    adjacency_to_raw,
    read_dense_index_edges,
    read_index_file,
    read_mat,
    read_npz_labels,
    read_pickle_latin1,
    read_prefixed_csr,
    read_target_csv,
)

Paths = dict[str, Path]


def seal_mat(paths: Paths) -> RawGraph:
    """SEAL's MATLAB files: sparse adjacency in ``net``."""
    (path,) = paths.values()
    return read_mat(path, key="net")


def planetoid(paths: Paths, prefix: str) -> RawGraph:
    """Planetoid raw layout (Yang et al., ICML 2016), as PyG's ``Planetoid`` reads it.

    Test rows are reordered by ``test.index``; citeseer's missing test ids become isolated nodes
    with zero features and label -1 (PyG gives label 0 there; -1 marks them as unlabelled).
    Features are read only when ``x``, ``tx`` and ``allx`` are all given (pubmed's ``allx`` is not
    mirrored: structure and labels only).
    """
    get = {name.split(f"ind.{prefix}.")[1]: p for name, p in paths.items()}
    graph = read_pickle_latin1(get["graph"])
    ally, ty = (np.asarray(read_pickle_latin1(get[k])) for k in ("ally", "ty"))
    test_index = read_index_file(get["test.index"])
    num_nodes = max(len(graph), int(test_index.max()) + 1)
    y = np.full(num_nodes, -1, dtype=np.int64)
    y[: ally.shape[0]] = ally.argmax(1)
    y[test_index] = ty.argmax(1)
    x = None
    if {"x", "tx", "allx"} <= get.keys():
        allx, tx = (sp.csr_matrix(read_pickle_latin1(get[k])) for k in ("allx", "tx"))
        x = np.zeros((num_nodes, allx.shape[1]), dtype=np.float32)
        x[: allx.shape[0]] = allx.toarray()
        x[test_index] = tx.toarray()
    src = [s for s, nbrs in graph.items() for _ in nbrs]
    dst = [d for nbrs in graph.values() for d in nbrs]
    return RawGraph(np.asarray([src, dst], dtype=np.int64), num_nodes=num_nodes, x=x, y=y)


def nettack_npz(paths: Paths) -> RawGraph:
    """Nettack's npz (``adj_*`` CSR arrays and ``labels``): polblogs."""
    (path,) = paths.values()
    raw = adjacency_to_raw(read_prefixed_csr(path, "adj_"), source=str(path))
    return raw._replace(y=read_npz_labels(path))


def dpar_npz(paths: Paths) -> RawGraph:
    """DPAR/G2G npz (``adj_matrix.*``, ``attr_matrix.*``, ``labels``): cora_ml."""
    (path,) = paths.values()
    raw = adjacency_to_raw(read_prefixed_csr(path, "adj_matrix."), source=str(path))
    x = read_prefixed_csr(path, "attr_matrix.").toarray().astype(np.float32)
    return raw._replace(x=x, y=read_npz_labels(path))


def feather(paths: Paths) -> RawGraph:
    """FEATHER csv pair (``*_edges.csv`` with ``node_1,node_2``; ``*_target.csv`` with ``id,target``)."""
    edges = next(p for n, p in paths.items() if n.endswith("_edges.csv"))
    target = next(p for n, p in paths.items() if n.endswith("_target.csv"))
    y = read_target_csv(target)
    raw = read_dense_index_edges(edges)
    return RawGraph(raw.edge_index, num_nodes=max(raw.num_nodes, len(y)), y=y)


def feather_identity(paths: Paths) -> RawGraph:
    """:func:`feather` with one-hot identity features ``x = I_N`` (float32): a function of the node
    index alone, so the features carry nothing private (the mirror's FEATHER graphs come without
    their features file). Structural features (degrees, ...) would
    put a node's edges into other nodes' inputs."""
    raw = feather(paths)
    return raw._replace(x=np.eye(raw.num_nodes, dtype=np.float32))


def privdpr_txt(paths: Paths) -> RawGraph:
    """PrivDPR's processed files: ``src dst weight`` lines, ids ``0..N-1``."""
    (path,) = paths.values()
    return read_dense_index_edges(path)
