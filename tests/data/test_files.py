import numpy as np
import pytest
import scipy.io as sio
import scipy.sparse as sp
import torch
from torch_geometric.data import Data

from graphpriv.data import load, num_undirected_edges
from graphpriv.errors import DatasetError, GraphFormatError


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_edge_list_with_comments_header_weights_and_duplicates(tmp_path):
    path = _write(tmp_path, "g.txt", "# a comment\n% another\nsrc dst w\n10 20 0.5\n20 10 1\n20 30 2\n30 30 1\n\n")
    data = load(path)
    assert data.num_nodes == 3 and num_undirected_edges(data) == 2
    assert data.node_names.tolist() == [10, 20, 30]


@pytest.mark.parametrize("name,sep", [("g.csv", ","), ("g.tsv", "\t")])
def test_csv_and_tsv(tmp_path, name, sep):
    path = _write(tmp_path, name, f"a{sep}b\n0{sep}1\n1{sep}2\n2{sep}0\n")
    assert num_undirected_edges(load(path)) == 3


def test_npz_mat_and_pt_give_the_same_graph(tmp_path):
    adj = sp.coo_matrix((np.ones(4), ([0, 1, 1, 2], [1, 0, 2, 1])), shape=(4, 4)).tocsr()
    sp.save_npz(tmp_path / "g.npz", adj)
    sio.savemat(tmp_path / "g.mat", {"A": adj})
    torch.save(Data(edge_index=torch.tensor([[0, 1], [1, 2]]), num_nodes=4), tmp_path / "g.pt")
    graphs = [load(tmp_path / f) for f in ("g.npz", "g.mat", "g.pt")]
    for g in graphs:
        assert g.num_nodes == 4  # isolated node 3 kept
        assert torch.equal(g.edge_index, graphs[0].edge_index)


@pytest.mark.parametrize("text,match", [
    ("0 1\n1 x\n", "must be integers"),
    ("0 1 2 3\n", "expected 'src dst'"),
    ("0\n", "expected 'src dst'"),
    ("0 -1\n", "out of range"),
    ("# only comments\n", "no edges"),
])
def test_malformed_edge_lists(tmp_path, text, match):
    with pytest.raises(GraphFormatError, match=match):
        load(_write(tmp_path, "bad.txt", text))


def test_graph_with_only_self_loops_has_no_edges(tmp_path):
    with pytest.raises(DatasetError, match="no edges"):
        load(_write(tmp_path, "loops.txt", "1 1\n2 2\n"))


def test_pt_with_out_of_range_ids(tmp_path):
    torch.save(Data(edge_index=torch.tensor([[0, 5], [1, 2]]), num_nodes=3), tmp_path / "bad.pt")
    with pytest.raises(DatasetError, match="node id 5 is out of range"):
        load(tmp_path / "bad.pt")


def test_mat_without_adjacency(tmp_path):
    sio.savemat(tmp_path / "bad.mat", {"v": np.ones((3, 2))})
    with pytest.raises(GraphFormatError, match="square adjacency"):
        load(tmp_path / "bad.mat")


def test_corrupt_npz_and_unknown_suffix(tmp_path):
    with pytest.raises(GraphFormatError, match="scipy sparse"):
        load(_write(tmp_path, "bad.npz", "not a zip"))
    with pytest.raises(GraphFormatError, match="unsupported file type"):
        load(_write(tmp_path, "g.json", "{}"))
    with pytest.raises(GraphFormatError, match="does not exist"):
        load(tmp_path / "missing.txt")


def test_nan_features_rejected(tmp_path):
    x = torch.tensor([[0.0], [float("nan")]])
    torch.save(Data(edge_index=torch.tensor([[0], [1]]), x=x, num_nodes=2), tmp_path / "nan.pt")
    with pytest.raises(DatasetError, match="NaN"):
        load(tmp_path / "nan.pt")
