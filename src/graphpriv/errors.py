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


class StoreError(GraphPrivError, OSError):
    """A results store cannot be opened, read or written (corrupt, foreign, locked or unwritable)."""


def describe_validation_error(exc: Exception) -> str:
    """One line per invalid field of a pydantic ``ValidationError``, without pydantic's URL.

    Args:
        exc: a ``pydantic.ValidationError`` (anything with ``errors()``), or any exception.

    Returns:
        ``"theta: Input should be greater than or equal to 1 (got 0)"``, one such line per invalid
        field (newline-separated; the input named once, not again where the message already has
        "(got ...)"), or ``str(exc)`` for an exception that is not a validation error.
    """
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return str(exc)
    by_field: dict[str, list[str]] = {}
    inputs: dict[str, str] = {}
    for err in errors():  # a union's members (``theta.int``, ``theta.literal['auto']``) share a line
        loc = err.get("loc", ())
        field = str(loc[0]) if loc else "value"
        by_field.setdefault(field, []).append(err.get("msg", "invalid value"))
        if "input" in err and not isinstance(err["input"], dict):
            inputs[field] = f" (got {err['input']!r})"
    joined = {field: " or ".join(dict.fromkeys(msgs)) for field, msgs in by_field.items()}
    # the input is named once: a validator's own message may already say what it got
    parts = [f"{field}: {text}{'' if '(got ' in text else inputs.get(field, '')}" for field, text in joined.items()]
    return "\n".join(parts) if parts else str(exc).split("\n")[0]


class NotFittedError(GraphPrivError, AttributeError):
    """A fitted attribute or a prediction was asked of an estimator before ``fit``."""


class ModelFileError(GraphPrivError, ValueError):
    """A saved estimator file is corrupt, of another estimator class or of a newer format."""
