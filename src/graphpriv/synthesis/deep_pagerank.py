"""PrivDPR's deep PageRank: the model, the per-pair loss, the gradient bound and the depth.

Source: Zhang, Hu, Ye, Xu, "PrivDPR: Synthetic Graph Publishing with Deep PageRank under
Differential Privacy" (KDD 2025), Sec. 4.2-4.3: Eq. 4 (f), Eq. 5 (per-pair loss), Theorem 4.2
(||dL/dV|| <= M (1/s)^(L+1) under W <- W / ||s W||_2), Eq. 13 (depth).

graphpriv's tighter bound (``gradient_bound='sigmoid'``, docs/privdpr.md, "A tighter bound"):
Theorem 4.2 bounds each sigmoid's derivative by 1, but sigmoid'(x) = sigmoid(x)(1 - sigmoid(x))
<= 1/4 for every x, so ||df/dv|| <= (1/(4s))^(L+1) and ||dL/dV|| <= M (1/(4s))^(L+1); Eq. 13 with
that factor asks for a shallower network at the same S_grad.

f(v) = sigmoid(W_{L+1}^T sigmoid(W_L^T ... sigmoid(W_1^T v))) with W_1: r x d, W_l: d x d,
W_{L+1}: d x 1, no biases. Every W enters f normalised, W / (s ||W||_2) (exact spectral norm), so
||W_WN||_2 = 1/s whatever W is; V (N x r) is not normalised and is the only released parameter.
"""

from __future__ import annotations

import math

import scipy.linalg
import torch
from threadpoolctl import ThreadpoolController
from torch import Tensor, nn

from graphpriv.errors import ConfigError

__all__ = ["GRADIENT_BOUNDS", "DeepPageRank", "check_gradient_bound", "depth_for_sensitivity", "gradient_bound_m",
           "layer_factor", "pair_loss", "spectral_norm"]

_BLAS = ThreadpoolController()

#: The deepest network Eq. 13 may ask for; beyond it training is hopeless (and slow).
MAX_DEPTH = 64

#: Theorem 4.2's bound (``paper``: each sigmoid's derivative bounded by 1) and graphpriv's tighter one
#: (``sigmoid``: by 1/4, its maximum).
GRADIENT_BOUNDS = ("paper", "sigmoid")


def layer_factor(s: float, gradient_bound: str = "paper") -> float:
    """The bound on what one layer sigmoid(h W / (s ||W||_2)) multiplies ||df/dv|| by: 1/s (Theorem
    4.2, ``paper``) or 1/(4s) (``sigmoid``: ||W / (s ||W||_2)||_2 = 1/s and sigmoid' <= 1/4).

    Raises:
        ConfigError: an unknown ``gradient_bound`` (a ValueError).
    """
    return 1.0 / _shrink(s, gradient_bound)


def check_gradient_bound(gradient_bound: object) -> str:
    """``gradient_bound`` when it names one of :data:`GRADIENT_BOUNDS`.

    Raises:
        ConfigError: any other value (the message lists the two).
    """
    if not isinstance(gradient_bound, str) or gradient_bound not in GRADIENT_BOUNDS:
        raise ConfigError(f"gradient_bound must be one of {', '.join(GRADIENT_BOUNDS)} (got {gradient_bound!r}): "
                          "'paper' is Theorem 4.2's 1/s per layer, 'sigmoid' graphpriv's 1/(4s)")
    return gradient_bound


def _shrink(s: float, gradient_bound: str) -> float:
    """1 / :func:`layer_factor`, computed exactly: s or 4 s."""
    return s if check_gradient_bound(gradient_bound) == "paper" else 4.0 * s


def gradient_bound_m(num_nodes: int, gamma: float = 0.85) -> float:
    """M of Theorem 4.2: (2 (N - 1) gamma^2 + 2 gamma + 2 gamma (1 - gamma) / N) (1 + 1 / gamma).

    Raises:
        ValueError: num_nodes < 2 or gamma outside (0, 1).
    """
    if num_nodes < 2 or not 0 < gamma < 1:
        raise ValueError(f"need num_nodes >= 2 and gamma in (0, 1) (got {num_nodes}, {gamma})")
    n = num_nodes
    return (2 * (n - 1) * gamma**2 + 2 * gamma + 2 * gamma * (1 - gamma) / n) * (1 + 1 / gamma)


def depth_for_sensitivity(*, num_nodes: int, batch_pairs: int, iterations: int, s: float, s_grad: float,
                          gamma: float = 0.85, max_depth: int = MAX_DEPTH, gradient_bound: str = "paper") -> int:
    """Eq. 13: the smallest L >= 0 with B M c^(L+1) <= S_grad / T, c = :func:`layer_factor` (1/s for
    Theorem 4.2, 1/(4s) for graphpriv's ``sigmoid`` bound).

    Args:
        num_nodes: N. batch_pairs: B, the most pairs a step's gradient sums. iterations: T.
        s: the normalisation factor (> 1). s_grad: the preset sensitivity S_grad (> 0).
        gradient_bound: ``paper`` or ``sigmoid`` (:data:`GRADIENT_BOUNDS`).

    Returns:
        L, the number of hidden d x d layers is L - 1 (L + 1 weight matrices in all).

    Raises:
        ConfigError: s <= 1, s_grad <= 0, or L > ``max_depth`` (with what to change).
    """
    if s <= 1:
        raise ConfigError(f"'s' must be > 1: weight normalisation by s <= 1 does not shrink the gradient (got {s})")
    if s_grad <= 0 or batch_pairs < 1 or iterations < 1:
        raise ConfigError(f"need s_grad > 0, batch_pairs >= 1, iterations >= 1 (got {s_grad}, {batch_pairs}, "
                          f"{iterations})")
    shrink = _shrink(s, gradient_bound)
    bound = batch_pairs * gradient_bound_m(num_nodes, gamma)  # B M: need B M shrink^-(L+1) <= S_grad / T
    depth = 0
    while bound * shrink ** -(depth + 1) > s_grad / iterations and depth <= max_depth:
        depth += 1
    if depth > max_depth:
        raise ConfigError(f"Eq. 13 asks for L = {depth} layers (> {max_depth}): raise s (now {s}) or s_grad "
                          f"(now {s_grad}), or lower the batch ({batch_pairs} pairs) or the iterations ({iterations})")
    return depth


