"""Link-inference attacks on released graphs, and the sensitive-link protocol.

Source: Wu, Yang, Han, Wang, Wu, "Learning-based Privacy-Preserving Graph Publishing Against
Sensitive Link Inference Attacks" (IEEE TKDE 2025), Sec. V-A.2 (the eight attacks) and V-A.1 and
V-A.3 (the protocol).
"""

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
from graphpriv.attacks.suite import ATTACKS, attack_auc, make_attack, resolve_attacks

__all__ = [
    "ATTACKS", "AdamicAdarAttack", "CommonNeighboursAttack", "GAEClassifier", "GAESimilarity",
    "LinkAttack", "Node2VecClassifier", "Node2VecSimilarity", "PublishedGraph",
    "ResourceAllocationAttack", "SEALAttack", "attack_auc", "make_attack", "resolve_attacks",
]
