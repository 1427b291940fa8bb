"""graphpriv: privacy-preserving machine learning on graphs.

One library and command line for training link predictors and node classifiers with a stated
differential-privacy guarantee, publishing or synthesizing graphs, attacking what was released,
and comparing methods under one privacy accountant. See ``graphpriv --help`` and docs/python.md.

The estimators (``fit`` returns ``self``, fitted ``*_`` attributes, ``privacy_report_``,
``save`` / ``load``; PyG ``Data`` in and out) are importable from here; they are loaded on first
use, so ``import graphpriv`` (and the command line) stays light.
"""

from __future__ import annotations

from graphpriv.lazy import lazy_exports

__version__ = "0.1.0"

#: Public name -> module that defines it, or "module:attribute" (imported on first access, PEP 562).
_EXPORTS = {
    "Estimator": "graphpriv.methods.estimator",
    "DPLPLinkPredictor": "graphpriv.methods.dplp_subgraph",
    "SEALGCNLinkPredictor": "graphpriv.methods.dplp_subgraph",
    "SEALLinkPredictor": "graphpriv.methods.dplp_subgraph",
    "LapGraphLinkPredictor": "graphpriv.methods.lapgraph_sgnn",
    "CommonNeighbours": "graphpriv.methods.heuristic",
    "DPARClassifier": "graphpriv.methods.dpar",
    "MLPClassifier": "graphpriv.methods.mlp",
    "GAPClassifier": "graphpriv.methods.gap",
    "EdgeRand": "graphpriv.methods.publishing",
    "LapGraph": "graphpriv.methods.publishing",
    "RandomPerturb": "graphpriv.methods.publishing",
    "DICE": "graphpriv.methods.publishing",
    "PPGSL": "graphpriv.methods.ppgsl",
    "DPLPRanker": "graphpriv.methods.dplp_rank",
    "PrivDPR": "graphpriv.methods.privdpr",
    "PublishedGraph": "graphpriv.data.release",
    "attack": "graphpriv.attacks.suite",
    "load_dataset": "graphpriv.data:load",
    "run_method": "graphpriv.experiments.runner",
    "make_estimator": "graphpriv.experiments.registry",
}

__all__ = ["__version__", *_EXPORTS]  # noqa: PLE0604 - the keys of _EXPORTS are strings

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
