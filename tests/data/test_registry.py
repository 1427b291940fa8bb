import shutil

import numpy as np
import pytest

from graphpriv.data import REGISTRY, dataset_spec, load, num_undirected_edges
from graphpriv.data.fetch import RawFile, locate, sha256_of
from graphpriv.errors import ChecksumError, DatasetError
from tests.conftest import needs_data


@needs_data
@pytest.mark.dataset
@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_counts_match_table(name):
    spec = REGISTRY[name]
    data = load(name)
    assert data.num_nodes == spec.num_nodes
    assert num_undirected_edges(data) == spec.num_edges
    ei = data.edge_index.numpy()
    assert (ei[0] != ei[1]).all(), "self-loop survived cleaning"
    pairs = set(map(tuple, ei.T.tolist()))
    assert all((b, a) in pairs for a, b in pairs), "not symmetric"
    assert len(pairs) == ei.shape[1], "duplicate edge survived cleaning"
    if spec.num_features:
        assert tuple(data.x.shape) == (spec.num_nodes, spec.num_features)
    if spec.num_classes:
        assert int(data.y.max()) + 1 == spec.num_classes


def test_unknown_dataset_lists_known_ones():
    with pytest.raises(DatasetError, match="unknown dataset 'nope'.*usair"):
        dataset_spec("nope")
    with pytest.raises(DatasetError, match="known datasets"):
        load("nope")


def _isolated(monkeypatch, tmp_path, mirror=None):
    monkeypatch.setenv("GRAPHPRIV_CACHE", str(tmp_path / "cache"))
    if mirror is None:
        monkeypatch.delenv("GRAPHPRIV_DATA", raising=False)
    else:
        monkeypatch.setenv("GRAPHPRIV_DATA", str(mirror))


def test_missing_file_offline_names_file_url_and_variable(monkeypatch, tmp_path):
    _isolated(monkeypatch, tmp_path)
    monkeypatch.setenv("GRAPHPRIV_OFFLINE", "1")
    raw = dataset_spec("usair").raw_files[0]
    with pytest.raises(DatasetError) as err:
        locate(raw)
    message = str(err.value)
    assert "seal/USAir.mat" in message and raw.url in message and "GRAPHPRIV_DATA" in message


def test_failed_download_is_a_clear_error(monkeypatch, tmp_path):
    _isolated(monkeypatch, tmp_path)
    monkeypatch.delenv("GRAPHPRIV_OFFLINE", raising=False)
    raw = RawFile("seal", "Nowhere.mat", "http://127.0.0.1:9/Nowhere.mat", "0" * 64)
    with pytest.raises(DatasetError, match="download failed.*127.0.0.1:9/Nowhere.mat"):
        locate(raw)
    assert not (tmp_path / "cache" / "seal" / "Nowhere.mat").exists()


@needs_data
def test_checksum_mismatch(monkeypatch, tmp_path):
    import os

    raw = dataset_spec("usair").raw_files[0]
    source = os.path.join(os.environ["GRAPHPRIV_DATA"], raw.relpath)
    mirror = tmp_path / "mirror"
    (mirror / "seal").mkdir(parents=True)
    shutil.copy(source, mirror / "seal" / "USAir.mat")
    with open(mirror / "seal" / "USAir.mat", "ab") as handle:
        handle.write(b"tampered")
    _isolated(monkeypatch, tmp_path, mirror)
    with pytest.raises(ChecksumError, match="checksum mismatch.*USAir.mat"):
        load("usair")


@needs_data
def test_cache_is_used_after_mirror(monkeypatch, tmp_path):
    import os

    raw = dataset_spec("celegans").raw_files[0]
    cache = tmp_path / "cache" / "seal"
    cache.mkdir(parents=True)
    shutil.copy(os.path.join(os.environ["GRAPHPRIV_DATA"], raw.relpath), cache / raw.name)
    _isolated(monkeypatch, tmp_path)
    monkeypatch.setenv("GRAPHPRIV_OFFLINE", "1")
    assert locate(raw) == cache / raw.name
    assert sha256_of(locate(raw)) == raw.sha256


@needs_data
def test_planetoid_labels_and_features_align_with_pyg():
    import os

    from torch_geometric.io import read_planetoid_data

    ours = load("cora")
    ref = read_planetoid_data(os.path.join(os.environ["GRAPHPRIV_DATA"], "planetoid"), "cora")
    assert np.array_equal(ours.y.numpy(), ref.y.numpy())
    assert np.allclose(ours.x.numpy(), ref.x.numpy())


@needs_data
@pytest.mark.dataset
def test_identity_features_are_one_hot_and_the_graph_is_unchanged():
    plain, ident = load("lastfm_asia"), load("lastfm_asia_identity")
    assert plain.x is None
    assert np.array_equal(ident.x.numpy(), np.eye(plain.num_nodes, dtype=np.float32))
    assert np.array_equal(ident.edge_index.numpy(), plain.edge_index.numpy())
    assert np.array_equal(ident.y.numpy(), plain.y.numpy())


def test_the_data_cache_is_graphpriv_cache_else_under_xdg_cache_home(monkeypatch, tmp_path):
    from pathlib import Path

    from graphpriv.data.fetch import cache_dir

    monkeypatch.setenv("GRAPHPRIV_CACHE", str(tmp_path / "gp"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "gp"
    monkeypatch.delenv("GRAPHPRIV_CACHE")
    assert cache_dir() == tmp_path / "xdg" / "graphpriv"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == Path.home() / ".cache" / "graphpriv"
