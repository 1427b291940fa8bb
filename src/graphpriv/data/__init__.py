"""Datasets (registry, mirror/cache/download with sha256), user graph files, cleaning, splits.

``load("usair")`` or ``load("path/to/graph.txt")`` returns a cleaned, undirected, simple PyG
``Data``.
"""

from __future__ import annotations

from pathlib import Path

from torch_geometric.data import Data

from graphpriv.data.fetch import locate
from graphpriv.data.files import load_graph_file
from graphpriv.data.graph import clean_graph, num_undirected_edges, to_csr, undirected_pairs
from graphpriv.data.registry import REGISTRY, DatasetSpec
from graphpriv.data.validation import check_data, check_seed
from graphpriv.errors import DatasetError

__all__ = [
    "REGISTRY", "DatasetSpec", "check_data", "check_seed", "dataset_spec", "load", "locate_files",
    "num_undirected_edges", "to_csr", "undirected_pairs",
]


def dataset_spec(name: str) -> DatasetSpec:
    """Registry entry of ``name``.

    Raises:
        DatasetError: unknown id (the message lists the known ones).
    """
    try:
        return REGISTRY[name]
    except KeyError:
        raise DatasetError(
            f"unknown dataset {name!r}; known datasets: {', '.join(sorted(REGISTRY))} "
            "(or give a path to a graph file)"
        ) from None


def locate_files(name: str) -> dict[str, Path]:
    """Verified local paths of a registry dataset's raw files (see :func:`~graphpriv.data.fetch.locate`)."""
    spec = dataset_spec(name)
    return {raw.name: locate(raw) for raw in spec.raw_files}


def _looks_like_path(name: str) -> bool:
    return name not in REGISTRY and ("/" in name or "\\" in name or Path(name).suffix != "" or Path(name).exists())


def load(name: str | Path) -> Data:
    """Load a registry dataset by id, or a user graph file by path, cleaned.

    Args:
        name: A registry id (``graphpriv datasets`` lists them) or a path to a graph file.

    Returns:
        ``Data`` with ``edge_index [2, 2|E|]``, ``num_nodes``, optional ``x``, ``y``,
        ``node_names`` and ``name``; a graph file's also has ``normalisations`` (``list[str]``,
        each change made to the file's graph, see :func:`~graphpriv.data.files.load_graph_file`).

    Raises:
        DatasetError: unknown id, missing file without network, checksum mismatch, malformed file.
    """
    if not isinstance(name, (str, Path)):
        raise DatasetError(f"a dataset is a registry id or a graph file path, got a {type(name).__name__}; pass a "
                           "torch_geometric Data to the method itself, or save it and give its path")
    name = str(name)
    if not name.strip():
        raise DatasetError("the dataset name is empty; give a registry id (`graphpriv datasets` lists them) or a "
                           "graph file path")
    if _looks_like_path(name):
        return load_graph_file(name)
    spec = dataset_spec(name)
    return clean_graph(spec.build(locate_files(name)), name=spec.id)
