"""Node-level DP-SGD's clipped sums: ghost clipping of linear layers against the vmap per-example
engine, on GAP's modules, in one process.

    python benchmarks/bench_linear_clipping.py [--batch 512] [--features 156] [--hidden 16] [--repeat 20]

For GAP-NDP's encoder (features -> hidden -> hidden -> C) and classification module (K + 1 = 3
hops) and a ProGAP stage, one Poisson-sized batch: the seconds per clipped sum of
:func:`graphpriv.privacy.ghost_clipping.linear_clipped_sum` and of the reference
:func:`graphpriv.privacy.engine.clipped_gradient_sum` (vmap over per-example gradients), their
ratio, the largest difference between the two sums (they are the same sum), and the peak
resident memory of the process at the end.
"""

from __future__ import annotations

import argparse
import resource
import time

import torch
import torch.nn.functional as F

from graphpriv.nn.gap import ClassificationModule, Encoder
from graphpriv.nn.progap import ProgressiveModel, StageLogits
from graphpriv.privacy.engine import clipped_gradient_sum
from graphpriv.privacy.ghost_clipping import linear_clipped_sum


def _seconds(call, repeat: int) -> float:
    call()  # warm-up
    start = time.perf_counter()
    for _ in range(repeat):
        call()
    return (time.perf_counter() - start) / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--features", type=int, default=156, help="fb100-mit8's width")
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--classes", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    b, f, h, c = args.batch, args.features, args.hidden, args.classes
    progressive = ProgressiveModel(f, h, c, num_stages=3, batch_norm=False)
    cases = [("GAP encoder", Encoder(f, h, c, layers=2, batch_norm=False), (torch.randn(b, f),)),
             ("GAP classifier (K = 2)", ClassificationModule(h, h, c, hops=2, batch_norm=False),
              (torch.randn(b, h, 3),)),
             ("ProGAP stage 2", StageLogits(progressive, 2), (torch.randn(b, f), torch.randn(b, h), torch.randn(b, h)))]
    y = torch.randint(c, (b,))
    rows = torch.arange(b)
    print(f"batch {b}, features {f}, hidden {h}, {args.threads} thread(s), mean of {args.repeat} calls")
    print(f"{'module':24s} {'ghost (ms)':>11s} {'vmap (ms)':>10s} {'ratio':>7s} {'max |diff|':>11s}")
    for name, module, inputs in cases:
        def collate(index, inputs=inputs):
            return tuple(t[index] for t in inputs), y[index]
        ghost = linear_clipped_sum(module, collate, 1.0)
        fast = _seconds(lambda ghost=ghost: ghost(rows), args.repeat)
        slow = _seconds(lambda module=module, collate=collate: clipped_gradient_sum(module, F.cross_entropy, collate,
                                                                                     rows, 1.0), args.repeat)
        a, _ = ghost(rows)
        r, _ = clipped_gradient_sum(module, F.cross_entropy, collate, rows, 1.0)
        diff = max(float((a[k] - r[k]).abs().max()) for k in r)
        print(f"{name:24s} {1e3 * fast:11.2f} {1e3 * slow:10.2f} {slow / fast:6.1f}x {diff:11.2e}")
    print(f"peak resident memory of the process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10:.0f} MiB")


if __name__ == "__main__":
    main()
