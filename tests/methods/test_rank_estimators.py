"""DPLPRanker (DPLP-rank and its baselines as one estimator): recommend, the per-query ledger, files,
twins, the privacy report against the protocol, and bad input."""

import numpy as np
import pytest
import torch

from graphpriv.errors import ConfigError, DatasetError, ModelFileError, NotFittedError
from graphpriv.evaluation.ranking import RANK_VARIANTS, ranking_metrics
from graphpriv.experiments.registry import make_config
from graphpriv.experiments.runner import run_method
from graphpriv.methods.dplp_rank import VARIANTS, DPLPRanker
from graphpriv.methods.estimator import Estimator
from graphpriv.ranking.protocol import ranking_split
from graphpriv.testing.graphs import random_graph

pytestmark = pytest.mark.usefixtures("one_thread")

SEED = 5
SMALL = {"lin_epochs": 1, "umnn_epochs": 1, "top_k": 4, "max_negatives": 30}


@pytest.fixture(scope="module")
def graph():
    return random_graph(60, 0.2, seed=2)


def _overrides(method: str, **extra) -> dict:
    keep = SMALL if method.startswith("dplp") else {"top_k": SMALL["top_k"]}
    return {**keep, **extra}


def _ranker(method: str, **extra) -> DPLPRanker:
    transform, noise = RANK_VARIANTS[method]
    params = make_config(method, _overrides(method, **extra)).model_dump()
    return DPLPRanker(transform=transform, noise=noise, random_state=SEED, **params)


@pytest.fixture(scope="module")
def fitted(graph):
    return {m: _ranker(m).fit(graph) for m in RANK_VARIANTS}


def _one_line(err) -> str:
    assert "\n" not in str(err.value)
    return str(err.value)


def test_variants_and_method_ids_agree():
    assert set(RANK_VARIANTS.values()) == set(VARIANTS)


@pytest.mark.parametrize("method", sorted(RANK_VARIANTS))
def test_recommend_returns_k_candidates_per_query(graph, method):
    est = _ranker(method).fit(graph)
    queries = est.queries_[:6]
    rec = est.recommend(queries, k=3)
    assert rec.dtype == torch.long and rec.shape == (6, 3)
    adj = est.graph_
    for q, row in zip(queries, rec.numpy()):
        neighbours = set(adj.indices[adj.indptr[q]:adj.indptr[q + 1]].tolist())
        assert len(set(row.tolist())) == 3 and q not in row and not neighbours & set(row.tolist())
    assert est.recommend(queries).shape == (6, SMALL["top_k"])  # k defaults to top_k


@pytest.mark.parametrize("method", sorted(RANK_VARIANTS))
def test_report_after_one_list_is_the_protocols_and_grows_per_query(graph, method):
    est = _ranker(method).fit(graph)
    first = est.privacy_report_
    est.recommend(est.queries_[:5], k=SMALL["top_k"])
    want = run_method(method, graph, seed=SEED, overrides=_overrides(method)).privacy
    got = est.privacy_report_
    if want is None:
        assert got is None and first is None and est.privacy_statement_.startswith("non-private")
        return
    assert first.epsilon == 0.0 and not first.phases
    # fitted on the graph, the ranker drew the protected set itself, and its report says so
    assert got.notes[0].startswith("protected pairs: a random sigma_prot = 0.3 share of the edges")
    assert not any(n.startswith("protected pairs") for n in want.notes)  # the protocol fits its own split
    assert {**got.model_dump(), "notes": got.notes[1:]} == want.model_dump()
    est.recommend(est.queries_[5:9], k=SMALL["top_k"])  # other queries: other relations, nothing composes
    assert est.privacy_report_.epsilon == pytest.approx(want.epsilon)
    est.recommend(est.queries_[:2], k=2)  # the same queries again: their lists compose
    again = est.privacy_report_
    assert again.epsilon == pytest.approx(want.epsilon + 2 * est.epsilon_p)
    assert again.phases[0].steps == SMALL["top_k"] + 2 and again.target_epsilon == want.target_epsilon
    assert est.draws_[est.queries_[0]] == SMALL["top_k"] + 2 and est.draws_[est.queries_[6]] == SMALL["top_k"]


