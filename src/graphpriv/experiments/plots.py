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


def _panels(rows: int, cols: int):
    """A headless matplotlib figure with a rows x cols grid of 4 x 3.4 inch panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(rows, cols, figsize=(4 * cols, 3.4 * rows), squeeze=False)


def _save(fig, out: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def plot_epsilon_sweep(store: ResultStore, methods: list[str], datasets: list[str], out: Path,
                       epsilons: list[float] | None = None, **config_filter) -> Path:
    """One panel per dataset: mean metric vs epsilon per method, with a ±1 std band."""
    fig, axes = _panels(1, len(datasets))
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
    return _save(fig, out)


#: The knob each publishing method sweeps (specs/ppgsl.md "Protocol").
KNOBS = {"ppgsl": "alpha", "random-perturb": "ratio", "dice": "ratio", "edgerand": "epsilon", "lapgraph": "epsilon"}


def tradeoff_points(store: ResultStore, method: str, dataset: str, utility: str = "lp_auc",
                    attack: str = "attack_auc_gae-sim", **config_filter) -> list[tuple[float, float, float, int]]:
    """``[(knob, mean utility, mean attack AUC, seeds)]`` over the stored runs, sorted by knob.

    Args:
        utility: ``lp_auc`` or ``nc_f1``. attack: the attack metric (GAE+sim by default, the
            paper's main figures). config_filter: config values runs must have (e.g. ``k=1``).
    """
    knob = KNOBS[method]
    groups: dict[float, list[tuple[float, float]]] = defaultdict(list)
    for result in store.results(method=method, dataset=dataset):
        if not all(result.config.get(k) == v for k, v in config_filter.items()):
            continue
        if utility in result.metrics and attack in result.metrics:
            groups[float(result.config[knob])].append((result.metrics[utility], result.metrics[attack]))
    return [(k, float(np.mean([u for u, _ in v])), float(np.mean([a for _, a in v])), len(v))
            for k, v in sorted(groups.items())]


#: Runs a trade-off curve keeps: features released, and PPGSL at its defaults (the ablation
#: runs with other k, mu, protocol or head sit in the same store and are not on the curve).
TRADEOFF_FILTERS = {"ppgsl": {"k": 1, "mu": 50, "protocol": "sitp", "head": "cos", "parameterization": "sparse"}}


def plot_tradeoff(store: ResultStore, methods: list[str], datasets: list[str], out: Path, *,
                  utilities: tuple[str, ...] = ("lp_auc", "nc_f1")) -> Path:
    """PPGSL Fig. 2/3 style: one panel per (utility, dataset), utility (x) against the GAE+sim
    attack AUC (y), one curve per method through its knob values (runs filtered by
    :data:`TRADEOFF_FILTERS` and ``use_features=True``); 50% is the ideal attack AUC."""
    fig, axes = _panels(len(utilities), len(datasets))
    for row, utility in zip(axes, utilities):
        for ax, dataset in zip(row, datasets):
            for method in methods:
                points = tradeoff_points(store, method, dataset, utility, use_features=True,
                                         **TRADEOFF_FILTERS.get(method, {}))
                if points:
                    ax.plot([100 * p[1] for p in points], [100 * p[2] for p in points], marker="o",
                            label=f"{method} ({KNOBS[method]})")
            ax.axhline(50, color="grey", lw=0.8, ls="--")
            ax.set_title(dataset)
            ax.set_xlabel({"lp_auc": "LP AUC (%)", "nc_f1": "NC micro-F1 (%)"}.get(utility, utility))
            ax.set_ylabel("GAE+sim attack AUC (%)")
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    return _save(fig, out)


def main() -> None:
    parser = argparse.ArgumentParser(description="Privacy-utility plot from a results store.")
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--methods", nargs="+", required=True)
    parser.add_argument("--datasets", nargs="+", required=True)
    parser.add_argument("--epsilons", nargs="*", type=float, default=None)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tradeoff", action="store_true", help="utility vs GAE+sim attack AUC (publishing)")
    args = parser.parse_args()
    if args.tradeoff:
        plot_tradeoff(ResultStore(args.store), args.methods, args.datasets, args.out)
        print(f"wrote {args.out}")
        return
    plot_epsilon_sweep(ResultStore(args.store), args.methods, args.datasets, args.out, args.epsilons,
                       accounting="rigorous", backbone="gcn")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
