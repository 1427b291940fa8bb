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


class _OpensAFile:
    """Unpickling it calls open(marker, "w"): what a malicious graph file could do."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("payload", ["bare", "inside_data"])
def test_pt_that_would_run_code_is_refused_and_nothing_runs(tmp_path, payload):
    marker = tmp_path / "pwned"
    evil = _OpensAFile(marker)
    obj = evil if payload == "bare" else Data(edge_index=torch.tensor([[0], [1]]), num_nodes=2, extra=evil)
    torch.save(obj, tmp_path / "evil.pt")
    with pytest.raises(GraphFormatError, match="not a plain saved PyG Data.*never unpickles arbitrary objects") as err:
        load(tmp_path / "evil.pt")
    assert "\n" not in str(err.value) and "(it needs io.open)" in str(err.value)
    assert not marker.exists()
    # the payload is live: a plain torch.load(weights_only=False) would have run it
    armed = tmp_path / "armed"
    torch.save(_OpensAFile(armed), tmp_path / "armed.pt")
    torch.load(tmp_path / "armed.pt", weights_only=False).close()
    assert armed.exists()


def test_pt_with_other_objects_is_refused(tmp_path):
    torch.save(Data(edge_index=torch.tensor([[0], [1]]), num_nodes=2, ids=np.arange(2)), tmp_path / "np.pt")
    with pytest.raises(GraphFormatError, match=r"not a plain saved PyG Data \(it needs numpy"):
        load(tmp_path / "np.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a torch file")
    with pytest.raises(GraphFormatError, match=r"not a plain saved PyG Data \(Unsupported operand"):
        load(tmp_path / "junk.pt")
    (tmp_path / "empty.pt").write_bytes(b"")
    with pytest.raises(GraphFormatError, match="cannot load a saved PyG Data"):
        load(tmp_path / "empty.pt")


def test_saved_data_round_trips(tmp_path):
    x = torch.randn(4, 3)
    y = torch.tensor([0, 1, -1, 1])
    ei = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    torch.save(Data(x=x, edge_index=ei, y=y, num_nodes=4), tmp_path / "g.pt")
    data = load(tmp_path / "g.pt")
    assert torch.equal(data.edge_index, ei) and torch.equal(data.x, x) and torch.equal(data.y, y)
    assert data.num_nodes == 4 and data.normalisations == []


def test_inf_features_rejected(tmp_path):
    x = torch.tensor([[0.0], [float("inf")], [1.0], [-float("inf")]])
    torch.save(Data(edge_index=torch.tensor([[0], [1]]), x=x, num_nodes=4), tmp_path / "inf.pt")
    with pytest.raises(DatasetError, match=r"not finite \(NaN or inf\) at 2 nodes, the first node 1; impute"):
        load(tmp_path / "inf.pt")


def test_pt_float_labels_and_bad_num_nodes_refused(tmp_path):
    torch.save(Data(edge_index=torch.tensor([[0], [1]]), y=torch.tensor([0.5, 1.0]), num_nodes=2), tmp_path / "y.pt")
    with pytest.raises(GraphFormatError, match="y must hold integer class labels"):
        load(tmp_path / "y.pt")
    torch.save(Data(edge_index=torch.tensor([[0], [1]]), num_nodes=2**40), tmp_path / "n.pt")
    with pytest.raises(DatasetError, match="more than graphpriv supports"):
        load(tmp_path / "n.pt")


def test_edge_list_normalisations_are_named_and_logged(tmp_path, caplog):
    text = ("# comment\nsource target weight\n"
            "1 2 1\n2 1 0.5\n1 2 3\n3 3 1\n2 3 0\n3 4 -1\n4 5 2\n")
    with caplog.at_level("WARNING", logger="graphpriv.data"):
        data = load(_write(tmp_path, "w.txt", text))
    assert data.node_names.tolist() == [1, 2, 3, 4, 5]
    pairs = data.edge_index[:, data.edge_index[0] < data.edge_index[1]].t().tolist()
    assert pairs == [[0, 1], [3, 4]]  # 1-2 and 4-5; 2-3 (weight 0) and 3-4 (weight -1) dropped
    assert data.normalisations == [
        "line 2 skipped as a header: 'source target weight'",
        "2 edges with weight <= 0 dropped",
        "1 self-loop dropped",
        "1 duplicate edge dropped",
        "1 edge given in both directions merged",
    ]
    logged = [r.getMessage() for r in caplog.records if r.name == "graphpriv.data"]
    assert logged == [f"w.txt: {note}" for note in data.normalisations]


def test_an_edge_of_weight_zero_keeps_its_nodes(tmp_path):
    data = load(_write(tmp_path, "z.txt", "0 1 1\n1 2 1\n7 9 0\n"))
    assert data.node_names.tolist() == [0, 1, 2, 7, 9] and data.num_nodes == 5
    assert data.edge_index[:, data.edge_index[0] < data.edge_index[1]].t().tolist() == [[0, 1], [1, 2]]


def test_clean_user_file_has_no_normalisations(tmp_path, caplog):
    with caplog.at_level("WARNING", logger="graphpriv.data"):
        data = load(_write(tmp_path, "ok.txt", "0 1\n1 2\n"))
    assert data.normalisations == [] and not [r for r in caplog.records if r.name == "graphpriv.data"]


def test_edge_list_bad_weights_and_huge_ids(tmp_path):
    with pytest.raises(GraphFormatError, match=r"ok.txt:2: the weight must be a finite number"):
        load(_write(tmp_path, "ok.txt", "0 1 1\n1 2 nan\n"))
    with pytest.raises(GraphFormatError, match="no edges found.*2 lines have weight <= 0"):
        load(_write(tmp_path, "zero.txt", "0 1 0\n1 2 -3\n"))
    with pytest.raises(GraphFormatError, match=r"big.txt:1: node id out of range"):
        load(_write(tmp_path, "big.txt", f"0 {2**63}\n"))
    data = load(_write(tmp_path, "max.txt", f"0 {2**63 - 1}\n"))
    assert data.node_names.tolist() == [0, 2**63 - 1]


def test_released_graph_from_another_dataset_is_refused(tmp_path):
    from graphpriv.data.files import read_released_graph, write_released_graph

    pairs = np.array([[0, 1, 5], [1, 2, 2700]])
    for name in ("pub.txt", "pub.npz"):
        path = write_released_graph(tmp_path / name, pairs, 2708)
        assert read_released_graph(path, 2708).tolist() == [[0, 1, 5], [1, 2, 2700]]
        with pytest.raises(GraphFormatError) as err:
            read_released_graph(path, 3327)
        assert str(err.value) == (f"{name} was released from a graph with 2708 nodes, the dataset has 3327: "
                                  "attack it with the dataset it was published from")
    # an edge list without the header is checked by its ids only
    plain = _write(tmp_path, "plain.txt", "0 1\n1 2\n")
    assert read_released_graph(plain, 3327).shape == (2, 2)


def test_npz_readers_close_a_file_that_has_the_zip_magic_but_is_no_zip(tmp_path, monkeypatch):
    """numpy keeps its own handle open when a file starts like a zip but is not one; the readers
    open the file themselves, so the refusal leaves nothing open (no ResourceWarning when the
    handle is collected, which pytest would report in whichever later test runs the collector)."""
    import gc
    import sys
    import warnings
    import zipfile

    from graphpriv.data import readers
    from graphpriv.errors import GraphFormatError

    path = tmp_path / "garbage.npz"
    path.write_bytes(b"PK\x03\x04 not a zip archive")
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        with pytest.raises(GraphFormatError, match="not a scipy sparse .npz"):
            readers.read_scipy_npz(path)
        for read in (lambda: readers.read_prefixed_csr(path, "adj_"), lambda: readers.read_npz_labels(path)):
            with pytest.raises(zipfile.BadZipFile):  # numpy's own error; the point is what stays open
                read()
        gc.collect()
    assert not [u for u in unraisable if isinstance(u.exc_value, ResourceWarning)]
