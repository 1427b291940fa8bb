"""Privacy core: units, events, the one accountant, calibration, mechanisms, DP-SGD.

Every noisy step in graphpriv is described by a ``dp_accounting.DpEvent`` and composed by
:class:`graphpriv.privacy.accountant.Ledger`; methods never compute epsilon on their own.
"""

from graphpriv.privacy.accountant import GraphRdpAccountant, Ledger
from graphpriv.privacy.calibration import calibrate_noise_multiplier
from graphpriv.privacy.events import (
    EffectiveRateWorGaussianDpEvent,
    HypergeometricGroupGaussianDpEvent,
)
from graphpriv.privacy.report import PhaseReport, PrivacyReport
from graphpriv.privacy.units import Accounting, PrivacyUnit

__all__ = [
    "Accounting",
    "EffectiveRateWorGaussianDpEvent",
    "GraphRdpAccountant",
    "HypergeometricGroupGaussianDpEvent",
    "Ledger",
    "PhaseReport",
    "PrivacyReport",
    "PrivacyUnit",
    "calibrate_noise_multiplier",
]
