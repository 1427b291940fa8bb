"""GAP's two trained modules: the encoder and the classification module.

Sajadmanesh, Shamsabadi, Bellet, Gatica-Perez, "GAP: Differentially Private Graph Neural Networks
with Aggregation Perturbation" (USENIX Security 2023), Sec. 4.1 (encoder: an MLP on node features
with a linear head, trained on the labels; its hidden output is what the aggregation module reads)
and Sec. 4.3 (classification module: one base MLP per hop's aggregate, their outputs concatenated,
a head MLP). Layers as the paper's code: Linear, then batch normalisation and SELU between layers.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

__all__ = ["ClassificationModule", "Encoder", "mlp"]


def mlp(in_channels: int, hidden_channels: int, out_channels: int, layers: int, *, dropout: float = 0.0,
        batch_norm: bool = True, activate_last: bool = False) -> nn.Sequential:
    """``layers`` Linear layers ``in -> hidden -> ... -> out``, each but the last followed by batch
    normalisation (if ``batch_norm``), SELU and dropout (the last one too when ``activate_last``).

    Raises:
        ValueError: ``layers`` < 1.
    """
    if layers < 1:
        raise ValueError(f"an MLP needs at least one layer (got {layers})")
    modules: list[nn.Module] = []
    widths = [in_channels] + [hidden_channels] * (layers - 1) + [out_channels]
    for i in range(layers):
        modules.append(nn.Linear(widths[i], widths[i + 1]))
        if i < layers - 1 or activate_last:
            if batch_norm:
                modules.append(nn.BatchNorm1d(widths[i + 1]))
            modules.append(nn.SELU())
            modules.append(nn.Dropout(dropout))
    return nn.Sequential(*modules)


class Encoder(nn.Module):
    """``x [N, F] -> embedding [N, width]`` (:meth:`embed`) ``-> logits [N, C]`` (forward).

    Args:
        in_channels: F. hidden: the embedding width. num_classes: C. layers: the embedding MLP's
            layers (0: no encoder, the embedding is ``x`` itself, ``width`` = F; GAP's ablation
            without the encoder module). dropout, batch_norm: as :func:`mlp`.

    Attributes:
        width: the embedding's width (``hidden``, or F when ``layers`` = 0).
    """

    def __init__(self, in_channels: int, hidden: int, num_classes: int, *, layers: int = 2, dropout: float = 0.0,
                 batch_norm: bool = True) -> None:
        super().__init__()
        self.width = hidden if layers else in_channels
        self.body = (mlp(in_channels, hidden, hidden, layers, dropout=dropout, batch_norm=batch_norm,
                         activate_last=True) if layers else nn.Identity())
        self.head = nn.Linear(self.width, num_classes)

    def embed(self, x: Tensor) -> Tensor:
        """``[N, F] -> [N, width]``."""
        return self.body(x)

    def forward(self, x: Tensor) -> Tensor:
        """``[N, F] -> [N, C]`` logits."""
        return self.head(self.embed(x))


class ClassificationModule(nn.Module):
    """``aggregates [N, d, K + 1] -> logits [N, C]``: a base MLP per hop, concatenated, a head MLP.

    Args:
        in_channels: d. hidden: every hidden width. num_classes: C. hops: K. base_layers,
            head_layers: layers of each base MLP and of the head (>= 1). dropout, batch_norm: as
            :func:`mlp`.
    """

    def __init__(self, in_channels: int, hidden: int, num_classes: int, *, hops: int, base_layers: int = 1,
                 head_layers: int = 1, dropout: float = 0.0, batch_norm: bool = True) -> None:
        super().__init__()
        self.bases = nn.ModuleList(mlp(in_channels, hidden, hidden, base_layers, dropout=dropout,
                                       batch_norm=batch_norm, activate_last=True) for _ in range(hops + 1))
        self.head = mlp((hops + 1) * hidden, hidden, num_classes, head_layers, dropout=dropout, batch_norm=batch_norm)

    def forward(self, aggregates: Tensor) -> Tensor:
        """``[N, d, K + 1] -> [N, C]``."""
        return self.head(torch.cat([base(aggregates[..., k]) for k, base in enumerate(self.bases)], dim=-1))
