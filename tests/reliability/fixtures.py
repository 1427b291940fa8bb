"""Small inputs the bad-input cases are built from: edge-list text, saved PyG files, stores."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np

#: The registry dataset the CLI cases use (332 nodes, 2,126 edges; SEAL's USAir.mat).
REG = "usair"
REG_EDGES = 2126

#: Cheapest settings of every method (one epoch, no attack, no utility run): a case whose input is
#: wrongly accepted still finishes in about a second.
CHEAP: dict[str, dict] = {
    "dplp-ps": {"epochs": 1}, "dplp-ns": {"epochs": 1}, "seal": {"epochs": 1, "h": 1}, "seal-gcn": {"epochs": 1}, "lapgraph-sgnn": {"epochs": 1},
    "cn": {}, "aa": {}, "ra": {}, "ra3": {}, "dp-heuristic-mix": {}, "gae": {"epochs": 1}, "edgerand-gae": {"epochs": 1}, "lapgraph-gae": {"epochs": 1},
    "dplp-rank": {"lin_epochs": 1, "umnn_epochs": 1}, "rank-laplace": {},
    "privdpr": {"epochs": 1, "evaluate": False, "r": 8, "d": 8},
    "dpr": {"epochs": 1, "evaluate": False, "r": 8, "d": 8},
    "privdpr-tight": {"epochs": 1, "evaluate": False, "r": 8, "d": 8},
    "dpar-gm": {"epochs": 1}, "dpar-nodp": {"epochs": 1}, "dp-mlp": {"epochs": 1}, "mlp": {"epochs": 1},
    "gap-edp": {"encoder_epochs": 1, "epochs": 1}, "gap-inf": {"encoder_epochs": 1, "epochs": 1},
    "gcn": {"epochs": 1}, "progap-edp": {"epochs": 1}, "progap-inf": {"epochs": 1},
    "gap-ndp": {"encoder_epochs": 1, "epochs": 1}, "progap-ndp": {"epochs": 1}, "sage-ndp": {"epochs": 1},
    "dp-mlp-transductive": {"epochs": 1}, "mlp-transductive": {"epochs": 1},
    "ppgsl": {"learner_steps": 1, "surrogate_epochs": 1, "utility": False, "attacks": "none"},
    "random-perturb": {"utility": False, "attacks": "none"}, "dice": {"utility": False, "attacks": "none"},
    "edgerand": {"utility": False, "attacks": "none"}, "lapgraph": {"utility": False, "attacks": "none"},
    "tmf": {"evaluate": False, "attacks": "none"}, "dp-1k": {"evaluate": False, "attacks": "none"},
    "privgraph": {"evaluate": False, "attacks": "none"},
    "edgerand-synthesis": {"utility": False, "attacks": "none"},
    "lapgraph-synthesis": {"utility": False, "attacks": "none"},
}
METHOD_IDS = tuple(CHEAP)
#: Methods that read node features and labels (node classifiers).
NODE_CLASSIFIERS = ("dpar-gm", "dpar-nodp", "dp-mlp", "mlp", "gap-edp", "gap-inf", "gcn", "progap-edp", "progap-inf",
                    "gap-ndp", "progap-ndp", "sage-ndp", "dp-mlp-transductive", "mlp-transductive")

#: ``--set`` flags making a publishing CLI run cheap.
PUBLISH_CHEAP = ["--set", "utility=false", "--set", "attacks=none"]


def ring_edges(n: int = 40) -> np.ndarray:
    """``[2, 2n]`` undirected edges (i, i+1) and (i, i+5) mod n: connected, enough for any split."""
    i = np.arange(n)
    return np.concatenate([np.stack([i, (i + 1) % n]), np.stack([i, (i + 5) % n])], axis=1)


def edge_text(pairs: np.ndarray) -> str:
    return "".join(f"{u} {v}\n" for u, v in np.asarray(pairs).T.tolist())


def write(ctx, name: str, text: str | bytes) -> Path:
    path = ctx.path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def tiny_txt(ctx, name: str = "tiny.txt") -> Path:
    """A valid 40-node, 80-edge edge list."""
    return write(ctx, name, edge_text(ring_edges()))


def labelled(num_nodes: int = 60, seed: int = 0):
    """A valid labelled graph (3 classes, 8 features) as a bare ``Data`` (tensors only)."""
    from torch_geometric.data import Data

    from graphpriv.testing.graphs import labelled_sbm

    d = labelled_sbm(num_nodes, 3, p_in=0.25, p_out=0.02, num_features=8, seed=seed)
    return Data(edge_index=d.edge_index.clone(), x=d.x.clone(), y=d.y.clone(), num_nodes=num_nodes)


def save_pt(ctx, name: str, obj) -> Path:
    import torch

    path = ctx.path(name)
    torch.save(obj, path)
    return path


def tiny_pt(ctx, name: str = "tiny_nc.pt") -> Path:
    """A valid labelled 60-node graph saved as a PyG ``Data`` (node-level CLI runs)."""
    return save_pt(ctx, name, labelled())


class Evil:
    """Unpickling this creates the file ``marker`` (a stand-in for arbitrary code execution)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def corrupt_store(ctx, name: str = "corrupt.sqlite") -> Path:
    return write(ctx, name, b"this is not a database\x00\x01\x02" * 64)


