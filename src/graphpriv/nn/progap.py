"""ProGAP's progressive model: one base MLP per stage, and per stage a jumping-knowledge combination
of the bases so far and a head.

Sajadmanesh and Gatica-Perez, "ProGAP: Progressive Graph Neural Networks with Differential Privacy
Guarantees" (WSDM 2024), Sec. 4 (Fig. 2): stage i reads the private aggregates ``x_0 .. x_i``
(``x_0`` the node features), passes each through its base MLP, concatenates them (jumping
knowledge, "cat", then a linear layer), normalises the rows and classifies with the stage's head;
the output of stage i's own base is the embedding the next stage's aggregate is computed from.
Layers as :func:`graphpriv.nn.gap.mlp` (batch normalisation and SELU between layers).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from graphpriv.nn.gap import mlp

__all__ = ["ProgressiveModel", "StageLogits"]


class ProgressiveModel(nn.Module):
    """Stages 0..S-1 of ProGAP.

    Args:
        in_channels: F, the features' width (stage 0's input). hidden: every hidden width and the
            aggregates' width (stages >= 1 read ``hidden``-wide aggregates). num_classes: C.
        num_stages: S = depth + 1. base_layers, head_layers: layers of each MLP (>= 1).
        dropout, batch_norm: as :func:`~graphpriv.nn.gap.mlp`.

    Shapes:
        forward(xs, stage): ``xs`` the stage's inputs ``[x_0 [N, F], x_1 [N, hidden], ...,
        x_stage]`` -> ``(embedding [N, hidden], logits [N, C])``.
    """

    def __init__(self, in_channels: int, hidden: int, num_classes: int, *, num_stages: int, base_layers: int = 1,
                 head_layers: int = 1, dropout: float = 0.0, batch_norm: bool = True) -> None:
        super().__init__()
        options = {"dropout": dropout, "batch_norm": batch_norm}
        self.bases = nn.ModuleList(mlp(in_channels if i == 0 else hidden, hidden, hidden, base_layers,
                                       activate_last=True, **options) for i in range(num_stages))
        self.jk = nn.ModuleList(nn.Linear((i + 1) * hidden, hidden) for i in range(num_stages))
        self.heads = nn.ModuleList(mlp(hidden, hidden, num_classes, head_layers, **options)
                                   for _ in range(num_stages))

    def stage_parameters(self, stage: int) -> list[nn.Parameter]:
        """What stage ``stage`` trains: the bases 0..stage, its combination and its head."""
        modules = [*self.bases[:stage + 1], self.jk[stage], self.heads[stage]]
        return [p for module in modules for p in module.parameters()]

    def forward(self, xs: list[Tensor], stage: int) -> tuple[Tensor, Tensor]:
        """``(embedding, logits)`` of stage ``stage`` (see the class docstring)."""
        hs = [self.bases[i](xs[i]) for i in range(stage + 1)]
        combined = F.normalize(self.jk[stage](torch.cat(hs, dim=-1)), p=2.0, dim=-1)
        return hs[-1], self.heads[stage](combined)


class StageLogits(nn.Module):
    """Stage ``stage``'s logits as a module of its inputs: ``forward(x_0, ..., x_stage) -> [N, C]``
    (what a trainer that calls ``module(*inputs)`` needs, DP-SGD's per-example gradients included).

    Args:
        model: the :class:`ProgressiveModel`. stage: which stage.
    """

    def __init__(self, model: ProgressiveModel, stage: int) -> None:
        super().__init__()
        self.model, self.stage = model, stage

    def forward(self, *xs: Tensor) -> Tensor:
        """``[N, C]`` logits of the stage."""
        return self.model(list(xs), self.stage)[1]
