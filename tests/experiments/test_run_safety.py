"""`graphpriv run` checks every input before any work, and loses nothing it computed.

Each test makes the run fail in one way and asserts the one-line error, that no work was done
(the loader or the trainer is never reached), or that everything else was still written.
"""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import graphpriv.experiments.runner as runner_module
from graphpriv.cli import app
from graphpriv.errors import ConfigError, PrivacyError, StoreError, describe_validation_error
from graphpriv.experiments.registry import MAX_EPSILON, check_delta_rule, make_config
from graphpriv.experiments.runner import check_output_path, run_method
from graphpriv.experiments.store import ResultStore
from graphpriv.testing.graphs import random_graph
from tests.conftest import needs_data

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture
def no_loading(monkeypatch):
    """Fail the test if the dataset is loaded: the error must come before any work."""
    def refuse(name):
        raise AssertionError(f"loaded {name} before refusing the run")
    monkeypatch.setattr(runner_module, "load", refuse)


def _graph_file(tmp_path, name="g.txt", nodes=60, p=0.12, seed=3):
    ei = random_graph(nodes, p, seed=seed).edge_index.numpy()
    path = tmp_path / name
    np.savetxt(path, ei[:, ei[0] < ei[1]].T, fmt="%d")
    return path


def _one_error_line(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    assert "Traceback" not in output and "errors.pydantic.dev" not in output, output
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1, output
    return errors[0]


@pytest.mark.parametrize("args, words", [
    (["--seed", "-1"], ["seed", "4294967295"]),
    (["--seed", str(2**63)], ["seed", "4294967295"]),
    (["--epsilon", "1e9"], ["epsilon", "100"]),
    (["--set", "theta=0"], ["theta", "greater than or equal to 1"]),
    (["--set", "nonsense=1"], ["nonsense", "valid:"]),
    (["--accounting", "loose"], ["accounting", "rigorous"]),
    (["--json", "result.yaml"], ["--json", ".json"]),
    (["--out", "pub.txt"], ["--out", "publishes none"]),
])
def test_bad_run_input_is_one_line_before_any_work(tmp_path, no_loading, monkeypatch, args, words):
    monkeypatch.chdir(tmp_path)
    out = runner.invoke(app, ["run", "dplp-ps", "-d", "usair", "--no-store", *args])
    assert out.exit_code == 2, out.output
    line = _one_error_line(out.output)
    assert all(w in line for w in words), line
    assert list(tmp_path.iterdir()) == []  # nothing created


def test_epsilon_for_a_non_private_run_is_refused(no_loading):
    out = runner.invoke(app, ["run", "dplp-ps", "-d", "usair", "--epsilon", "4", "--no-store", "--set", "private=false"])
    assert out.exit_code == 2, out.output
    assert "without privacy" in _one_error_line(out.output)


@pytest.mark.parametrize(("method", "twin"), [("mlp", "dp-mlp"), ("seal", "dplp-ns"), ("cn", "dplp-ps"),
                                              ("dpr", "privdpr"), ("dpar-nodp", "dpar-gm"),
                                              ("rank-nonprivate", "dplp-rank"), ("ppgsl", "edgerand")])
def test_epsilon_for_a_non_private_method_names_its_private_twin(no_loading, method, twin):
    out = runner.invoke(app, ["run", method, "-d", "usair", "--epsilon", "4", "--no-store"])
    assert out.exit_code == 2, out.output
    line = _one_error_line(out.output)
    assert f"{method} is not differentially private" in line and f"graphpriv run {twin} --epsilon 4" in line, line


def test_every_non_private_method_has_a_private_twin_and_every_twin_is_private():
    from graphpriv.experiments.registry import METHODS, is_private, make_config

    for method, spec in METHODS.items():
        private = is_private(method, make_config(method, {}))
        assert private == (spec.private_twin is None), method
        if spec.private_twin is not None:
            assert is_private(spec.private_twin, make_config(spec.private_twin, {})), method


def test_dplp_rank_epsilon_is_a_lists_budget():
    config = make_config("dplp-rank", {"epsilon": 4.0, "top_k": 20})
    assert config.epsilon_p == 0.2 and config.epsilon == 4.0
    assert make_config("dplp-rank", {"epsilon": 3.0}).epsilon_p == pytest.approx(3.0 / 30)
    assert make_config("dplp-rank", {"epsilon": 3.0, "epsilon_p": 0.1}).epsilon_p == pytest.approx(0.1)
    assert make_config("dplp-rank", {}).epsilon is None and make_config("dplp-rank", {}).epsilon_p == 0.1
    with pytest.raises(ConfigError, match="disagree for top_k=30"):
        make_config("rank-exponential", {"epsilon": 4.0, "epsilon_p": 0.1})


def test_dplp_rank_report_states_the_mapping():
    from graphpriv.experiments.runner import run_method
    from graphpriv.testing.graphs import labelled_sbm

    result = run_method("rank-exponential", labelled_sbm(120, 3, p_in=0.2, seed=2), overrides={"epsilon": 3.0,
                                                                                                 "top_k": 10})
    report = result.privacy
    assert report.target_epsilon == pytest.approx(3.0) and report.epsilon == pytest.approx(3.0)
    assert any("epsilon_p = epsilon / K = 0.3 per draw" in note for note in report.notes), report.notes


def test_pydantic_errors_are_one_line_per_field_without_url():
    with pytest.raises(ConfigError) as info:
        make_config("dplp-ps", {"theta": 0, "k": 9, "lr": -1})
    message = str(info.value)
    assert "errors.pydantic.dev" not in message and "validation error" not in message
    lines = message.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("invalid setting for dplp-ps: k: ") and lines[0].count("(got 9)") == 1
    assert lines[1].startswith("theta: ") and "'auto'" in lines[1] and "(got 0)" in lines[1]
    assert lines[2].startswith("lr: ") and "greater than 0" in lines[2]
    assert describe_validation_error(ValueError("plain")) == "plain"


def test_a_users_epsilon_above_the_maximum_is_refused():
    with pytest.raises(ConfigError, match="maximum 100"):
        make_config("lapgraph", {"epsilon": 1e9})
    assert make_config("lapgraph", {"epsilon": MAX_EPSILON}).epsilon == MAX_EPSILON


def test_a_derived_budget_above_the_maximum_is_not_the_users_problem():
    """DPAR's paper accounting spends eps / q' inside (20 / 0.09 = 222): a user's epsilon of 20 runs."""
    from graphpriv.privacy.dpar_accounting import sgd_noise

    noise = sgd_noise(20 / 0.09, 1e-5, sample_rate=0.1, steps=50, group_size=1, max_grad_norm=1.0,
                      accounting="paper")
    assert noise.noise_std > 0


def test_delta_rule_counts_the_units_of_the_input():
    graph = random_graph(50, 0.1, seed=1)  # 50 nodes
    edges = graph.edge_index.size(1) // 2
    node_config = make_config("dp-mlp", {"delta": 1 / 50})
    with pytest.raises(PrivacyError, match=r"1/50 .*nodes.*--allow-large-delta"):
        check_delta_rule("dp-mlp", node_config, graph)
    check_delta_rule("dp-mlp", node_config, graph, allow_large_delta=True)
    check_delta_rule("dp-mlp", make_config("dp-mlp", {"delta": 0.99 / 50}), graph)  # just below
    edge_config = make_config("dplp-ps", {"delta": 1 / edges})
    with pytest.raises(PrivacyError, match=f"1/{edges} .*edges"):
        check_delta_rule("dplp-ps", edge_config, graph)
    check_delta_rule("mlp", make_config("mlp", {"delta": 0.5}), graph)  # no privacy, no rule


@needs_data
def test_delta_rule_on_the_command_line(tmp_path):
    out = runner.invoke(app, ["run", "cn", "-d", "usair", "--no-store"])
    assert out.exit_code == 0  # no delta
    out = runner.invoke(app, ["run", "dplp-ps", "-d", "usair", "--delta", "0.5", "--no-store"])
    assert out.exit_code == 2 and "--allow-large-delta" in _one_error_line(out.output)


@needs_data
def test_readme_example_is_refused_before_training_with_m_and_the_count(monkeypatch):
    import graphpriv.methods.dplp_subgraph as dplp

    def no_extraction(*args, **kwargs):
        raise AssertionError("extracted subgraphs before refusing")
    monkeypatch.setattr(dplp, "extract_subgraphs", no_extraction)
    out = runner.invoke(app, ["run", "dplp-ps", "-d", "usair", "--epsilon", "4", "--set", "k=3", "--set", "theta=10",
                              "--accounting", "paper", "--no-store"])
    assert out.exit_code == 2, out.output
    line = _one_error_line(out.output)
    assert "M=2440" in line and "1017 training examples" in line and "lower theta" in line


def test_output_paths_are_checked(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        check_output_path(blocker / "out.json", option="--json", suffixes=(".json",))
    with pytest.raises(ConfigError, match="is a folder"):
        check_output_path(tmp_path, option="--json", suffixes=("",))
    with pytest.raises(ConfigError, match=r"must end in \.npz or \.txt"):
        check_output_path(tmp_path / "g.png", option="--out", suffixes=(".npz", ".txt"))
    assert check_output_path(tmp_path / "new" / "r.json", option="--json", suffixes=(".json",)).parent.is_dir()


def test_a_corrupt_store_fails_before_any_work(tmp_path, no_loading):
    store = tmp_path / "s.sqlite"
    store.write_bytes(b"this is not a database" * 100)
    out = runner.invoke(app, ["run", "cn", "-d", "usair", "--store", str(store)])
    assert out.exit_code == 2, out.output
    assert str(store.name) in _one_error_line(out.output)


def test_a_store_failure_after_the_run_loses_nothing(tmp_path, monkeypatch):
    graph = _graph_file(tmp_path)
    store = tmp_path / "s.sqlite"

    def broken_append(self, result):
        raise StoreError(f"database {self.path} is locked; retry when the other writer is done")
    monkeypatch.setattr(ResultStore, "append", broken_append)
    out = runner.invoke(app, ["run", "random-perturb", "-d", str(graph), "--set", "ratio=0.2", "--set",
                              "attacks=cn", "--json", str(tmp_path / "r.json"), "--out", str(tmp_path / "pub.txt"),
                              "--store", str(store)])
    assert out.exit_code == 1, out.output
    line = _one_error_line(out.output)
    assert "not stored" in line and "locked" in line
    assert "random-perturb on g.txt" in out.output  # the table was printed
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["method"] == "random-perturb"
    assert (tmp_path / "pub.txt").read_text().startswith("# num_nodes 60")


def test_run_method_attaches_the_result_to_a_store_error(tmp_path, monkeypatch):
    graph = random_graph(40, 0.15, seed=5)
    graph.name = "tiny"

    def broken_append(self, result):
        raise StoreError("disk full")
    monkeypatch.setattr(ResultStore, "append", broken_append)
    with pytest.raises(StoreError) as info:
        run_method("cn", graph, store=tmp_path / "s.sqlite")
    assert info.value.result.method == "cn" and "test_auc" in info.value.result.metrics


def test_normalisations_of_a_user_graph_reach_the_result(tmp_path):
    path = tmp_path / "g.txt"
    ei = random_graph(40, 0.2, seed=4).edge_index.numpy()
    pairs = ei[:, ei[0] < ei[1]]
    np.savetxt(path, np.concatenate([pairs, pairs[:, :3]], axis=1).T, fmt="%d")  # three duplicates
    result = run_method("cn", str(path))
    assert any("duplicate" in change for change in result.info["input_normalisations"])
    clean = tmp_path / "clean.txt"
    np.savetxt(clean, pairs.T, fmt="%d")
    assert run_method("cn", str(clean)).info["input_normalisations"] == []


def test_internal_errors_are_one_line_and_debug_shows_the_traceback(monkeypatch):
    from graphpriv.experiments import registry

    def bug(method):
        raise KeyError("a bug")
    monkeypatch.setattr(registry, "method_spec", bug)
    out = runner.invoke(app, ["run", "cn", "-d", "usair", "--no-store"])
    assert out.exit_code == 3 and "internal error: KeyError" in out.output and "--debug" in out.output
    assert "Traceback" not in out.output
    debug = runner.invoke(app, ["--debug", "run", "cn", "-d", "usair", "--no-store"])
    assert isinstance(debug.exception, KeyError)


def test_accountant_sizes_are_clear_errors():
    for args, word in ((["-m", "0", "-n", "100", "--epochs", "1"], "batch_size"),
                       (["-m", "10", "-n", "0", "--epochs", "1"], "dataset_size"),
                       (["-m", "10", "-n", "100", "--epochs", "-1"], "epochs"),
                       (["-m", "10", "-n", "100", "--steps", "0"], "steps"),
                       (["-m", "10", "-n", "100", "--steps", "3", "--sampling", "foo"], "sampling")):
        out = runner.invoke(app, ["accountant", "-z", "1", *args])
        assert out.exit_code == 2, (args, out.output)
        assert word in _one_error_line(out.output)


def test_pure_dp_mechanisms_are_not_held_to_the_delta_rule():
    from graphpriv.experiments.registry import apply_default_delta

    graph = random_graph(50, 0.1, seed=1)
    edges = graph.edge_index.size(1) // 2
    for method in ("edgerand", "lapgraph", "lapgraph-sgnn"):  # delta only states the report
        assert check_delta_rule(method, make_config(method, {"delta": 1 / edges}), graph) is None
        config = make_config(method, {})  # nor is their default delta lowered on a graph of 120,000 edges
        assert config.delta * 120_000 >= 1 and apply_default_delta(method, config, _circulant(20_000, 6)) == (config, None)
    config = make_config("dplp-ps", {})  # while a DP-SGD method's is
    assert apply_default_delta("dplp-ps", config, _circulant(20_000, 6))[0].delta == 1e-6


def _circulant(n, k):
    """A graph object with n nodes and n k undirected edges (each node to its k next): all the rule reads."""
    import torch
    from torch_geometric.data import Data

    u = torch.arange(n).repeat_interleave(k)
    v = (u + torch.arange(1, k + 1).repeat(n)) % n
    return Data(edge_index=torch.cat([torch.stack([u, v]), torch.stack([v, u])], dim=1), num_nodes=n)


def test_a_large_delta_kept_by_allow_large_delta_is_noted_in_the_result():
    graph = random_graph(50, 0.1, seed=1)
    note = check_delta_rule("dp-mlp", make_config("dp-mlp", {"delta": 1 / 40}), graph, allow_large_delta=True)
    assert "0.025 is at or above 1 / 50 nodes, kept by allow_large_delta" in note
    assert check_delta_rule("dp-mlp", make_config("dp-mlp", {"delta": 1e-3}), graph, allow_large_delta=True) is None


@pytest.mark.parametrize("count, suggestion", [(2995, 1e-4), (10_000, 1e-5), (999, 1e-3), (5, 1e-1), (1, 1e-1),
                                               (19_717, 1e-5), (10**12, 1e-13)])
def test_the_default_delta_is_the_largest_power_of_ten_below_one_over_the_units(count, suggestion):
    from graphpriv.privacy.limits import delta_below

    assert delta_below(count) == suggestion and suggestion * count < 1 <= 10 * suggestion * count


@pytest.mark.parametrize("count", [0, -3, 2.5])
def test_the_default_delta_needs_a_count_of_units(count):
    from graphpriv.privacy.limits import delta_below

    with pytest.raises(PrivacyError, match="integer >= 1"):
        delta_below(count)


def test_a_default_delta_not_below_one_over_the_units_is_lowered_by_the_rule():
    from graphpriv.experiments.registry import apply_default_delta

    graph = random_graph(20_000, 0.0002, seed=2)  # 20,000 nodes: dp-mlp's default 1e-4 is above 1/N
    config, note = apply_default_delta("dp-mlp", make_config("dp-mlp", {"epsilon": 2}), graph)
    assert config.delta == 1e-5 and config.epsilon == 2 and "1 / 20,000 nodes" in note and "0.0001" in note
    check_delta_rule("dp-mlp", config, graph)  # the lowered delta meets the rule
    given = make_config("dp-mlp", {"delta": 1e-4})  # a delta given is kept, and judged by the rule
    assert apply_default_delta("dp-mlp", given, graph) == (given, None)
    with pytest.raises(PrivacyError, match="--delta 1e-05 or smaller"):
        check_delta_rule("dp-mlp", given, graph)
    small = random_graph(50, 0.1, seed=1)  # below the rule already: unchanged
    default = make_config("dp-mlp", {})
    assert apply_default_delta("dp-mlp", default, small) == (default, None)
    assert apply_default_delta("cn", make_config("cn", {}), graph)[1] is None  # no delta, no rule


def test_the_rule_reads_a_registry_dataset_size_without_loading_it(no_loading):
    from graphpriv.data.registry import REGISTRY
    from graphpriv.experiments.registry import apply_default_delta, privacy_units

    assert privacy_units("dplp-ps", "pubmed") == ("edge", REGISTRY["pubmed"].num_edges)
    assert privacy_units("dp-mlp", "pubmed") == ("node", 19_717)
    assert privacy_units("dp-mlp", "some/file.txt") is None
    config, note = apply_default_delta("dp-mlp", make_config("dp-mlp", {}), "pubmed")
    assert config.delta == 1e-5 and "19,717 nodes" in note


def test_a_run_and_its_sweep_cell_agree_on_the_lowered_delta(tmp_path):
    from graphpriv.experiments.runner import prepare_run
    from graphpriv.experiments.sweep import make_run

    path = tmp_path / "ring.txt"  # 12,000 nodes and edges: dp-mlp's 1e-4 is lowered, dplp-ps's 1e-5 kept
    nodes = np.arange(12_000)
    np.savetxt(path, np.stack([nodes, (nodes + 1) % nodes.size], axis=1), fmt="%d")
    lowered = {}
    for method in ("dp-mlp", "dplp-ps"):
        cell = make_run(method, str(path), 0, {"epsilon": 2})
        run = prepare_run(method, path, overrides={"epsilon": 2})
        assert cell.config_dict["delta"] == run.config.delta  # the same config hash as the stored result
        lowered[method] = run.delta_note is not None
    assert lowered == {"dp-mlp": True, "dplp-ps": False}
    assert make_run("dp-mlp", "pubmed", 0, {}).config_dict["delta"] == 1e-5  # a registry id: its stated size


def test_a_sweep_crosses_epsilons_with_private_variants_only():
    from graphpriv.experiments.sweep import SweepSpec, check_sweep

    spec = SweepSpec(methods=["dplp-ps"], datasets=["usair"], epsilons=[1, 2], seeds=1,
                     overrides=[{}, {"private": False}])
    check = check_sweep(spec, load_datasets=False)
    assert check.problems == []
    cells = sorted((r.config_dict["private"], r.config_dict["epsilon"]) for r in check.runs)
    assert cells == [(False, 4.0), (True, 1.0), (True, 2.0)]  # the non-private variant once, at the default


def test_the_paper_tables_keep_their_deltas(monkeypatch, tmp_path):
    from graphpriv.experiments import reproduce as reproduce_module
    from graphpriv.experiments.grid import load_grid

    seen = {}

    def fake_run_runs(runs, store, **kwargs):
        seen.update(kwargs)
        raise RuntimeError("stop")
    monkeypatch.setattr(reproduce_module, "run_runs", fake_run_runs)
    grid = load_grid("dpar-table1")
    assert grid.allow_large_delta and grid.rows[2].per_dataset["cora_ml"] == {"delta": 2e-3}
    with pytest.raises(RuntimeError, match="stop"):
        reproduce_module.reproduce(grid, store=tmp_path / "s.sqlite", docs=tmp_path)
    assert seen["allow_large_delta"] is True


def test_the_report_never_pools_two_deltas():
    from graphpriv.experiments.report import variant
    from graphpriv.methods.base import Result

    def result(delta):
        config = make_config("dp-mlp", {"delta": delta}).model_dump(mode="json")
        return Result(method="dp-mlp", dataset="g", seed=0, config=config, metrics={"accuracy": 0.5})
    assert variant(result(1e-4)) == "" and variant(result(2e-3)) == "delta=0.002"


def test_run_saves_the_fitted_estimator(tmp_path):
    import subprocess
    import sys

    import torch

    graph = _graph_file(tmp_path)
    out = runner.invoke(app, ["run", "dplp-ps", "-d", str(graph), "--set", "epochs=1", "--set", "batch_size=16",
                              "--no-store", "--save", str(tmp_path / "m.pt")])
    assert out.exit_code == 0, out.output
    # a fresh process, which has not imported the estimator's module, loads it by the base class
    code = ("import torch; from graphpriv import Estimator; e = Estimator.load(%r); "
            "print(type(e).__name__, e.privacy_report_.unit, e.predict_proba(torch.tensor([[0], [1]])).shape)")
    proc = subprocess.run([sys.executable, "-c", code % str(tmp_path / "m.pt")], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["DPLPLinkPredictor", "edge", "torch.Size([1])"]
    bad = runner.invoke(app, ["run", "cn", "-d", str(graph), "--no-store", "--save", str(tmp_path / "m.json")])
    assert bad.exit_code == 2 and "--save" in _one_error_line(bad.output)
    assert torch.load(tmp_path / "m.pt", weights_only=True)["module"] == "graphpriv.methods.dplp_subgraph"


def test_a_non_private_run_keeps_its_unused_delta():
    from graphpriv.experiments.registry import apply_default_delta

    graph = random_graph(20_000, 0.0002, seed=2)
    config = make_config("dp-mlp", {"private": False})
    assert apply_default_delta("dp-mlp", config, graph) == (config, None)


@needs_data
def test_a_dry_run_checks_the_delta_a_run_will_use():
    from graphpriv.experiments.sweep import SweepSpec, check_sweep

    check = check_sweep(SweepSpec(methods=["dp-mlp"], datasets=["pubmed"], epsilons=[2], seeds=1,
                                  allow_large_delta=False))  # 19,717 nodes: the default 1e-4 becomes 1e-5
    assert check.problems == [] and [r.config_dict["delta"] for r in check.runs] == [1e-5]
