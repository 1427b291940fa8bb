"""The attack interface: ``fit(published graph)`` then ``score(pairs)``."""

from __future__ import annotations

import abc

import numpy as np
from sklearn.exceptions import NotFittedError

from graphpriv.attacks.graph import PublishedGraph
from graphpriv.data.validation import check_node_pairs

__all__ = ["LinkAttack"]


class LinkAttack(abc.ABC):
    """A sensitive-link inference attack (PPGSL's attack suite, :mod:`graphpriv.attacks.suite`).

    The attacker sees only the published graph G' = (A', X): :meth:`fit` may train on it (its
    edges as positives, its non-edges as negatives) and :meth:`score` returns a higher value for a
    pair the attack believes linked. Attack success is the ROC-AUC of these scores on the hidden
    sensitive links against non-edges (0.5 = guessing).

    Attributes:
        name: Attack id (``cn``, ``gae-sim``, ...). seed: Seed of any randomness in ``fit``.
    """

    name: str = ""

    def __init__(self, *, seed: int = 0) -> None:
        self.seed = seed
        self.graph_: PublishedGraph | None = None

    def fit(self, graph: PublishedGraph) -> LinkAttack:
        """Learn whatever the attack needs from the published graph; returns ``self``."""
        self.graph_ = graph
        self._fit(graph)
        return self

    def score(self, pairs: np.ndarray) -> np.ndarray:
        """Scores ``[P]`` float64 of the ``[2, P]`` pairs (higher = more likely linked).

        Raises:
            NotFittedError: :meth:`fit` was not called. ValueError: malformed pairs.
        """
        if self.graph_ is None:
            raise NotFittedError(f"{type(self).__name__}: call fit(published_graph) before score()")
        pairs = check_node_pairs(pairs, self.graph_.num_nodes)
        return np.asarray(self._score(pairs), dtype=np.float64)

    @abc.abstractmethod
    def _fit(self, graph: PublishedGraph) -> None: ...

    @abc.abstractmethod
    def _score(self, pairs: np.ndarray) -> np.ndarray: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seed={self.seed})"
