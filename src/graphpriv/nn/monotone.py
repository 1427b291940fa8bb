"""Monotone score transforms of DPLP-rank: nu_beta and the UMNN on top of it.

Source: De & Chakrabarti (AAAI 2021), Sec. 4.3, Eq. 6-7; Wehenkel & Louppe, "Unconstrained
monotonic neural networks" (NeurIPS 2019) for the integral form and Clenshaw–Curtis quadrature.

- ``PowerTransform``: nu_beta(s) = sum_i exp(tau beta_i) s^(a_i), a_i = 1/2 + (i-1)/100,
  i = 1..170, tau = 0.01 (``dplp-rank-lin``). Increasing in s >= 0 for any beta, nu(0) = 0.
- ``UMNNTransform``: f(s) = int_0^{nu_beta(s)} g_phi(t) dt + b0 with g_phi = ELU(MLP(t)) + 1 > 0
  (one hidden layer of 20 units); the integral by Clenshaw–Curtis quadrature. Increasing in s
  for any parameters.
- ``ReferencePowerTransform`` and ``ReferenceUMNNTransform``: the same two as the authors' released
  code builds them (read to understand, not copied; DPLP-rank's ``accounting="reference"``):
  powers s^(1/p) for p = 0.30, 0.31, ..., 1.99, weights exp(tau W) with W starting at -100 but for
  the first power's 0, a bias; the UMNN with a trainable log-scale c1 and offset c0,
  f = exp(c1) int_0^{nu(s)} g + c0, its integrand's weights all starting at 1.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["PowerTransform", "ReferencePowerTransform", "ReferenceUMNNTransform", "UMNNTransform", "apply_transform",
           "clenshaw_curtis"]


def clenshaw_curtis(n: int) -> tuple[Tensor, Tensor]:
    """Clenshaw–Curtis nodes and weights on [-1, 1] with ``n + 1`` points (Trefethen, "Spectral
    methods in MATLAB", 2000, clencurt): exact for polynomials of degree <= n.

    Returns:
        ``(nodes [n + 1], weights [n + 1])`` float64, nodes = cos(pi j / n).

    Raises:
        ValueError: n < 1.
    """
    if n < 1:
        raise ValueError(f"'n' must be >= 1 (got {n})")
    theta = np.pi * np.arange(n + 1) / n
    x = np.cos(theta)
    w = np.zeros(n + 1)
    inner = theta[1:-1]
    v = np.ones(n - 1)
    if n % 2 == 0:
        w[0] = w[n] = 1.0 / (n * n - 1)
        for k in range(1, n // 2):
            v -= 2.0 * np.cos(2 * k * inner) / (4 * k * k - 1)
        v -= np.cos(n * inner) / (n * n - 1)
    else:
        w[0] = w[n] = 1.0 / (n * n)
        for k in range(1, (n - 1) // 2 + 1):
            v -= 2.0 * np.cos(2 * k * inner) / (4 * k * k - 1)
    w[1:-1] = 2.0 * v / n
    return torch.from_numpy(x), torch.from_numpy(w)


class PowerTransform(nn.Module):
    """nu_beta(s) = sum_i exp(tau beta_i) s^(a_i) (Eq. 6), ``[P] -> [P]`` float64, s >= 0.

    Args:
        num_powers: n_a (170). tau: temperature (0.01). beta starts at 0 (every power weighted 1).
    """

    def __init__(self, num_powers: int = 170, tau: float = 0.01) -> None:
        super().__init__()
        self.register_buffer("powers", 0.5 + torch.arange(num_powers, dtype=torch.float64) / 100)  # a_i
        self.beta = nn.Parameter(torch.zeros(num_powers, dtype=torch.float64))
        self.tau = tau

    def forward(self, s: Tensor) -> Tensor:
        # the powers step by 1/100: s^(a_i) = s^(a_1) * r^(i-1) with r = s^(1/100), a cumulative
        # product instead of 170 transcendental pow calls per score
        s = s.to(torch.float64).clamp_min(0.0)
        r = s.pow(0.01).unsqueeze(-1).expand(-1, self.powers.numel() - 1)
        steps = torch.cat([s.pow(float(self.powers[0])).unsqueeze(-1), r], dim=-1).cumprod(dim=-1)
        return steps @ torch.exp(self.tau * self.beta)


class UMNNTransform(nn.Module):
    """f(s) = int_0^{nu_beta(s)} g_phi(t) dt + b0 (Eq. 7), ``[P] -> [P]`` float64.

    Args:
        power: the (pre-trained) :class:`PowerTransform` feeding the integral's upper limit.
        hidden: width of g_phi's hidden layer (20). quadrature: Clenshaw–Curtis intervals (50).
        freeze_power: keep nu_beta fixed while g_phi and b0 train (the spec's schedule).
    """

    def __init__(self, power: PowerTransform, *, hidden: int = 20, quadrature: int = 50,
                 freeze_power: bool = True) -> None:
        super().__init__()
        self.power = power
        if freeze_power:
            self.power.requires_grad_(False)
        self.integrand = nn.Sequential(nn.Linear(1, hidden), nn.ReLU(), nn.Linear(hidden, 1)).double()
        self.b0 = nn.Parameter(torch.zeros((), dtype=torch.float64))
        nodes, weights = clenshaw_curtis(quadrature)
        self.register_buffer("nodes", nodes)
        self.register_buffer("weights", weights)

    def g(self, t: Tensor) -> Tensor:
        """The integrand g_phi(t) = ELU(MLP(t)) + 1 > 0, elementwise."""
        return F.elu(self.integrand(t.unsqueeze(-1))).squeeze(-1) + 1.0

    def integral(self, upper: Tensor) -> Tensor:
        """int_0^upper g_phi(t) dt for each entry of ``upper`` (>= 0)."""
        t = upper.unsqueeze(-1) * (1.0 + self.nodes) / 2.0  # [P, n + 1] points in [0, upper]
        return upper * (self.g(t) * self.weights).sum(-1) / 2.0

    def forward(self, s: Tensor) -> Tensor:
        return self.integral(self.power(s)) + self.b0


class ReferencePowerTransform(nn.Module):
    """nu(s) = sum_i exp(tau W_i) s^(1/p_i) + b as the released DPLP code builds it, ``[P] -> [P]``
    float64 (s >= 0; s above 1 allowed, the code's scores are not clipped).

    p_i = 0.30, 0.31, ..., 1.99 (170 powers, exponents 3.33 down to 0.5025); W starts at -100
    (weight e^-1) but for the first power's 0 (weight 1); b starts at 0. :meth:`multiplier` is the
    sum of the raw W, the released code's test-time noise multiplier.

    Args:
        tau: temperature (0.01).
    """

    def __init__(self, tau: float = 0.01) -> None:
        super().__init__()
        self.register_buffer("exponents", 1.0 / (0.30 + torch.arange(170, dtype=torch.float64) / 100))
        start = torch.full((170,), -100.0, dtype=torch.float64)
        start[0] = 0.0
        self.W = nn.Parameter(start)
        self.b = nn.Parameter(torch.zeros((), dtype=torch.float64))
        self.tau = tau

    def features(self, s: Tensor) -> Tensor:
        """``[P, 170]`` the powers s^(1/p_i)."""
        return s.to(torch.float64).clamp_min(0.0).unsqueeze(-1).pow(self.exponents)

    def forward(self, s: Tensor, feature_noise: Tensor | None = None) -> Tensor:
        """nu(s), with ``feature_noise`` ``[P, 170]`` added to the powers first when given (the
        released code's training noise)."""
        x = self.features(s)
        if feature_noise is not None:
            x = x + feature_noise
        return x @ torch.exp(self.tau * self.W) + self.b

    def multiplier(self) -> float:
        """sum_i W_i, the raw weights' sum (the released code's test-time noise multiplier m)."""
        return float(self.W.detach().sum())


class ReferenceUMNNTransform(nn.Module):
    """f(s) = exp(c1) int_0^{nu(s)} g(t) dt + c0 as the released DPLP code builds it, ``[P] -> [P]``.

    g(t) = ELU(MLP([t, 0])) + 1 with one hidden layer of ``hidden`` units, every weight starting
    at 1 and every bias at 0 (so the hidden units stay identical); c0 and c1 start at 0. nu is
    frozen. The integral by Clenshaw–Curtis quadrature (``quadrature`` intervals); an upper limit
    nu(s) < 0 integrates backwards (f stays increasing in nu).

    Args:
        power: the trained :class:`ReferencePowerTransform`. hidden: 20. quadrature: 50.
    """

    def __init__(self, power: ReferencePowerTransform, *, hidden: int = 20, quadrature: int = 50) -> None:
        super().__init__()
        self.power = power.requires_grad_(False)
        self.integrand = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, 1)).double()
        for layer in (self.integrand[0], self.integrand[2]):
            nn.init.ones_(layer.weight)
            nn.init.zeros_(layer.bias)
        self.c = nn.Parameter(torch.zeros(2, dtype=torch.float64))  # offset c0, log-scale c1
        nodes, weights = clenshaw_curtis(quadrature)
        self.register_buffer("nodes", nodes)
        self.register_buffer("weights", weights)

    def g(self, t: Tensor) -> Tensor:
        """The integrand ELU(MLP([t, 0])) + 1 > 0, elementwise."""
        x = torch.stack([t, torch.zeros_like(t)], dim=-1)
        return F.elu(self.integrand(x)).squeeze(-1) + 1.0

    def forward(self, s: Tensor) -> Tensor:
        upper = self.power(s)
        t = upper.unsqueeze(-1) * (1.0 + self.nodes) / 2.0
        return torch.exp(self.c[1]) * upper * (self.g(t) * self.weights).sum(-1) / 2.0 + self.c[0]


def apply_transform(f: nn.Module, s: np.ndarray, *, chunk_size: int = 1 << 15) -> np.ndarray:
    """``f(s)`` without gradients, ``[P] -> [P]`` float64, in chunks of ``chunk_size`` scores.

    The transforms expand each score into ``[170]`` powers and the UMNN into ``[51, hidden]``
    quadrature activations: Facebook's 2.6M test candidates at once would take ~25 GB, a chunk of
    32k takes ~0.3 GB.

    Raises:
        ValueError: chunk_size < 1.
    """
    if chunk_size < 1:
        raise ValueError(f"'chunk_size' must be >= 1 (got {chunk_size})")
    s = torch.as_tensor(np.asarray(s, dtype=np.float64))
    with torch.no_grad():
        return torch.cat([f(part) for part in s.split(chunk_size)]).numpy() if s.numel() else s.numpy()


def check_monotone(f: nn.Module, upper: float, *, points: int = 2001, rtol: float = 1e-4) -> bool:
    """Whether ``f`` is non-decreasing on a grid of [0, upper], up to ``rtol`` of its range there
    (the true integral is monotone; its Clenshaw–Curtis value is exact only for smooth integrands,
    and g_phi has ReLU kinks: measured errors are up to ~1e-5 of the range).

    A test helper for trained transforms; the mechanism clamps f to [f(0), f(1)] regardless.
    """
    with torch.no_grad():
        values = f(torch.linspace(0.0, upper, points, dtype=torch.float64))
    span = float(values.max() - values.min())
    return bool(torch.isfinite(values).all()) and bool((values[1:] - values[:-1] >= -rtol * span).all())
