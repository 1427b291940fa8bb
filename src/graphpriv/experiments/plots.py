"""Privacy-utility plots from the results store (matplotlib, PNG).

    python -m graphpriv.experiments.plots --store runs/dplp.sqlite --methods dplp-ps lapgraph-sgnn \
        --datasets yeast usair celegans pb --out docs/dplp_eps_sweep.png
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np

from graphpriv.experiments.store import ResultStore


def epsilon_curves(store: ResultStore, method: str, dataset: str, metric: str = "test_auc",
                   **config_filter) -> dict[float, list[float]]:
    """{target epsilon: [metric per seed]} over the stored runs of ``method`` on ``dataset``.

    Only runs whose config matches ``config_filter`` (e.g. ``accounting="rigorous"``,
    ``backbone="gcn"``) are used.
    """
    curves: dict[float, list[float]] = defaultdict(list)
    for result in store.results(method=method, dataset=dataset):
        if all(result.config.get(k) == v for k, v in config_filter.items()) and result.privacy:
            curves[float(result.privacy.target_epsilon)].append(result.metrics[metric])
    return dict(sorted(curves.items()))


def plot_epsilon_sweep(store: ResultStore, methods: list[str], datasets: list[str], out: Path,
                       epsilons: list[float] | None = None, **config_filter) -> Path:
    """One panel per dataset: mean metric vs epsilon per method, with a ±1 std band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(datasets), figsize=(4 * len(datasets), 3.4), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        for method in methods:
            curve = epsilon_curves(store, method, dataset, **config_filter)
            if epsilons is not None:
                curve = {e: v for e, v in curve.items() if e in epsilons}
            if not curve:
                continue
            eps = np.array(list(curve))
            mean = np.array([np.mean(v) for v in curve.values()]) * 100
            std = np.array([np.std(v) for v in curve.values()]) * 100
            ax.plot(eps, mean, marker="o", label=method)
            ax.fill_between(eps, mean - std, mean + std, alpha=0.2)
        ax.set_title(dataset)
        ax.set_xlabel("epsilon (edge-level, delta = 1e-5)")
        ax.set_ylabel("test AUC (%)")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="Privacy-utility plot from a results store.")
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--methods", nargs="+", required=True)
    parser.add_argument("--datasets", nargs="+", required=True)
    parser.add_argument("--epsilons", nargs="*", type=float, default=None)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    plot_epsilon_sweep(ResultStore(args.store), args.methods, args.datasets, args.out, args.epsilons,
                       accounting="rigorous", backbone="gcn")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