def foreign_store(ctx, name: str = "foreign.sqlite") -> Path:
    path = ctx.path(name)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO users (name) VALUES ('alice')")
    return path


def future_store(ctx, name: str = "future.sqlite") -> Path:
    from graphpriv.experiments.store import ResultStore

    path = ctx.path(name)
    ResultStore(path)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    return path


def a_file(ctx, name: str = "afile") -> Path:
    """A regular file (for paths that put a folder under it)."""
    return write(ctx, name, "I am a file, not a folder\n")


def fake_result(dataset: str, epsilon: float, seed: int = 0, method: str = "dplp-ps", auc: float = 0.8):
    """A synthetic private link-prediction :class:`Result` (no training)."""
    from graphpriv.methods.base import Result
    from graphpriv.privacy.report import PrivacyReport

    privacy = PrivacyReport(unit="edge", relation="add/remove", accounting="rigorous", epsilon=epsilon * 0.99,
                            delta=1e-5, target_epsilon=epsilon)
    return Result(method=method, dataset=dataset, seed=seed, config={"epsilon": epsilon, "k": 2},
                  metrics={"test_auc": auc + 0.01 * epsilon}, privacy=privacy)


def store_with(ctx, results, name: str = "s.sqlite") -> Path:
    from graphpriv.experiments.store import ResultStore

    path = ctx.path(name)
    store = ResultStore(path)
    for r in results:
        store.append(r)
    return path


def insert_garbage_row(path: Path) -> int:
    """A row whose result JSON is garbage (status ok, its own cell); returns its id."""
    with sqlite3.connect(path) as db:
        cols = [row[1] for row in db.execute("PRAGMA table_info(runs)")]
        values = {"created": "2024-01-01T00:00:00+00:00", "method": "dplp-ps", "dataset": "garbage-ds", "seed": 7,
                  "config_hash": "deadbeefdeadbeef", "status": "ok", "metrics": json.dumps({"test_auc": 0.5}),
                  "result": "{not json at all", "epsilon": 1.0, "delta": 1e-5, "accounting": "rigorous"}
        values = {k: v for k, v in values.items() if k in cols}
        cur = db.execute(f"INSERT INTO runs ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
                         tuple(values.values()))
        return int(cur.lastrowid)


def store_rows(path: Path) -> dict[str, int]:
    """Row counts of the store's ``runs`` (by status) and ``superseded`` tables."""
    with sqlite3.connect(path) as db:
        out = {status: n for status, n in db.execute("SELECT status, COUNT(*) FROM runs GROUP BY status")}
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        out["superseded"] = db.execute("SELECT COUNT(*) FROM superseded").fetchone()[0] if "superseded" in tables else 0
        out["runs"] = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    return out
