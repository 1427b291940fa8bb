"""The estimator base: what a user keeps (hyperparameters, ``fit``, fitted state, privacy, save/load).

Modelled on scikit-learn's estimators (hyperparameters in the constructor, ``get_params`` /
``set_params``, ``fit`` returning ``self``, fitted state in trailing-underscore attributes, a
``NotFittedError`` before ``fit``) and on Opacus's engine (the privacy spent is kept on the
object). Hyperparameters are validated by the method's pydantic config (:class:`MethodConfig`):
an unknown name or an out-of-range value is a :class:`~graphpriv.errors.ConfigError` at
construction. ``random_state`` is a hyperparameter, so ``type(est)(**est.get_params())`` fitted on
the same data gives the same model.

Files (``save`` / ``load``): one ``torch.save`` of plain containers, tensors and strings, read back
with ``torch.load(weights_only=True)`` (nothing is unpickled but tensors): the format name and
version, the estimator class and its module (only graphpriv's own modules are ever imported to
load one), the graphpriv version, the hyperparameters and the privacy report as JSON, and the
subclass's fitted state (``_get_state``: tensors, numbers, strings, lists, dicts).
"""

from __future__ import annotations

import importlib
import json
import secrets
from pathlib import Path
from typing import Any, ClassVar

import torch

from graphpriv.data.validation import check_seed
from graphpriv.errors import ConfigError, ModelFileError, NotFittedError, PrivacyError, describe_validation_error
from graphpriv.methods.base import MethodConfig
from graphpriv.privacy.limits import check_delta
from graphpriv.privacy.report import PrivacyReport

__all__ = ["FORMAT", "FORMAT_VERSION", "Estimator"]

#: The file format name and the newest version this graphpriv reads and writes.
FORMAT = "graphpriv-estimator"
FORMAT_VERSION = 1

_CLASSES: dict[str, type[Estimator]] = {}


