import json

import numpy as np
import pytest
from typer.testing import CliRunner

from graphpriv.cli import app, parse_overrides
from graphpriv.experiments.store import ResultStore
from graphpriv.privacy.dpsgd_accounting import DpSgdSetting, epsilon_for
from graphpriv.testing.graphs import random_graph
from tests.conftest import needs_data

runner = CliRunner()


def test_accountant_json_matches_library_and_inverse():
    out = runner.invoke(app, ["accountant", "-z", "1.1", "-m", "256", "-n", "60000", "--epochs", "60", "--json"])
    assert out.exit_code == 0, out.output
    answer = json.loads(out.output)
    setting = DpSgdSetting(sampling="poisson", dataset_size=60000, batch_size=256, steps=answer["steps"], delta=1e-5)
    assert answer["epsilon"] == pytest.approx(epsilon_for(setting, 1.1)[0])
    assert answer["steps"] == 14063
    inv = runner.invoke(app, ["accountant", "--target-epsilon", str(answer["epsilon"]), "-m", "256", "-n", "60000",
                              "--epochs", "60", "--json"])
    assert json.loads(inv.output)["noise_multiplier"] == pytest.approx(1.1, abs=0.01)


def test_accountant_group_bound_and_errors():
    out = runner.invoke(app, ["accountant", "-z", "2", "-m", "128", "-n", "3600", "--steps", "1000",
                              "--sampling", "wor", "-K", "21", "--json"])
    k21 = json.loads(out.output)
    out = runner.invoke(app, ["accountant", "-z", "2", "-m", "128", "-n", "3600", "--steps", "1000",
                              "--sampling", "wor", "-K", "1", "--json"])
    k1 = json.loads(out.output)
    assert k21["noise_std_per_unit_clip"] == 84 and k1["noise_std_per_unit_clip"] == 4
    assert k21["epsilon"] != k1["epsilon"]
    bad = runner.invoke(app, ["accountant", "-z", "1", "-m", "10", "-n", "100", "--steps", "5", "--delta", "2"])
    assert bad.exit_code == 2 and "delta" in bad.output
    poisson = runner.invoke(app, ["accountant", "-z", "1", "-m", "10", "-n", "100", "--steps", "5", "-K", "3",
                                  "--json"])
    assert poisson.exit_code == 0 and json.loads(poisson.output)["noise_std_per_unit_clip"] == 6  # 2 C K
    bad = runner.invoke(app, ["accountant", "-z", "1", "-m", "10", "-n", "100", "--steps", "5", "-K", "0"])
    assert bad.exit_code == 2 and "group_size" in bad.output
    bad = runner.invoke(app, ["accountant", "--target-epsilon", "0", "-m", "10", "-n", "100", "--steps", "5"])
    assert bad.exit_code == 2 and "epsilon" in bad.output


def test_run_on_a_user_graph_file_writes_json_and_store(tmp_path):
    graph = random_graph(120, 0.07, seed=2)
    ei = graph.edge_index.numpy()
    path = tmp_path / "g.csv"
    np.savetxt(path, ei[:, ei[0] < ei[1]].T, fmt="%d", delimiter=",", header="src,dst")
    store = tmp_path / "s.sqlite"
    out = runner.invoke(app, ["run", "dplp-ps", "--dataset", str(path), "--epsilon", "3", "--seed", "1",
                              "--set", "epochs=2", "--set", "batch_size=32", "--json", str(tmp_path / "r.json"),
                              "--store", str(store)])
    assert out.exit_code == 0, out.output
    assert "epsilon spent" in out.output and "accounting" in out.output and "test auc" in out.output
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["privacy"]["epsilon"] <= 3 and result["dataset"] == "g.csv"
    stored = ResultStore(store).results(method="dplp-ps")
    assert len(stored) == 1 and stored[0].metrics == result["metrics"]


def test_run_errors_exit_cleanly():
    out = runner.invoke(app, ["run", "dplp-ps", "--dataset", "nope", "--no-store"])
    assert out.exit_code == 2 and "unknown dataset" in out.output
    out = runner.invoke(app, ["run", "nope", "--dataset", "usair", "--no-store"])
    assert out.exit_code == 2 and "unknown method" in out.output


def test_parse_overrides():
    assert parse_overrides(["k=3 theta=auto", "private=false"]) == {"k": 3, "theta": "auto", "private": False}


@needs_data
def test_datasets_list_and_info():
    out = runner.invoke(app, ["datasets"])
    assert out.exit_code == 0 and "usair" in out.output and "2,126" in out.output
    out = runner.invoke(app, ["datasets", "info", "usair"])
    assert out.exit_code == 0 and "332" in out.output and "USAir.mat" in out.output


