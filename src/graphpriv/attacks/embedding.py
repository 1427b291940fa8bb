"""Embedding-based attacks: N2V+sim, GAE+sim, N2V+ML, GAE+ML (PPGSL, Wu et al. TKDE 2025, Sec. V-A.2).

An embedder (node2vec via pecanpy, or a GAE via PyG) maps the published graph to node vectors;
the ``sim`` head scores a pair by the cosine of its two vectors, the ``ml`` head by a LinearSVC on
``[z_u || z_v]`` trained on the published edges (positives) against equally many uniformly drawn
non-edges of the published graph (negatives).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from graphpriv.attacks.base import LinkAttack
from graphpriv.attacks.graph import PublishedGraph
from graphpriv.data.splits import sample_non_edges
from graphpriv.linkpred.node2vec import node2vec_embeddings
from graphpriv.nn.gae import gae_embeddings

__all__ = [
    "EmbeddingAttack",
    "GAEClassifier",
    "GAESimilarity",
    "Node2VecClassifier",
    "Node2VecSimilarity",
    "cosine_scores",
]


def cosine_scores(embeddings: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Cosine similarity of the rows of each pair, ``[N, d], [2, P] -> [P]`` (0 for a zero row)."""
    z = np.asarray(embeddings, dtype=np.float64)
    norms = np.linalg.norm(z, axis=1)
    z = z / np.where(norms > 0, norms, 1.0)[:, None]
    return np.einsum("pd,pd->p", z[pairs[0]], z[pairs[1]])


def _pair_features(z: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    return np.concatenate([z[pairs[0]], z[pairs[1]]], axis=1)


class EmbeddingAttack(LinkAttack):
    """Embed the published graph, then score pairs with a ``sim`` or ``ml`` head.

    Args:
        seed: Embedding, negative-sampling and classifier seed.
        max_train_edges: Cap on the published edges the ``ml`` head trains on (uniform subset;
            default 50,000, which keeps LinearSVC under a few seconds on every PPGSL dataset).
        **embed_kwargs: Passed to the embedder (e.g. ``epochs`` for the GAE, ``dim`` for node2vec).

    Attributes (after fit):
        embeddings_: ``[N, d]``. classifier_: the fitted pipeline (``ml`` head).
        converged_: False when LinearSVC stopped at its iteration cap (``ml`` head).
    """

    head: str = "sim"
    embedder: str = ""

    def __init__(self, *, seed: int = 0, max_train_edges: int = 50_000, **embed_kwargs) -> None:
        super().__init__(seed=seed)
        self.max_train_edges = max_train_edges
        self.embed_kwargs = embed_kwargs

    def embed(self, graph: PublishedGraph) -> np.ndarray:
        """``[N, d]`` node embeddings of ``graph``."""
        raise NotImplementedError

    def use_embeddings(self, embeddings: np.ndarray) -> EmbeddingAttack:
        """Reuse embeddings computed for the same graph, embedder and seed by a sibling attack
        (N2V+sim and N2V+ML share one node2vec run); the next :meth:`fit` skips embedding."""
        self._precomputed = np.asarray(embeddings, dtype=np.float32)
        return self

    def _fit(self, graph: PublishedGraph) -> None:
        pre = getattr(self, "_precomputed", None)
        if pre is not None and pre.shape[0] != graph.num_nodes:
            raise ValueError(f"precomputed embeddings have {pre.shape[0]} rows for {graph.num_nodes} nodes")
        self.embeddings_ = pre if pre is not None else np.asarray(self.embed(graph), dtype=np.float32)
        self._precomputed = None
        if self.head == "ml":
            self._fit_classifier(graph)

    def _fit_classifier(self, graph: PublishedGraph) -> None:
        rng = np.random.default_rng([self.seed, 17])
        pos = graph.pairs
        if pos.shape[1] > self.max_train_edges:
            pos = pos[:, rng.choice(pos.shape[1], self.max_train_edges, replace=False)]
        neg = sample_non_edges(graph.num_nodes, pos.shape[1], forbidden=graph.pairs, rng=rng)
        pairs = np.concatenate([pos, neg], axis=1)
        labels = np.r_[np.ones(pos.shape[1]), np.zeros(neg.shape[1])]
        self.classifier_ = make_pipeline(StandardScaler(), LinearSVC(C=1.0, max_iter=5000,
                                                                     random_state=self.seed))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            self.classifier_.fit(_pair_features(self.embeddings_, pairs), labels)
        self.converged_ = not any(issubclass(w.category, ConvergenceWarning) for w in caught)

    def _score(self, pairs: np.ndarray) -> np.ndarray:
        if self.head == "ml":
            return self.classifier_.decision_function(_pair_features(self.embeddings_, pairs))
        return cosine_scores(self.embeddings_, pairs)


class _Node2Vec(EmbeddingAttack):
    embedder = "node2vec"

    def embed(self, graph: PublishedGraph) -> np.ndarray:
        """node2vec (pecanpy walks + gensim skip-gram), 128 dimensions by default."""
        return node2vec_embeddings(graph, seed=self.seed, **self.embed_kwargs)


class _GAE(EmbeddingAttack):
    embedder = "gae"

    def embed(self, graph: PublishedGraph) -> np.ndarray:
        """GAE with a 2-layer GCN encoder [128, 64] on (A', X) (learned input if no X)."""
        z = gae_embeddings(graph.edge_index, graph.num_nodes, graph.features, seed=self.seed,
                           **self.embed_kwargs)
        return z.numpy()


class Node2VecSimilarity(_Node2Vec):
    """N2V+sim: cosine of node2vec embeddings (Grover & Leskovec 2016; PPGSL Sec. V-A.2)."""

    name, head = "n2v-sim", "sim"


class Node2VecClassifier(_Node2Vec):
    """N2V+ML: LinearSVC on concatenated node2vec embeddings (PPGSL Sec. V-A.2)."""

    name, head = "n2v-ml", "ml"


class GAESimilarity(_GAE):
    """GAE+sim: cosine of GAE embeddings, the attack of PPGSL's main figures (Kipf & Welling 2016)."""

    name, head = "gae-sim", "sim"


class GAEClassifier(_GAE):
    """GAE+ML: LinearSVC on concatenated GAE embeddings (PPGSL Sec. V-A.2)."""

    name, head = "gae-ml", "ml"
