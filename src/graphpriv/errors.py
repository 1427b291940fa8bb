"""Exception hierarchy of graphpriv.

Every error a user can trigger derives from :class:`GraphPrivError`, and also from the builtin
exception that describes it best (``ValueError`` for bad values), so callers may catch either.
"""


class GraphPrivError(Exception):
    """Base class of every graphpriv error."""


class PrivacyError(GraphPrivError, ValueError):
    """A privacy parameter or guarantee is invalid."""


class BudgetExceededError(PrivacyError):
    """No mechanism parameter meets the requested (epsilon, delta) budget."""


class UnsupportedMechanismError(PrivacyError):
    """The accountant cannot analyse an event; graphpriv fails closed."""


class SensitivityError(PrivacyError):
    """An observed sensitivity exceeds its proven bound (a bug in the extractor or the bound)."""


class DatasetError(GraphPrivError, ValueError):
    """A dataset cannot be found, read or cleaned."""


class ChecksumError(DatasetError):
    """A raw dataset file does not match its published sha256."""


class GraphFormatError(DatasetError):
    """A user graph file is malformed."""


class ConfigError(GraphPrivError, ValueError):
    """A method configuration is invalid."""