def test_publish_with_out_then_attack_the_file(tmp_path):
    from graphpriv.attacks.protocol import SensitiveLinkProtocol
    from graphpriv.data.files import read_released_graph

    data = random_graph(120, 0.08, seed=5)
    source = tmp_path / "g.txt"
    np.savetxt(source, data.edge_index.numpy().T, fmt="%d")
    for suffix in (".txt", ".npz"):
        out = tmp_path / f"pub{suffix}"
        res = runner.invoke(app, ["run", "dice", "-d", str(source), "--seed", "2", "--no-store",
                                  "--set", "attacks=cn", "--set", "utility=false", "--out", str(out)])
        assert res.exit_code == 0, res.output
        assert "written to" in res.output
        pairs = read_released_graph(out, 120)
        res = runner.invoke(app, ["attack", "-g", str(out), "-d", str(source), "--seed", "2", "-a", "cn,ra",
                                  "--json"])
        assert res.exit_code == 0, res.output
        report = json.loads(res.output)
        assert set(report["attack_auc"]) == {"cn", "ra"} and report["published_edges"] == pairs.shape[1]
        # the same numbers as the library on the same split
        protocol = SensitiveLinkProtocol(__import__("graphpriv.data", fromlist=["load"]).load(str(source)), seed=2)
        direct = protocol.evaluate(pairs, attacks="cn,ra", utility=False)
        assert report["attack_auc"] == pytest.approx(direct.attack_auc)
    # without --json: a bar per phase with counts (the two attacks, then the two utility tasks)
    res = runner.invoke(app, ["attack", "-g", str(out), "-d", str(source), "--seed", "2", "-a", "cn,ra", "--utility"])
    assert res.exit_code == 0, res.output
    bars = [line for line in res.output.splitlines() if "pub.npz" in line and "/2" in line]
    assert any("attacks" in line and "2/2" in line for line in bars), res.output
    assert any("utility" in line and "2/2" in line for line in bars), res.output


def test_attack_and_out_errors(tmp_path):
    data = random_graph(50, 0.2, seed=5)
    source = tmp_path / "g.txt"
    np.savetxt(source, data.edge_index.numpy().T, fmt="%d")
    bad = tmp_path / "bad.txt"
    bad.write_text("0 1\n3 999\n")
    res = runner.invoke(app, ["attack", "-g", str(bad), "-d", str(source), "-a", "cn"])
    assert res.exit_code == 2 and "out of range" in " ".join(res.output.split())
    res = runner.invoke(app, ["attack", "-g", str(tmp_path / "missing.txt"), "-d", str(source)])
    assert res.exit_code == 2 and "does not exist" in " ".join(res.output.split())
    res = runner.invoke(app, ["attack", "-g", str(source), "-d", str(source), "-a", "cn,bogus"])
    assert res.exit_code == 2 and "unknown attack" in " ".join(res.output.split())
    res = runner.invoke(app, ["run", "cn", "-d", str(source), "--no-store", "--out", str(tmp_path / "x.txt")])
    assert res.exit_code == 2 and "cn publishes none" in " ".join(res.output.split())


def test_privdpr_writes_its_synthetic_graph(tmp_path):
    from graphpriv.data.files import read_released_graph

    data = random_graph(90, 0.08, seed=6)
    source = tmp_path / "g.txt"
    np.savetxt(source, data.edge_index.numpy().T, fmt="%d")
    out = tmp_path / "syn.txt"
    res = runner.invoke(app, ["run", "privdpr", "-d", str(source), "--epsilon", "2", "--no-store",
                              "--set", "epochs=1", "--set", "r=8", "--set", "d=4", "--set", "edge_count=public",
                              "--set", "num_edges=40", "--set", "evaluate=false", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert read_released_graph(out, 90).shape == (2, 40)
    assert "node-level" in res.output and "2.0000" in res.output


def test_a_run_shows_a_bar_per_phase_with_counts(tmp_path):
    data = random_graph(120, 0.08, seed=5)
    source = tmp_path / "g.txt"
    np.savetxt(source, data.edge_index.numpy().T, fmt="%d")
    res = runner.invoke(app, ["run", "random-perturb", "-d", str(source), "--no-store", "--set", "attacks=cn,ra",
                              "--set", "utility=false"])
    assert res.exit_code == 0, res.output
    bars = [line for line in res.output.splitlines() if line.startswith("random-perturb ")]
    assert any(" attacks " in line and "2/2" in line for line in bars), res.output
    assert any("baseline attacks" in line and "2/2" in line for line in bars), res.output
    assert any("training" in line and "1/1" in line for line in bars), res.output