class Estimator:
    """Base of every graphpriv estimator.

    Subclasses set ``config_cls`` (the pydantic hyperparameters) and implement ``fit`` (ending with
    :meth:`_fitted`), ``_get_state`` / ``_set_state`` (the fitted state as tensors and plain values)
    and their task's methods (``predict_proba``, ``predict``, ``publish``, ``generate``, ...).

    Args:
        random_state: seed of every random draw of ``fit``, noise included: an integer in
            [0, 2^32 - 1] reproduces a run (experiments), and anyone who knows it can replay the
            noise, so a fixed seed must stay as secret as the data; ``None`` (the default) draws a
            fresh seed from the operating system's entropy that never leaves the object (it is not
            in ``get_params`` nor in a saved file): use it for a release.
        **params: the hyperparameters of ``config_cls`` (defaults for the others).

    Attributes:
        privacy_report_: the :class:`~graphpriv.privacy.report.PrivacyReport` of ``fit`` (unit,
            relation, epsilon, delta, phases, accounting); ``None`` for a non-private estimator,
            which :attr:`privacy_statement_` then says.

    Raises:
        ConfigError: an unknown hyperparameter or an invalid value (one line per field), or a bad
            ``random_state``.
    """

    config_cls: ClassVar[type[MethodConfig]]
    #: The constructor argument beside the hyperparameters that picks the estimator's variant (DPAR's
    #: ``appr``, PrivDPR's ``gradient_bound``, ...), kept as the attribute of that name and checked
    #: by :meth:`_check_variant`; None (default) for an estimator without one. :meth:`get_params`
    #: lists it after ``random_state`` and :meth:`set_params` changes it.
    variant_param: ClassVar[str | None] = None
    #: Private attributes ``fit`` sets beside the public ``*_`` ones (dropped with them when the
    #: estimator is unfitted by :meth:`set_params`).
    _fitted_private: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _CLASSES[cls.__name__] = cls

    def __init__(self, random_state: int | None = None, **params: Any) -> None:
        self._config = self._validate(params)
        self._set_random_state(random_state)

    def _set_random_state(self, random_state: int | None) -> None:
        """Keep the given seed (``None`` in ``get_params``) and the effective one, ``random_state``."""
        self._random_state_param = None if random_state is None else check_seed(random_state)
        self.random_state = (secrets.randbits(32) if random_state is None  # fresh, secret: never saved
                             else self._random_state_param)

    # -- hyperparameters ---------------------------------------------------------------------------

    @classmethod
    def _validate(cls, params: dict[str, Any], base: MethodConfig | None = None) -> MethodConfig:
        fields = cls.config_cls.model_fields
        unknown = set(params) - set(fields)
        if unknown:
            raise ConfigError(f"unknown hyperparameter(s) for {cls.__name__}: {', '.join(sorted(unknown))}; valid: "
                              f"random_state, {', '.join(sorted(fields))}")
        values = {**(base.model_dump() if base is not None else {}), **params}
        try:
            return cls.config_cls(**values)
        except ValueError as exc:  # pydantic.ValidationError: one line per invalid field
            raise ConfigError(f"invalid hyperparameter for {cls.__name__}: {describe_validation_error(exc)}") from None

    @property
    def config(self) -> MethodConfig:
        """The validated hyperparameters (a pydantic model; read-only: use :meth:`set_params`)."""
        return self._config.model_copy()

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Every hyperparameter (JSON values), ``random_state`` and the variant argument
        (:attr:`variant_param`, when the class has one): ``type(self)(**get_params())`` builds an
        unfitted twin. ``deep`` is accepted for scikit-learn compatibility."""
        params: dict[str, Any] = {"random_state": self._random_state_param}
        if self.variant_param is not None:
            params[self.variant_param] = getattr(self, self.variant_param)
        return {**params, **self._config.model_dump(mode="json")}

    def set_params(self, **params: Any) -> Estimator:
        """Change hyperparameters or the variant argument (validated as in the constructor); returns
        ``self``. A fitted estimator becomes unfitted (its ``*_`` attributes are dropped): its
        model, release or privacy report would no longer match its hyperparameters.

        Raises:
            ConfigError: an unknown name or an invalid value; nothing is changed then.
        """
        name = self.variant_param
        variant = params.pop(name, getattr(self, name)) if name is not None else None
        has_seed = "random_state" in params
        seed = params.pop("random_state", None)
        if has_seed and seed is not None:
            check_seed(seed)
        config = self._validate(params, base=self._config)
        if name is not None:
            variant = self._check_variant(variant, config)  # before anything changes
        self._config = config
        if has_seed:
            self._set_random_state(seed)
        if name is not None:
            setattr(self, name, variant)
        self._unfit()
        return self

    def _check_variant(self, value: Any, config: MethodConfig) -> Any:
        """The variant argument ``value`` checked against the (new) hyperparameters ``config``;
        subclasses with a :attr:`variant_param` implement it (raising ConfigError)."""
        raise NotImplementedError

    def _unfit(self) -> None:
        """Drop the fitted state: every public ``*_`` attribute, ``_fitted_private`` and the flag."""
        for name in [n for n in self.__dict__ if n.endswith("_") and not n.startswith("_")]:
            del self.__dict__[name]
        for name in ("_is_fitted", *self._fitted_private):
            self.__dict__.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name.endswith("_") and not name.startswith("_") and not self.__dict__.get("_is_fitted"):
            raise NotFittedError(f"{type(self).__name__} has no {name} before fit; call fit(data) first")
        config = self.__dict__.get("_config")
        if config is not None and name in type(config).model_fields:
            return getattr(config, name)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def __repr__(self) -> str:
        defaults = self.config_cls().model_dump(mode="json")
        changed = {k: v for k, v in self.get_params().items() if k == "random_state" and v is not None
                   or k != "random_state" and defaults.get(k) != v}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in changed.items())})"

    # -- fitted state ------------------------------------------------------------------------------

    @property
    def is_fitted(self) -> bool:
        """Whether :meth:`fit` has completed (or the estimator was loaded)."""
        return bool(self.__dict__.get("_is_fitted"))

    def _check_fitted(self) -> None:
        """Raise :class:`NotFittedError` unless fitted."""
        if not self.is_fitted:
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit(data) first")

    def _fitted(self, privacy_report: PrivacyReport | None) -> Estimator:
        """Mark the end of ``fit``: record the privacy report; returns ``self``."""
        self.privacy_report_ = privacy_report
        self._is_fitted = True
        return self

    @property
    def privacy_statement_(self) -> str:
        """One line: the guarantee of the fitted estimator, or that there is none."""
        self._check_fitted()
        p = self.privacy_report_
        if p is None:
            return "non-private: no differential-privacy guarantee"
        return f"({p.epsilon:.4f}, {p.delta:g})-DP, {p.unit}-level, {p.accounting} accounting"

    def epsilon_at(self, delta: float) -> float:
        """The epsilon of the fitted noise at another ``delta``: the same phases, neighbouring
        relation and accounting as ``privacy_report_``, composed again by the fit's ledger
        (``ledger_``). At ``privacy_report_.delta`` it is ``privacy_report_.epsilon``; a privacy
        audit asks for it at the small delta its one-run bound needs.

        Args:
            delta: in (0, 1).

        Returns:
            epsilon (float, >= 0).

        Raises:
            NotFittedError: before ``fit``. PrivacyError: a non-private estimator (no guarantee), a
                bad ``delta``, or an estimator read by :meth:`load` (a file keeps the privacy
                report, not the ledger: fit again to ask for another delta).
        """
        self._check_fitted()
        report = self.privacy_report_
        if report is None:
            raise PrivacyError(f"this {type(self).__name__} is non-private: it has no epsilon at any delta")
        ledger = self.__dict__.get("ledger_")
        if ledger is None:
            raise PrivacyError(f"this {type(self).__name__} was read from a file, which keeps its privacy report "
                               f"(epsilon {report.epsilon:.4g} at delta {report.delta:g}) but not the ledger; fit it "
                               "again to ask for the epsilon at another delta")
        return float(ledger.epsilon(check_delta(delta)))

    def _get_state(self) -> dict[str, Any]:
        """The fitted state to save: tensors, numbers, strings, lists and dicts of them."""
        raise NotImplementedError

    def _set_state(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`_get_state` returned (the hyperparameters are already set)."""
        raise NotImplementedError

    @staticmethod
    def _weights(module: torch.nn.Module) -> dict[str, torch.Tensor]:
        """A detached copy of ``module``'s state dict, for :meth:`_get_state`."""
        return {k: v.detach().clone() for k, v in module.state_dict().items()}

    @staticmethod
    def _load_weights(module: torch.nn.Module, weights: dict[str, torch.Tensor]) -> torch.nn.Module:
        """``module`` with ``weights`` loaded, in eval mode, for :meth:`_set_state`.

        Raises:
            ValueError: missing, unexpected or mis-shaped tensors (the first line of torch's message).
        """
        try:
            module.load_state_dict(weights)
        except RuntimeError as exc:
            raise ValueError(str(exc).splitlines()[0]) from None
        return module.eval()

    # -- files -------------------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the fitted estimator: hyperparameters, privacy report, graphpriv version, state.

        What the state holds is each class's (its docstring says): the model weights, which the
        privacy guarantee covers, and for some classes what prediction needs from the training
        data (e.g. the training graph a link predictor extracts subgraphs from) and facts of it
        (``info_``), which it does not cover: keep such a file as private as the data. A
        ``random_state=None`` seed is never written.

        Returns:
            ``path``.

        Raises:
            NotFittedError: before ``fit``.
        """
        from graphpriv import __version__

        self._check_fitted()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        report = self.privacy_report_
        torch.save({"format": FORMAT, "format_version": FORMAT_VERSION, "class": type(self).__name__,
                    "module": type(self).__module__,
                    "graphpriv_version": __version__, "params": json.dumps(self.get_params()),
                    "privacy_report": report.model_dump_json() if report is not None else "",
                    "state": self._get_state()}, path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> Estimator:
        """Read an estimator written by :meth:`save` (``Estimator.load`` reads any class; a
        subclass's ``load`` only its own).

        Raises:
            ModelFileError: a missing, corrupt or foreign file, a newer format, or a file of
                another estimator class.
        """
        path = Path(path)
        if not path.is_file():
            raise ModelFileError(f"no saved estimator at {path}")
        try:
            blob = torch.load(path, weights_only=True, map_location="cpu")
        except Exception as exc:  # noqa: BLE001 - torch raises many types for corrupt or unsafe files
            raise ModelFileError(f"{path} is not a graphpriv estimator file (unreadable, or it holds objects "
                                 f"graphpriv never unpickles: {str(exc).splitlines()[0][:200]})") from None
        if not isinstance(blob, dict) or blob.get("format") != FORMAT:
            raise ModelFileError(f"{path} is not a graphpriv estimator file (no {FORMAT!r} header)")
        version = blob.get("format_version")
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise ModelFileError(f"{path} has estimator format {version!r}, newer than this graphpriv reads "
                                 f"({FORMAT_VERSION}); upgrade graphpriv (it was written by graphpriv "
                                 f"{blob.get('graphpriv_version')})")
        target = _CLASSES.get(str(blob.get("class")))
        module = blob.get("module")
        if target is None and isinstance(module, str) and module.startswith("graphpriv."):
            try:  # a class of graphpriv's own whose module this process has not imported yet
                importlib.import_module(module)
            except ImportError:
                pass
            target = _CLASSES.get(str(blob.get("class")))
        if target is None or not issubclass(target, cls):
            raise ModelFileError(f"{path} holds a {blob.get('class')}, not a {cls.__name__}; load it with "
                                 f"{blob.get('class')}.load or Estimator.load")
        try:
            params = json.loads(blob["params"])
            est = target(**params)
            est._set_state(blob["state"])
            report = PrivacyReport.model_validate_json(blob["privacy_report"]) if blob["privacy_report"] else None
        except (KeyError, TypeError, ValueError, RuntimeError, AttributeError, IndexError) as exc:
            raise ModelFileError(f"{path} is a damaged {blob.get('class')} file ({type(exc).__name__}: "
                                 f"{str(exc).splitlines()[0][:200]})") from None
        return est._fitted(report)