@pytest.mark.parametrize("method", ["dplp-rank-lin", "rank-laplace"])
def test_the_report_is_the_ledgers_as_built(graph, method):
    # the report is built by ledger_.report(...) and not edited afterwards: the event lines are
    # the ledger's labels, spent with the draws (and again after a file round trip)
    est = _ranker(method).fit(graph)
    est.recommend(est.queries_[:3], k=3)
    est.recommend(est.queries_[:1], k=2)
    report = est.privacy_report_
    eps = est.epsilon_p
    assert report == est.ledger_.report(target_epsilon=SMALL["top_k"] * eps, notes=report.notes)
    name = ("exponential mechanism (Gumbel top-K): " if est.noise == "gumbel"
            else f"one-shot {est.noise} noise, claimed ")
    assert report.phases[0].events == [f"{name}PureDpEvent(epsilon={eps:g}) x 5"]
    assert report.neighboring_relation == "REPLACE_ONE" and report.unit == "protected_pair"


def test_fit_on_the_split_and_one_rank_reproduce_the_protocol(graph):
    method = "dplp-rank"
    config = make_config(method, _overrides(method))
    split = ranking_split(graph, sigma_prot=config.sigma_prot, query_fraction=config.query_fraction,
                          holdout=config.holdout, seed=SEED)
    est = _ranker(method).fit(split)
    order, noisy = est._rank(split.queries, (split.test_ptr, split.test_nodes), k=config.top_k)
    result = run_method(method, graph, seed=SEED, overrides=_overrides(method))
    assert ranking_metrics(split, order, noisy, config.top_k) == result.metrics
    assert est.info_ == {k: result.info[k] for k in est.info_}  # the runner adds input facts beside them
    assert est.privacy_report_.model_dump() == result.privacy.model_dump()


@pytest.mark.parametrize("method,extra", [("dplp-rank", {}), ("dplp-rank-lin", {"accounting": "paper"}),
                                          ("rank-staircase", {}), ("rank-nonprivate", {"base": "gcn", "embedding_dim": 8})])
def test_save_load_and_twin_give_the_same_lists(graph, tmp_path, method, extra):
    est = _ranker(method, **extra).fit(graph)
    twin = DPLPRanker(**est.get_params()).fit(graph)
    queries = est.queries_[:5]
    loaded = Estimator.load(est.save(tmp_path / "r.pt"))
    assert isinstance(loaded, DPLPRanker) and loaded.get_params() == est.get_params()
    for _ in range(2):  # the generator's state travels: the second lists agree too
        rec = est.recommend(queries, k=3)
        assert torch.equal(rec, loaded.recommend(queries, k=3)) and torch.equal(rec, twin.recommend(queries, k=3))
    again = DPLPRanker.load(est.save(tmp_path / "r2.pt"))  # after two calls: draws and ledger too
    assert np.array_equal(again.draws_, est.draws_)
    assert (again.privacy_report_ is None) == (est.privacy_report_ is None)
    if est.privacy_report_ is not None:
        assert again.privacy_report_.model_dump() == est.privacy_report_.model_dump()
    assert torch.equal(again.recommend(queries, k=2), est.recommend(queries, k=2))


def test_get_params_carries_the_variant_outside_the_config():
    est = DPLPRanker(transform="power", noise="gumbel", random_state=4, top_k=7)
    params = est.get_params()
    assert params["transform"] == "power" and params["noise"] == "gumbel" and params["random_state"] == 4
    assert "transform" not in est.config.model_dump() and "noise" not in est.config.model_dump()
    est.set_params(transform="none", noise="laplace")
    assert (est.transform, est.noise) == ("none", "laplace")


def test_not_fitted():
    est = DPLPRanker()
    with pytest.raises(NotFittedError):
        est.recommend([0], k=1)
    with pytest.raises(NotFittedError):
        est.privacy_report_  # noqa: B018
    with pytest.raises(NotFittedError):
        est._rank([0], ([0, 1], [1]), k=1)


def test_the_whole_noisy_ranking_is_not_public(fitted):
    """Every candidate's noisy utility is not covered by the k draws charged: only recommend's top-k
    ids are a release; the protocol's whole ranking is internal."""
    assert not hasattr(DPLPRanker, "rank") and hasattr(DPLPRanker, "_rank")
    est = fitted["dplp-rank"]
    assert "not a release" in DPLPRanker._rank.__doc__
    rec = est.recommend(est.queries_[:2], k=2)
    assert isinstance(rec, torch.Tensor) and rec.dtype == torch.long  # ids, no scores


