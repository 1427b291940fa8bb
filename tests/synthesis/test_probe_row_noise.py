"""scripts/probe_row_noise.py: its sensitivity Delta = c sqrt(4 D^2 + 2 D), by brute force."""

import importlib.util
import itertools
from pathlib import Path

import numpy as np
import torch

_SPEC = importlib.util.spec_from_file_location(
    "probe_row_noise", Path(__file__).parents[2] / "scripts" / "probe_row_noise.py")
probe = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(probe)


def _directed(pairs: list[tuple[int, int]]) -> tuple[torch.Tensor, torch.Tensor]:
    both = [(a, b) for a, b in pairs] + [(b, a) for a, b in pairs]
    src, dst = zip(*both) if both else ((), ())
    return torch.tensor(src, dtype=torch.long), torch.tensor(dst, dtype=torch.long)


def test_replacing_one_node_moves_the_row_gradients_within_delta():
    # every replacement of one node's edges that keeps every degree <= D, on a 7-node graph of degree <= D
    n, max_degree, clip = 7, 2, 0.3
    base = [(0, 1), (1, 2), (3, 4), (4, 5), (5, 3), (2, 6)]
    V = torch.randn(n, 3, generator=torch.Generator().manual_seed(0)) * torch.tensor([[0.1], [1], [3], [0.5], [2], [1], [4]])
    bound = probe.sensitivity(max_degree, clip)
    worst = 0.0
    for u in range(n):
        kept = [(a, b) for a, b in base if u not in (a, b)]
        g = probe.row_gradients(V, *_directed(base), clip)
        others = [v for v in range(n) if v != u]
        for size in range(max_degree + 1):
            for new in itertools.combinations(others, size):
                pairs = kept + [(u, v) for v in new]
                degree = np.bincount(np.array(pairs).reshape(-1), minlength=n) if pairs else np.zeros(n)
                if degree.max() > max_degree:
                    continue  # outside the bounded-degree relation
                worst = max(worst, float((g - probe.row_gradients(V, *_directed(pairs), clip)).norm()))
    assert bound == clip * np.sqrt(4 * max_degree**2 + 2 * max_degree)
    assert 0.5 * bound < worst <= bound
