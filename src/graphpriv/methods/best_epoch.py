"""Model selection on a validation score: keep the state of a module at its first epoch of best score.

What GAP's and ProGAP's released trainers do (a checkpoint callback monitoring ``val/acc``, mode max,
reloaded after training; read in the authors' repositories, not copied) for the models of Sajadmanesh,
Shamsabadi, Bellet, Gatica-Perez, "GAP: Differentially Private Graph Neural Networks with Aggregation
Perturbation" (USENIX Security 2023) and Sajadmanesh, Gatica-Perez, "ProGAP: Progressive Graph Neural
Networks with Differential Privacy Guarantees" (WSDM 2024).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch

__all__ = ["BestEpoch"]


class BestEpoch:
    """The first epoch of highest validation score seen so far, and ``module``'s state at it.

    :meth:`offer` scores ``module`` after an epoch (eval mode, no gradients, then back to the mode
    it was in) and keeps a deep copy of its whole ``state_dict`` (batch-norm statistics included)
    when the score is strictly above every earlier one; :meth:`restore` loads that copy. Ties keep
    the earlier epoch.

    Args:
        module: the trained module; its state is what is kept and restored.
        score: the validation score of ``module`` as it stands (a float, higher is better; called
            with no argument).

    Attributes:
        epoch: the selected epoch (1-based as offered; None before any offer).
        score: its score (``-inf`` before any offer).
    """

    def __init__(self, module: torch.nn.Module, score: Callable[[], float]) -> None:
        self.module, self._score = module, score
        self.epoch: int | None = None
        self.score = float("-inf")
        self._state: dict | None = None

    def offer(self, epoch: int) -> float:
        """Score ``module`` after ``epoch`` and keep its state if the score is a new best.

        Returns:
            The score read.
        """
        training = self.module.training
        self.module.eval()
        with torch.no_grad():
            value = float(self._score())
        self.module.train(training)
        if value > self.score:
            self.score, self.epoch, self._state = value, epoch, copy.deepcopy(self.module.state_dict())
        return value

    def restore(self) -> int | None:
        """Load the kept state into ``module`` (nothing when nothing was offered).

        Returns:
            The selected epoch (None when nothing was offered).
        """
        if self._state is not None:
            self.module.load_state_dict(self._state)
        return self.epoch
