"""Privacy core: units, events, the one accountant, calibration, mechanisms, DP-SGD.

Every noisy step in graphpriv is described by a ``dp_accounting.DpEvent`` and composed by
:class:`graphpriv.privacy.accountant.Ledger`; methods never compute epsilon on their own.

The names below are imported from their modules on first access (PEP 562), so that importing a
light module of the package (``graphpriv.privacy.report``, ``graphpriv.privacy.limits``) does not
load dp-accounting: ``from graphpriv.privacy import Ledger`` works as before.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the module that defines it.
_EXPORTS = {
    "Accounting": "graphpriv.privacy.units",
    "EffectiveRateWorGaussianDpEvent": "graphpriv.privacy.events",
    "GraphRdpAccountant": "graphpriv.privacy.accountant",
    "HypergeometricGroupGaussianDpEvent": "graphpriv.privacy.events",
    "Ledger": "graphpriv.privacy.accountant",
    "PhaseReport": "graphpriv.privacy.report",
    "PrivacyReport": "graphpriv.privacy.report",
    "PrivacyUnit": "graphpriv.privacy.units",
    "calibrate_noise_multiplier": "graphpriv.privacy.calibration",
}

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - the keys of _EXPORTS are strings


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'graphpriv.privacy' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
