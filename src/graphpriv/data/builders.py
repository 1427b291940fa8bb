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
    read_mat_variables,
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


def planetoid_partial_features(paths: Paths, prefix: str) -> RawGraph:
    """:func:`planetoid` with the features the mirror has when ``allx`` is missing (pubmed): the
    ``x`` rows (the first training nodes) and the ``tx`` rows (the test nodes, by ``test.index``),
    zeros elsewhere, and one last column set to 1 where a node's features are known (so a model
    can tell a known zero from a missing row). Same graph and labels as :func:`planetoid`.

    Raises:
        DatasetError: a file the reader cannot parse (:mod:`graphpriv.data.readers`).
    """
    raw = planetoid({k: v for k, v in paths.items() if not k.endswith((f"ind.{prefix}.x", f"ind.{prefix}.tx"))},
                    prefix)
    get = {name.split(f"ind.{prefix}.")[1]: p for name, p in paths.items()}
    head, tx = (sp.csr_matrix(read_pickle_latin1(get[k])) for k in ("x", "tx"))
    x = np.zeros((raw.num_nodes, head.shape[1] + 1), dtype=np.float32)
    x[: head.shape[0], :-1] = head.toarray()
    test_index = read_index_file(get["test.index"])
    x[test_index, :-1] = tx.toarray()
    x[: head.shape[0], -1] = 1.0
    x[test_index, -1] = 1.0
    return raw._replace(x=x)


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


#: ``local_info`` columns of a Facebook100 file that become one-hot features (the year, column 5,
#: is the label; the high school, column 6, is left out, as in GAP's loader).
FB100_FEATURE_COLUMNS = {"status": 0, "gender": 1, "major": 2, "minor": 3, "housing": 4}
FB100_YEAR_COLUMN = 5
#: A year class below this share of the labelled nodes is marked unlabelled (-1).
FB100_MIN_CLASS_SHARE = 0.03


def facebook100_mat(paths: Paths) -> RawGraph:
    """A Facebook100 school (Traud, Mucha, Porter, "Social structure of Facebook networks",
    Physica A 2012), as graphpriv's node-classification benchmark in the style of GAP (Sajadmanesh
    et al., "GAP: Differentially Private Graph Neural Networks with Aggregation Perturbation",
    USENIX Security 2023, Sec. 6.1: the class year as the label).

    ``A`` is the symmetric friendship adjacency; ``local_info [N, 7]`` holds status, gender, major,
    minor, housing, year and high school, 0 = missing. Nodes without a year are removed with their
    edges (ids renumbered in order; ``node_names`` keeps the file's row); features are the one-hot
    codes of status, gender, major, minor and housing (``[N, F]`` float32, one block per column in
    that order, its values sorted; a missing value sets no bit); the label is the year's index
    among the years kept, and a year held by under 3 % of the remaining nodes is unlabelled (-1).

    The benchmark's 75/10/15 random node split is ``data.splits.node_split(data, train_ratio=0.75,
    val_ratio=0.10, seed=...)``; unlabelled nodes take part in propagation and are left out of
    training and of the accuracy (``evaluation.node``).

    After cleaning (tested against the registry): Caltech36 655 nodes / 14,837 edges / 76 features /
    6 years (29 unlabelled); Amherst41 2,021 / 81,492 / 100 / 6 (87); JohnsHopkins55 4,544 / 164,787
    / 248 / 6 (119); MIT8 5,298 / 217,118 / 156 / 7 (245); Harvard1 12,505 / 729,471 / 168 / 9
    (808); Cornell5 16,162 / 669,883 / 347 / 6 (788). The files as published hold 769 / 16,656;
    2,235 / 90,954; 5,180 / 186,586; 6,440 / 251,252; 15,126 / 824,617; 18,660 / 790,777.

    Returns:
        :class:`~graphpriv.data.graph.RawGraph` with ``x``, ``y`` and a note per removal.

    Raises:
        GraphFormatError: an unreadable file, or one without ``A`` or ``local_info``.
    """
    (path,) = paths.values()
    mat = read_mat_variables(path, ("A", "local_info"))
    raw = adjacency_to_raw(mat["A"], source=str(path))
    info = np.asarray(mat["local_info"], dtype=np.int64)
    year = info[:, FB100_YEAR_COLUMN]
    keep = np.flatnonzero(year > 0)
    new_id = np.full(info.shape[0], -1, dtype=np.int64)
    new_id[keep] = np.arange(keep.size)
    src, dst = new_id[raw.edge_index[0]], new_id[raw.edge_index[1]]
    inside = (src >= 0) & (dst >= 0)
    info, year = info[keep], year[keep]
    blocks = []
    for column in FB100_FEATURE_COLUMNS.values():
        values = info[:, column]
        categories = np.unique(values[values > 0])
        blocks.append((values[:, None] == categories[None, :]).astype(np.float32))  # a missing 0 sets no bit
    years, counts = np.unique(year, return_counts=True)
    kept_years = years[counts >= FB100_MIN_CLASS_SHARE * year.size]
    y = np.where(np.isin(year, kept_years), np.searchsorted(kept_years, year), -1).astype(np.int64)
    removed, rare = new_id.size - keep.size, int((y < 0).sum())
    notes = (f"{removed} node{'s' * (removed != 1)} without a year removed with their edges",
             f"{rare} node{'s' * (rare != 1)} of a year held by under {FB100_MIN_CLASS_SHARE:.0%} of the nodes unlabelled")
    return RawGraph(np.stack([src[inside], dst[inside]]), num_nodes=int(keep.size), x=np.concatenate(blocks, axis=1),
                    y=y, node_names=keep, notes=notes)
