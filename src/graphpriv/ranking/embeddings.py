"""Embedding base scores of DPLP-rank: node2vec or GCN (GAE) embeddings of the training graph and
a logistic-regression link classifier on Hadamard pair features.

Source: De & Chakrabarti, "Differentially Private Link Prediction with Protected Connections"
(AAAI 2021), App. 14.3 (dimension 80; node2vec 10 walks of length 80; liblinear logistic
classifier). The classifier is trained on
public pairs only (public edges of the graph against as many sampled non-edges); its probability
lies in [0, 1] on every graph, which is the score range the sensitivity uses.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.linear_model import LogisticRegression

from graphpriv.attacks.graph import PublishedGraph
from graphpriv.data.splits import sample_non_edges
from graphpriv.linkpred.node2vec import node2vec_embeddings
from graphpriv.nn.gae import gae_embeddings

__all__ = ["EMBEDDING_SCORES", "LinkClassifier", "embed"]

EMBEDDING_SCORES = ("node2vec", "gcn")


def embed(adj: sp.csr_matrix, method: str, *, dim: int = 80, seed: int = 0) -> np.ndarray:
    """``[N, dim]`` embeddings of the graph ``adj`` (symmetric CSR).

    Args:
        method: ``node2vec`` (pecanpy walks, p = q = 1, 10 walks of length 80, window 10) or
            ``gcn`` (a GAE with a 2-layer GCN encoder [2 dim, dim], learned input).

    Raises:
        ValueError: unknown method.
    """
    upper = sp.triu(adj, k=1).tocoo()
    pairs = np.stack([upper.row, upper.col]).astype(np.int64)
    n = adj.shape[0]
    if method == "node2vec":
        return node2vec_embeddings(PublishedGraph(pairs, n), dim=dim, walk_length=80, num_walks=10, seed=seed)
    if method == "gcn":
        edge_index = torch.from_numpy(np.concatenate([pairs, pairs[::-1]], axis=1).copy())
        return gae_embeddings(edge_index, n, None, hidden=2 * dim, out=dim, seed=seed).numpy()
    raise ValueError(f"unknown embedding method {method!r}; known: {', '.join(EMBEDDING_SCORES)}")


class LinkClassifier:
    """P(link | z_u * z_v): logistic regression (liblinear) on Hadamard features.

    Args:
        z: ``[N, d]`` embeddings. public: symmetric CSR of the public edges to train on.
        forbidden: ``[2, F]`` pairs never used as negatives (edges of G, test candidates).
        max_pairs: positives used (sampled if more); as many negatives. seed: sampling.
    """

    def __init__(self, z: np.ndarray, public: sp.csr_matrix, forbidden: np.ndarray, *, max_pairs: int = 20000,
                 seed: int = 0) -> None:
        rng = np.random.default_rng([seed, 83])
        n = z.shape[0]
        upper = sp.triu(public, k=1).tocoo()
        pos = np.stack([upper.row, upper.col]).astype(np.int64)
        if pos.shape[1] > max_pairs:
            pos = pos[:, rng.choice(pos.shape[1], max_pairs, replace=False)]
        neg = sample_non_edges(n, pos.shape[1], forbidden=np.concatenate([forbidden, pos], axis=1), rng=rng)
        x = np.concatenate([z[pos[0]] * z[pos[1]], z[neg[0]] * z[neg[1]]])
        y = np.r_[np.ones(pos.shape[1]), np.zeros(neg.shape[1])]
        self.z = z
        self.model = LogisticRegression(solver="liblinear").fit(x, y)

    def probability(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """``[P]`` link probabilities in [0, 1] for the pairs (rows[i], cols[i])."""
        return self.model.predict_proba(self.z[rows] * self.z[cols])[:, 1]
