"""The attack suite: ids, construction, and attack AUC.

Source: Wu, Yang, Han, Wang, Wu, "Learning-based Privacy-Preserving Graph Publishing Against
Sensitive Link Inference Attacks" (IEEE TKDE 2025), Sec. V-A.2: CN, AA, RA, SEAL, N2V+sim, GAE+sim,
N2V+ML and GAE+ML.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Annotated

import numpy as np
from pydantic import AfterValidator
from sklearn.metrics import roc_auc_score

from graphpriv.attacks.base import LinkAttack
from graphpriv.attacks.embedding import (
    GAEClassifier,
    GAESimilarity,
    Node2VecClassifier,
    Node2VecSimilarity,
)
from graphpriv.attacks.graph import PublishedGraph
from graphpriv.attacks.heuristics import (
    AdamicAdarAttack,
    CommonNeighboursAttack,
    ResourceAllocationAttack,
)
from graphpriv.attacks.seal import SEALAttack
from graphpriv.errors import ConfigError

__all__ = ["ATTACKS", "AttackSelection", "attack", "attack_auc", "check_attack_selection", "make_attack", "resolve_attacks"]

ATTACKS: dict[str, Callable[..., LinkAttack]] = {
    "cn": CommonNeighboursAttack,
    "aa": AdamicAdarAttack,
    "ra": ResourceAllocationAttack,
    "seal": SEALAttack,
    "n2v-sim": Node2VecSimilarity,
    "gae-sim": GAESimilarity,
    "n2v-ml": Node2VecClassifier,
    "gae-ml": GAEClassifier,
}


def check_attack_selection(value: str) -> str:
    """A config's ``attacks`` setting checked: ``'none'``, ``'all'`` or comma-separated attack ids.

    Args:
        value: the setting as written.

    Returns:
        ``value`` unchanged.

    Raises:
        ConfigError: an unknown id (the message lists the known ones) or an empty selection.
    """
    if value.strip() != "none":
        resolve_attacks(value)
    return value


#: The ``attacks`` setting of a config (pydantic): a string checked by :func:`check_attack_selection`.
AttackSelection = Annotated[str, AfterValidator(check_attack_selection)]


def resolve_attacks(names: str | Iterable[str]) -> list[str]:
    """Attack ids from ``"all"``, a comma-separated string or a list, in suite order.

    Raises:
        ConfigError: an unknown id (the message lists the known ones) or an empty selection.
    """
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    names = list(names)
    if names == ["all"]:
        return list(ATTACKS)
    unknown = [n for n in names if n not in ATTACKS]
    if unknown:
        raise ConfigError(f"unknown attack(s) {', '.join(unknown)}; known: all, {', '.join(ATTACKS)}")
    if not names:
        raise ConfigError("no attack selected; use 'all' or ids from " + ", ".join(ATTACKS))
    return [n for n in ATTACKS if n in names]


def make_attack(name: str, *, seed: int = 0, **kwargs) -> LinkAttack:
    """A fresh, unfitted attack by id (``cn``, ``aa``, ``ra``, ``seal``, ``n2v-sim``, ``gae-sim``,
    ``n2v-ml``, ``gae-ml``); ``kwargs`` go to its constructor.

    Raises:
        ConfigError: unknown id.
    """
    return ATTACKS[resolve_attacks([name])[0]](seed=seed, **kwargs)


def attack_auc(attack: LinkAttack, graph: PublishedGraph, positives: np.ndarray,
               negatives: np.ndarray) -> tuple[float, float]:
    """Fit ``attack`` on ``graph`` and return (ROC-AUC of positives vs negatives, seconds).

    Args:
        positives: ``[2, P]`` hidden sensitive links. negatives: ``[2, Q]`` non-edges.

    Returns:
        ``(auc, seconds)``; 0.5 is guessing.
    """
    start = time.perf_counter()
    attack.fit(graph)
    scores = attack.score(np.concatenate([positives, negatives], axis=1))
    labels = np.r_[np.ones(positives.shape[1]), np.zeros(negatives.shape[1])]
    return float(roc_auc_score(labels, scores)), time.perf_counter() - start


def attack(published, pairs_pos, pairs_neg, *, attacks: str | Iterable[str] = "all", seed: int = 0) -> dict[str, float]:
    """Run the attack suite on a released graph: each attack's ROC-AUC on the hidden links.

    The attacker sees only the released graph (its edges, and its features when ``published``
    carries ``x``); each attack is fitted on it and scores the hidden pairs.

    Args:
        published: the released graph, a PyG ``Data`` (``edge_index`` in either or both
            directions, ``num_nodes``, optional ``x``) or a :class:`~graphpriv.data.release.PublishedGraph`.
        pairs_pos: ``[2, P]`` hidden links the attacker tries to find (tensor or array).
        pairs_neg: ``[2, Q]`` non-edges to tell them from.
        attacks: ``"all"``, ids (``cn``, ``aa``, ``ra``, ``seal``, ``n2v-sim``, ``gae-sim``,
            ``n2v-ml``, ``gae-ml``) as a comma-separated string or a list. seed: the attacks' seed.

    Returns:
        ``{attack id: AUC}`` in suite order; 0.5 is guessing.

    Raises:
        ConfigError: an unknown attack id. DatasetError: a malformed graph or pairs outside
            ``[0, num_nodes)``.
    """
    from graphpriv.data.validation import check_node_pairs

    graph = published if isinstance(published, PublishedGraph) else PublishedGraph.from_data(published)
    pos = check_node_pairs(pairs_pos, graph.num_nodes, name="pairs_pos")
    neg = check_node_pairs(pairs_neg, graph.num_nodes, name="pairs_neg")
    return {name: attack_auc(make_attack(name, seed=seed), graph, pos, neg)[0] for name in resolve_attacks(attacks)}
