"""Noise calibration with the accountant's memoised per-step RDP vectors, against dp-accounting's own
(uncached) RDP accountant, in the same process.

    python benchmarks/bench_calibration.py [--rows 140] [--epochs 200] [--batch-size 60] [--epsilon 4]

Calibrates DP-MLP's noise multiplier (Poisson DP-SGD over ``--rows`` training rows, the default
schedule) three ways: with ``dp_accounting.rdp.RdpAccountant`` (the reference: every RDP vector
computed afresh), with :class:`graphpriv.privacy.accountant.GraphRdpAccountant` on a cold cache
(the first run of a setting in a process) and on a warm one (every later seed of the same setting
in that process: a sweep's worker, a test session). Prints the wall times, the ratios, the three
noise multipliers (equal: the cache returns the same vectors bit for bit) and the peak RSS.
"""

from __future__ import annotations

import argparse
import resource
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=140)
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=60)
    parser.add_argument("--epsilon", type=float, default=4.0)
    parser.add_argument("--delta", type=float, default=1e-4)
    args = parser.parse_args()
    from dp_accounting import dp_event
    from dp_accounting.rdp import RdpAccountant

    from graphpriv.methods.node_classifier import steps_and_rate
    from graphpriv.privacy import accountant as accountant_module
    from graphpriv.privacy import calibration
    from graphpriv.privacy.calibration import calibrate_noise_multiplier, quiet_absl

    steps, rate = steps_and_rate(args.rows, args.epochs, args.batch_size)

    def whole(z: float) -> dp_event.DpEvent:
        return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(z)), steps)

    def calibrate() -> tuple[float, float]:
        start = time.perf_counter()
        with quiet_absl():
            z = calibrate_noise_multiplier(whole, target_epsilon=args.epsilon, delta=args.delta)
        return z, time.perf_counter() - start

    real = calibration.GraphRdpAccountant
    calibration.GraphRdpAccountant = lambda neighboring_relation: RdpAccountant(None, neighboring_relation)
    try:
        z_ref, t_ref = calibrate()
    finally:
        calibration.GraphRdpAccountant = real
    accountant_module._poisson_gaussian_rdp.cache_clear()
    z_cold, t_cold = calibrate()
    z_warm, t_warm = calibrate()
    print(f"## Noise calibration: DP-MLP, {args.rows} rows, {steps} steps at rate {rate:.4f}, "
          f"epsilon {args.epsilon:g}, delta {args.delta:g}\n")
    print("| accountant | time (s) | vs dp-accounting | noise multiplier |")
    print("|---|---|---|---|")
    print(f"| dp-accounting RdpAccountant (reference) | {t_ref:.2f} | 1.0x | {z_ref!r} |")
    print(f"| GraphRdpAccountant, cold cache | {t_cold:.2f} | {t_ref / t_cold:.1f}x | {z_cold!r} |")
    print(f"| GraphRdpAccountant, warm cache | {t_warm:.4f} | {t_ref / t_warm:.0f}x | {z_warm!r} |")
    print(f"\nsame noise multiplier: {z_ref == z_cold == z_warm}; "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
