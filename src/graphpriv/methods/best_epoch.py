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
    the earlier epoch; a ``nan`` score (a diverged model) is never above anything, so it is never kept.

    Args:
        module: the trained module; its state is what is kept and restored.
        score: the validation score of ``module`` as it stands (a float, higher is better; called
            with no argument).
        keep_initial: keep ``module``'s state at construction as epoch 0 (score ``-inf``), so that
            :meth:`restore` falls back to the initial, data-independent parameters when no offered
            epoch scores a number (every one ``nan``). Without it nothing is restored then.

    Attributes:
        epoch: the selected epoch (1-based as offered; 0 for the initial state with
            ``keep_initial``; None before any offer otherwise).
        score: its score (``-inf`` before any offer).
    """

    def __init__(self, module: torch.nn.Module, score: Callable[[], float], *, keep_initial: bool = False) -> None:
        self.module, self._score = module, score
        self.epoch: int | None = 0 if keep_initial else None
        self.score = float("-inf")
        self._state: dict | None = copy.deepcopy(module.state_dict()) if keep_initial else None

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