@pytest.mark.parametrize("transform,noise", [("umnn", "laplace"), ("power", "none"), ("umnn", "staircase"),
                                             ("none", "foo"), ("cubic", "gumbel")])
def test_refused_variants(transform, noise):
    with pytest.raises(ConfigError) as err:
        DPLPRanker(transform=transform, noise=noise)
    _one_line(err)
    est = DPLPRanker()
    with pytest.raises(ConfigError):
        est.set_params(transform=transform, noise=noise, top_k=3)
    assert (est.transform, est.noise, est.top_k) == ("umnn", "gumbel", 30)  # nothing changed


def test_bad_recommend_input(fitted):
    est = fitted["rank-exponential"]
    q, before = int(est.queries_[0]), est.draws_.copy()
    with pytest.raises(ConfigError, match=f"above the .* candidates of query {q}") as err:
        est.recommend([q], k=est.num_nodes_)
    _one_line(err)
    with pytest.raises(DatasetError, match="outside \\[0, 60\\)") as err:
        est.recommend([q, 60], k=2)
    _one_line(err)
    with pytest.raises(DatasetError) as err:
        est.recommend([[q]], k=2)
    _one_line(err)
    for bad in ([[0], [1, 2]], None, [0.5], [True]):  # ragged, missing, not integer ids
        with pytest.raises(DatasetError, match="query_nodes") as err:
            est.recommend(bad, k=1)
        _one_line(err)
    other = [(q + 1) % 60, (q + 2) % 60]
    for bad in (([[0], [1, 2]], other), (["a", "b"], other), ([0, 2], [[other[0]], other]),
                ([0, 2], None), ([0, 2], [1.5, 2.5])):  # ragged or malformed ptr / nodes
        with pytest.raises(DatasetError, match="candidates") as err:
            est.recommend([q], k=1, candidates=bad)
        _one_line(err)
    with pytest.raises(ConfigError):
        est.recommend([q], k=0)
    with pytest.raises(DatasetError, match="the query itself"):
        est.recommend([q], k=1, candidates=([0, 2], [q, (q + 1) % 60]))
    with pytest.raises(DatasetError, match="repeat"):
        est.recommend([q], k=1, candidates=([0, 2], [(q + 1) % 60] * 2))
    with pytest.raises(DatasetError, match="ptr"):
        est.recommend([q], k=1, candidates=([0, 3], [1, 2]))
    assert np.array_equal(est.draws_, before)  # refused calls spend nothing


def test_explicit_candidates(fitted):
    est = fitted["rank-nonprivate"]
    queries = est.queries_[:2]
    others = [n for n in range(60) if n not in queries.tolist()]
    ptr, nodes = torch.tensor([0, 5, 12]), torch.tensor(others[:5] + others[10:17])
    rec = est.recommend(queries, k=5, candidates=(ptr, nodes))
    assert set(rec[0].tolist()) == set(others[:5]) and set(rec[1].tolist()) <= set(others[10:17])
    assert est.recommend([], k=3).shape == (0, 3)


def test_the_protocol_attaches_its_ranker(graph, tmp_path):
    result = run_method("rank-laplace", graph, seed=SEED, overrides=_overrides("rank-laplace"))
    ranker = DPLPRanker.load(result.estimator.save(tmp_path / "r.pt"))
    assert ranker.noise == "laplace" and ranker.privacy_report_.model_dump() == result.privacy.model_dump()


def test_fit_on_a_split_reports_no_drawn_protected_set(graph):
    config = make_config("rank-exponential", _overrides("rank-exponential"))
    split = ranking_split(graph, sigma_prot=config.sigma_prot, query_fraction=config.query_fraction,
                          holdout=config.holdout, seed=SEED)
    on_split, on_graph = _ranker("rank-exponential").fit(split), _ranker("rank-exponential").fit(graph)
    assert not any("protected pairs" in n for n in on_split.privacy_report_.notes)
    note = on_graph.privacy_report_.notes[0]
    assert "random sigma_prot = 0.3 share" in note and "random_state" in note
    assert f"({split.protected.shape[1]} edges)" in note  # the same seed draws the same split
    for doc in (DPLPRanker.__doc__, DPLPRanker.fit.__doc__):
        assert "a random sigma_prot share of the edges" in " ".join(doc.replace("``", "").split())
    assert "random_state=None" in DPLPRanker.fit.__doc__


