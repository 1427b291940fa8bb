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


@needs_data
@pytest.mark.dataset
def test_pubmed_partial_holds_the_mirrored_feature_rows_and_a_has_features_bit():
    import os
    import pickle

    from graphpriv.data.readers import read_index_file

    plain, partial = load("pubmed"), load("pubmed_partial")
    assert plain.x is None and np.array_equal(partial.edge_index.numpy(), plain.edge_index.numpy())
    assert np.array_equal(partial.y.numpy(), plain.y.numpy())
    root = os.path.join(os.environ["GRAPHPRIV_DATA"], "planetoid")
    with open(os.path.join(root, "ind.pubmed.tx"), "rb") as f:
        tx = pickle.load(f, encoding="latin1").toarray()
    test_index = read_index_file(os.path.join(root, "ind.pubmed.test.index"))
    x = partial.x.numpy()
    known = np.flatnonzero(x[:, -1])
    assert np.array_equal(known, np.union1d(np.arange(60), test_index))  # the x rows and the tx rows
    assert np.allclose(x[test_index, :-1], tx)
    assert not x[np.setdiff1d(np.arange(partial.num_nodes), known)].any()  # zeros elsewhere, bit 0


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


def test_a_facebook100_school_drops_yearless_nodes_and_rare_years(tmp_path):
    import scipy.io as sio
    import scipy.sparse as sp

    from graphpriv.data.builders import facebook100_mat
    from graphpriv.data.graph import clean_graph

    # 40 students: node 0 has no year (removed with its edges); years 2008 (20), 2009 (19) and 2010
    # (node 1 alone: 1 of 39 < 3 %, unlabelled); gender 1 or 2 (node 5 missing), major 7 or 9
    n = 40
    info = np.zeros((n, 7), dtype=np.uint16)
    info[:, 5] = [0, 2010] + [2008] * 20 + [2009] * 18
    info[:, 1] = [1, 2] * 20
    info[5, 1] = 0
    info[:, 2] = [7] * 10 + [9] * 30
    ring = np.arange(n)
    adj = sp.coo_matrix((np.ones(n), (ring, (ring + 1) % n)), shape=(n, n))
    path = tmp_path / "School.mat"
    sio.savemat(path, {"A": sp.csc_matrix(adj + adj.T), "local_info": info})
    raw = facebook100_mat({"School.mat": path})
    data = clean_graph(raw, name="school")
    assert data.num_nodes == 39 and list(data.node_names[:2]) == [1, 2]  # node 0 gone, rows renumbered
    assert data.edge_index.size(1) // 2 == 38  # the ring loses node 0's two edges
    y = data.y.numpy()
    assert y[0] == -1 and (y[1:21] == 0).all() and (y[21:] == 1).all()  # 2010 too rare; 2008 -> 0, 2009 -> 1
    x = data.x.numpy()
    assert x.shape == (39, 2 + 2)  # gender {1, 2}, major {7, 9}; status, minor, housing all missing
    assert x[4, :2].tolist() == [0, 0] and x[0, :2].tolist() == [0, 1]  # missing: no bit; node 1: gender 2
    assert (x.sum(1) == np.where(np.arange(39) == 4, 1, 2)).all()
    assert raw.notes[0] == "1 node without a year removed with their edges"
