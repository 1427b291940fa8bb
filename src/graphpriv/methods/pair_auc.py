"""The ROC-AUC ``score`` of link predictors that score node pairs with ``predict_proba(pairs)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from graphpriv.data.validation import check_node_pairs
from graphpriv.errors import DatasetError

__all__ = ["PairAUC"]


class PairAUC:
    """Mixin: :meth:`score` is the ROC-AUC of ``self.predict_proba`` on positive against negative
    pairs (for estimators with ``num_nodes_``, ``_check_fitted`` and ``predict_proba(pairs)``)."""

    def score(self, pos: Any, neg: Any) -> float:
        """ROC-AUC of the scores of positive pairs ``pos`` against negative pairs ``neg``.

        Args:
            pos, neg: ``[2, P]`` and ``[2, Q]`` node pairs (P, Q >= 1), scored in one call.

        Returns:
            The AUC in [0, 1] (ties count one half).

        Raises:
            NotFittedError: before ``fit``. DatasetError: malformed or empty pairs.
        """
        self._check_fitted()
        pos = check_node_pairs(pos, self.num_nodes_, name="pos")
        neg = check_node_pairs(neg, self.num_nodes_, name="neg")
        if not pos.shape[1] or not neg.shape[1]:
            raise DatasetError(f"score needs at least one positive and one negative pair (got {pos.shape[1]} and "
                               f"{neg.shape[1]})")
        from sklearn.metrics import roc_auc_score  # here, not at the top: sklearn takes ~0.5 s to import

        scores = self.predict_proba(np.concatenate([pos, neg], axis=1)).double().numpy()
        return float(roc_auc_score(np.r_[np.ones(pos.shape[1]), np.zeros(neg.shape[1])], scores))
