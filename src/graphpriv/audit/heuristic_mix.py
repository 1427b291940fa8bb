"""Edge-level canary audit of the private heuristic mixture
(:class:`~graphpriv.methods.heuristic_mix.HeuristicMixLinkPredictor`): the exponential mechanism's
choice of a direction.

Sources: Steinke, Nasr, Jagielski, "Privacy auditing with one (1) training run" (NeurIPS 2023),
Theorem 3.1 (the bound, pure DP, a guesser that may abstain) and Sec. 7 (white-box canaries);
Jagielski, Ullman, Oprea, "Auditing differentially private machine learning" (NeurIPS 2020) for
the Clopper–Pearson bound.

The release is one index among ``angles`` directions: one draw carries a few bits, so each canary
gets a draw of its own. Two attacks:

- **Utility canaries (white box, the verdict's).** One fit on ``data``; after its own draw, the
  fit hands its utilities and its mechanism (the same epsilon, sensitivity Delta U, generator and
  ``noise_scale``) to m canaries (:class:`~graphpriv.privacy.hooks.UtilityCanaries`). Canary i is
  a worst-case neighbour: the utility of one target direction raised by Delta U and every other
  one lowered by Delta U (a neighbouring graph may move every utility by up to Delta U), inserted
  with probability 1/2, and gets one draw. The target is chosen from the utilities before the
  coin: the direction whose utility is nearest to Delta U below the best. The guess is "inserted" iff the draw is the target. Each
  draw depends on the data and its own canary only, so the m draws are epsilon-DP with respect to
  each canary. A correct mechanism moves the target's probability by at most e^epsilon; with the
  noise 100 times too small the target wins exactly when it is raised. What this tests is the
  noise against the sensitivity; the sensitivity itself is checked against brute force
  (tests/privacy/test_influence.py).
- **Canary edges (black box, ``edge_canaries`` > 0).** m' fits, each with one canary edge of its
  own (its own ``random_state``), inserted with probability 1/2. The canary is chosen before the
  coin with the estimator's own ``fit`` run without noise: among :data:`CANDIDATES` random
  non-edges, the first whose insertion changes the noiseless choice (o0 left out, o1 inserted); a
  run with none abstains. The guess is "inserted" when the real fit's choice is o1, "not
  inserted" when it is o0. Real edges move the utilities far less than Delta U (the bound adds the
  worst case of every term), so this attack is weak; it exercises the data path end to end.

Power. r correct guesses out of r show about ln(r / 3) at 95%: the default 1,000 utility
canaries catch a fault at any claim below about 5.8. The claim is the fit's
``privacy_report_.epsilon``, pure.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch_geometric.data import Data

from graphpriv.audit.fitting import audited_copy, check_audit_args, check_enough_guesses, claim, dataset_name, describe
from graphpriv.audit.statistics import AuditReport, audit_from_scores
from graphpriv.data.graph import undirected_pairs
from graphpriv.data.release import PublishedGraph
from graphpriv.data.splits import sample_non_edges
from graphpriv.data.validation import check_data
from graphpriv.errors import ConfigError
from graphpriv.methods.heuristic_mix import HeuristicMixLinkPredictor
from graphpriv.privacy.hooks import AuditHook
from graphpriv.progress import Progress, no_progress

__all__ = ["CANDIDATES", "ShiftCanaries", "audit_heuristic_mix"]

#: Random non-edges tried per run for a canary that changes the noiseless choice.
CANDIDATES = 24


def _graph(pairs: np.ndarray, num_nodes: int) -> Data:
    """The undirected pairs as the training graph a fit takes (every edge in both directions)."""
    return PublishedGraph(pairs, num_nodes).to_data()


class ShiftCanaries:
    """m utility canaries (:class:`~graphpriv.privacy.hooks.UtilityCanaries`), their coins given.

    Attributes (after ``draw``): ``targets`` ``[m]`` the raised direction of each, ``chosen`` ``[m]``
    each canary's draw.
    """

    def __init__(self, inserted: np.ndarray) -> None:
        self.inserted = np.asarray(inserted, dtype=bool)
        self.targets = np.full(self.inserted.size, -1)
        self.chosen = np.full(self.inserted.size, -1)

    def draw(self, utility: torch.Tensor, sensitivity: float, mechanism: Any) -> None:
        """One draw per canary: ``mechanism`` on the utilities, the target's raised by ``sensitivity``
        and every other lowered by it when the canary is inserted."""
        values = utility.double()
        best = int(torch.argmax(values))
        gap = (values[best] - values - sensitivity).abs()
        gap[best] = math.inf
        target = int(torch.argmin(gap))  # nearest to Delta U below the best (ties: the first)
        for i, inserted in enumerate(self.inserted):
            shifted = values.clone()
            if inserted:  # the worst neighbour: the target up by Delta U, every other direction down by it
                shifted -= sensitivity
                shifted[target] += 2 * sensitivity
            self.targets[i], self.chosen[i] = target, mechanism(shifted)


def _edge_canary_scores(estimator: HeuristicMixLinkPredictor, pairs: np.ndarray, n: int, count: int, seed: int,
                        inserted: np.ndarray, hook: AuditHook, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """The black-box attack's scores (+1 / -1 / 0) of ``count`` fits, and how many found a canary."""
    noiseless = AuditHook(noise_scale=0.0)
    scores, found = np.zeros(count), 0
    for i in range(count):
        run_seed = seed * 100003 + i
        candidates = sample_non_edges(n, CANDIDATES, forbidden=pairs, rng=rng)
        left_out = audited_copy(estimator, run_seed).fit(_graph(pairs, n), audit_hook=noiseless).choice_
        for j in range(candidates.shape[1]):
            with_canary = np.concatenate([pairs, candidates[:, j:j + 1]], axis=1)
            moved = audited_copy(estimator, run_seed).fit(_graph(with_canary, n), audit_hook=noiseless).choice_
            if moved != left_out:
                found += 1
                graph = with_canary if inserted[i] else pairs
                choice = audited_copy(estimator, run_seed).fit(_graph(graph, n), audit_hook=hook).choice_
                scores[i] = 1.0 if choice == moved else -1.0 if choice == left_out else 0.0
                break
    return scores, found