def spectral_norm(w: Tensor) -> Tensor:
    """||W||_2, the largest singular value of a 2-D ``w``, as a scalar differentiable in ``w``.

    The top eigenpair of the smaller Gram matrix (W^T W or W W^T, solved in float64, LAPACK's ?syevr asked
    for that one eigenpair, on as many BLAS threads as torch uses) gives the top singular vectors u1,
    v1; the result is u1^T W v1, whose value is sigma_1 and whose gradient is u1 v1^T, the gradient of
    sigma_1 (when it is simple) -- what ``torch.linalg.matrix_norm(w, ord=2)`` gives, at a fraction
    of the cost of its full SVD and SVD backward (512 x 512: 24 ms against 91 ms on one thread,
    ``benchmarks/bench_spectral_norm.py``; the PrivDPR step normalises every layer). Equal to it to
    float32 rounding (tests/synthesis/test_privdpr.py). A vector (one row or one column) returns its
    Euclidean norm. Source: the exact normalisation W / (s ||W||_2) of PrivDPR, Sec. 4.2 (Theorem 4.2).

    Args:
        w: ``[a, b]`` float tensor (may require grad).

    Returns:
        Scalar tensor of ``w``'s dtype.

    Raises:
        ValueError: ``w`` is not 2-D.
    """
    if w.dim() != 2:
        raise ValueError(f"spectral_norm needs a matrix (got shape {tuple(w.shape)})")
    rows, cols = w.shape
    if min(rows, cols) == 1:
        return torch.linalg.vector_norm(w)
    with torch.no_grad():
        right = rows >= cols  # the Gram matrix W^T W (cols x cols) is the smaller one
        gram = (w.T @ w if right else w @ w.T).double().numpy()
        k = gram.shape[0]
        with _BLAS.limit(limits=torch.get_num_threads(), user_api="blas"):
            _, vec = scipy.linalg.eigh(gram, subset_by_index=[k - 1, k - 1], driver="evr")
        x = torch.from_numpy(vec[:, 0].copy()).to(w.dtype)  # float64 -> w's dtype: no float32 detour
        y = w @ x if right else w.T @ x
        y = y / torch.linalg.vector_norm(y)
        u, v = (y, x) if right else (x, y)
    return u @ w @ v


class DeepPageRank(nn.Module):
    """V (N x r) and the spectrally normalised MLP f of Eq. 4.

    Args:
        num_nodes: N. r: embedding width. d: hidden width. depth: L from Eq. 13 (L + 1 weight
            matrices: r x d, then L - 1 of d x d, then d x 1; for L = 0 a single r x 1).
        s: normalisation factor (> 1): every W enters as W / (s ||W||_2).
        generator: seeds V's and W's initialisation (normal, std 1/sqrt(fan-in)).
    """

    def __init__(self, num_nodes: int, *, r: int = 128, d: int = 64, depth: int, s: float = 8.0,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        if depth < 0:
            raise ValueError(f"'depth' must be >= 0 (got {depth})")
        self.s = float(s)
        self.V = nn.Parameter(torch.randn(num_nodes, r, generator=generator) / math.sqrt(r))
        shapes = [(r, 1)] if depth == 0 else [(r, d)] + [(d, d)] * (depth - 1) + [(d, 1)]
        self.weights = nn.ParameterList(
            nn.Parameter(torch.randn(a, b, generator=generator) / math.sqrt(a)) for a, b in shapes)

    @property
    def depth(self) -> int:
        """L (the network has L + 1 weight matrices)."""
        return len(self.weights) - 1

    def normalised(self, w: Tensor) -> Tensor:
        """W / (s ||W||_2), spectral norm exact (:func:`spectral_norm`)."""
        return w / (self.s * spectral_norm(w))

    def forward(self, nodes: Tensor) -> Tensor:
        """f(v_i) for ``nodes`` ``[P]`` (long) -> ``[P]`` in (0, 1)."""
        return self.score(self.V[nodes])

    def score(self, h: Tensor) -> Tensor:
        """f applied to embeddings ``h`` ``[P, r]`` (rows of V, or copies of them) -> ``[P]`` in (0, 1)."""
        for w in self.weights:
            h = torch.sigmoid(h @ self.normalised(w))
        return h.squeeze(-1)


def pair_loss(f_i: Tensor, f_j: Tensor, out_degree_i: Tensor, in_degree_j: Tensor, *, num_nodes: int,
              gamma: float = 0.85) -> Tensor:
    """Eq. 5 for pairs i -> j, elementwise ``[P]``: with a = f_i / d_out(i), b = f_j / (d_in(j) gamma),

        L = d_in(j) gamma^2 (a - b)^2 + (a - b) 2 gamma (1 - gamma) / N + (1 - gamma)^2 / (d_in(j) N^2).

    Degrees must be >= 1 (a walk leaves i and enters j).
    """
    a = f_i / out_degree_i
    b = f_j / (in_degree_j * gamma)
    n = float(num_nodes)
    return (in_degree_j * gamma**2 * (a - b) ** 2 + (a - b) * 2 * gamma * (1 - gamma) / n
            + (1 - gamma) ** 2 / (in_degree_j * n * n))