def test_refit_replays_and_set_params_forgets(graph):
    est = _ranker("rank-exponential").fit(graph)
    queries = est.queries_[:4]
    first = est.recommend(queries, k=3)
    est.recommend(queries, k=3)
    est.fit(graph)  # same random_state: a fresh generator, the same noise, no draws, an empty ledger
    assert not est.draws_.any() and est.privacy_report_.epsilon == 0.0
    assert torch.equal(est.recommend(queries, k=3), first)
    est.set_params(transform="none", noise="laplace", top_k=3)
    assert not est.is_fitted
    assert not {"_scorer", "_rng", "_notes", "_is_fitted"} & set(vars(est))
    assert not [k for k in vars(est) if k.endswith("_")]
    with pytest.raises(NotFittedError):
        est.recommend(queries, k=3)
    with pytest.raises(NotFittedError):
        est.draws_  # noqa: B018
    twin = DPLPRanker(**est.get_params()).fit(graph)
    est.fit(graph)
    assert est.noise_scale_ == twin.noise_scale_ and est.privacy_report_.notes == twin.privacy_report_.notes
    assert torch.equal(est.recommend(queries, k=3), twin.recommend(queries, k=3))


def test_the_docstring_says_a_saved_ranker_holds_the_graph():
    doc = " ".join(DPLPRanker.__doc__.split())
    assert "protected edges included" in doc and "keep the file as private as the graph" in doc


def _damage(path, edit):
    blob = torch.load(path, weights_only=True)
    edit(blob["state"])
    torch.save(blob, path)
    return path


@pytest.mark.parametrize("method,edit,match", [
    ("dplp-rank", lambda s: s["transform"].popitem(), "transform does not match"),
    ("dplp-rank-lin", lambda s: s["transform"].update(extra=torch.zeros(2)), "transform does not match"),
    ("rank-laplace", lambda s: s.update(draws=s["draws"][:-1]), "draws"),
    ("rank-laplace", lambda s: s.update(draws=s["draws"].double()), "draws"),
    ("rank-laplace", lambda s: s["indices"].__setitem__(0, 60), "graph indices"),
    ("rank-laplace", lambda s: s["queries"].__setitem__(0, -1), "queries"),
    ("rank-laplace", lambda s: s.update(indptr=s["indptr"][:-1]), "CSR"),
    ("rank-laplace", lambda s: s.update(num_nodes=0), "num_nodes"),
    ("rank-laplace", lambda s: s.update(queries=3), "queries"),
    ("rank-laplace", lambda s: s.update(f_range=[0.0]), "f_range"),
    ("rank-laplace", lambda s: s.update(rng="{"), "rng|Expecting"),
    ("rank-nonprivate", lambda s: s["classifier"].update(z=s["classifier"]["z"][:-1]), "classifier"),
])
def test_damaged_files_are_model_file_errors(graph, tmp_path, method, edit, match):
    extra = {"base": "gcn", "embedding_dim": 8} if method == "rank-nonprivate" else {}
    est = _ranker(method, **extra).fit(graph)
    path = _damage(est.save(tmp_path / "r.pt"), edit)
    with pytest.raises(ModelFileError, match="damaged") as err:
        DPLPRanker.load(path)
    assert err.match(match)
    _one_line(err)


def test_paper_accounting_says_when_its_scale_is_no_gumbel_scale(graph, monkeypatch):
    """The reference code's scale 2 f(1) / eps_p is undefined when the trained f(1) <= 0 (the draw
    is mirrored): the privacy report's notes say so."""
    from graphpriv.methods import dplp_rank

    monkeypatch.setattr(dplp_rank, "noise_scale", lambda f, eps, accounting: torch.tensor(-0.3))
    est = _ranker("dplp-rank-lin", accounting="paper", lin_epochs=1).fit(graph)
    assert any("not a Gumbel scale" in note for note in est.privacy_report_.notes)