def audit_heuristic_mix(estimator: HeuristicMixLinkPredictor, data: Data, *, canaries: int = 1000, seed: int = 0,
                        noise_scale: float = 1.0, confidence: float = 0.95, name: str | None = None,
                        progress: Progress = no_progress, edge_canaries: int = 0) -> list[AuditReport]:
    """Audit the direction chosen by ``estimator`` on ``data`` (module docstring).

    Args:
        estimator: the mixture whose hyperparameters define the fits (fitted or not; copies with
            ``random_state = seed`` are fitted). data: the graph (``edge_index``, ``num_nodes``),
            the training graph of every fit.
        canaries: m utility canaries (one fit, m draws). seed: coins, canaries and fits (the
            black-box fit i: ``seed * 100003 + i``). noise_scale: a deliberate fault on the Gumbel
            scale (1.0 audits the real mechanism, 0 the argmax). confidence: of the bounds.
            name: the report's ``method``. progress: ``progress(i, total)`` after each fit.
        edge_canaries: m', black-box fits with one canary edge each (0: none; each costs up to
            :data:`CANDIDATES` + 2 fits).

    Returns:
        ``[AuditReport]``: the utility canaries', then the canary edges' when ``edge_canaries`` > 0
        (unit ``edge``).

    Raises:
        ConfigError: another estimator class, fewer than 2 canaries (or 1 edge canary), a bad
            noise_scale or seed.
        DatasetError: ``data`` is not a graph, or (edge canaries) has fewer than :data:`CANDIDATES`
            non-edges.
    """
    if type(estimator) is not HeuristicMixLinkPredictor:
        raise ConfigError(f"audit_heuristic_mix audits HeuristicMixLinkPredictor (got {type(estimator).__name__})")
    check_audit_args(canaries, noise_scale, confidence)
    check_enough_guesses(lambda count: count, canaries, confidence)
    if isinstance(edge_canaries, bool) or not isinstance(edge_canaries, int) or edge_canaries < 0:
        raise ConfigError(f"edge_canaries must be an integer >= 0 (got {edge_canaries!r})")
    data = check_data(data, method="audit_heuristic_mix")
    n = int(data.num_nodes)
    pairs = undirected_pairs(data.edge_index)
    rng = np.random.default_rng([seed, 2027])
    shifts = ShiftCanaries(rng.random(canaries) < 0.5)
    fitted = audited_copy(estimator, seed).fit(_graph(pairs, n), audit_hook=AuditHook(noise_scale=noise_scale,
                                                                                       canaries=shifts))
    progress(1, 1 + edge_canaries)
    claimed, accounting = claim(fitted, None, noise_scale)
    common = {"method": describe(estimator, name), "dataset": dataset_name(data), "unit": "edge",
              "claimed_epsilon": claimed, "accounting": accounting, "confidence": confidence}
    hit = np.where(shifts.chosen == shifts.targets, 1.0, -1.0)
    note = (f"{canaries} utility canaries (white box), each a worst-case neighbour: one direction's utility raised "
            f"by the sensitivity {fitted.info_['sensitivity']:.4g} and the others lowered by it, inserted with "
            "probability 1/2, one draw of the fit's own mechanism each; the guess is 'inserted' iff the draw is that "
            "direction")
    reports = [audit_from_scores(hit, shifts.inserted, attack="utility canaries: the raised direction is drawn",
                                 threshold=0.0, notes=[note], **common)]
    if edge_canaries:
        check_enough_guesses(lambda count: count, edge_canaries, confidence, what="edge")
        coins = rng.random(edge_canaries) < 0.5
        hook = AuditHook(noise_scale=noise_scale)
        scores, found = _edge_canary_scores(estimator, pairs, n, edge_canaries, seed, coins, hook, rng)
        progress(1 + edge_canaries, 1 + edge_canaries)
        notes = [(f"{edge_canaries} fits with one canary edge each (inserted with probability 1/2); {found} found, "
                  f"among {CANDIDATES} random non-edges, a canary that changes the noiseless choice (the others "
                  "abstain); the guess is 'inserted' when the choice is the canary's argmax, 'not inserted' when it "
                  "is the argmax without it")]
        reports.append(audit_from_scores(scores, coins, attack="canary edges: the choice moves to the canary's argmax",
                                         threshold=0.0, notes=notes, **common))
    return reports
