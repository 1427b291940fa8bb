"""The estimator base: hyperparameters, fitted state, privacy statement, files."""

import pytest
import torch
from pydantic import Field

from graphpriv.errors import ConfigError, ModelFileError, NotFittedError
from graphpriv.methods.base import MethodConfig
from graphpriv.methods.estimator import FORMAT, Estimator
from graphpriv.privacy.report import PrivacyReport


class _Config(MethodConfig):
    epsilon: float = Field(1.0, gt=0)
    width: int = Field(3, ge=1)


class _Affine(Estimator):
    """y = w x + b, w drawn from random_state: enough state to check the machinery."""

    config_cls = _Config

    def fit(self, data=None):
        gen = torch.Generator().manual_seed(self.random_state)
        self.weight_ = torch.randn(self.width, generator=gen)
        report = PrivacyReport(unit="edge", relation="r", accounting="rigorous", epsilon=self.epsilon, delta=1e-5)
        return self._fitted(report)

    def predict(self, x):
        self._check_fitted()
        return x * self.weight_

    def _get_state(self):
        return {"weight": self.weight_, "note": "kept", "sizes": [1, 2]}

    def _set_state(self, state):
        assert state["note"] == "kept" and state["sizes"] == [1, 2]
        self.weight_ = state["weight"]


class _Other(_Affine):
    pass


def test_hyperparameters_are_validated_at_construction():
    est = _Affine(epsilon=2.0, random_state=7)
    assert est.epsilon == 2.0 and est.width == 3 and est.get_params() == {"random_state": 7, "epsilon": 2.0, "width": 3}
    with pytest.raises(ConfigError, match=r"unknown hyperparameter\(s\) for _Affine: colour; valid: random_state"):
        _Affine(colour="red")
    with pytest.raises(ConfigError, match=r"invalid hyperparameter for _Affine: width: .*greater than or equal to 1"):
        _Affine(width=0)
    with pytest.raises(ConfigError, match="seed must be an integer"):
        _Affine(random_state=-1)
    assert repr(_Affine(width=5, random_state=2)) == "_Affine(random_state=2, width=5)"


def test_set_params_validates_and_keeps_the_rest():
    est = _Affine(epsilon=2.0)
    assert est.set_params(width=4, random_state=3) is est and est.get_params() == {
        "random_state": 3, "epsilon": 2.0, "width": 4}
    with pytest.raises(ConfigError):
        est.set_params(width=-1)
    assert est.width == 4  # unchanged after a refused change


def test_not_fitted_then_fitted():
    est = _Affine()
    assert not est.is_fitted and not hasattr(est, "weight_")
    with pytest.raises(NotFittedError, match="call fit"):
        est.predict(torch.ones(3))
    with pytest.raises(NotFittedError, match="privacy_report_"):
        est.privacy_report_  # noqa: B018
    with pytest.raises(NotFittedError):
        est.save("unused.pt")
    assert est.fit() is est and est.is_fitted
    assert est.privacy_statement_ == "(1.0000, 1e-05)-DP, edge-level, rigorous accounting"


def test_a_twin_from_get_params_fits_the_same():
    a = _Affine(random_state=5, width=4).fit()
    b = type(a)(**a.get_params()).fit()
    assert torch.equal(a.predict(torch.ones(4)), b.predict(torch.ones(4)))


def test_save_and_load_give_the_same_predictions_and_report(tmp_path):
    est = _Affine(random_state=9, epsilon=3.0).fit()
    path = est.save(tmp_path / "m.pt")
    for loader in (_Affine.load, Estimator.load):
        back = loader(path)
        assert type(back) is _Affine and back.get_params() == est.get_params()
        assert torch.equal(back.predict(torch.ones(3)), est.predict(torch.ones(3)))
        assert back.privacy_report_ == est.privacy_report_


def test_bad_files_are_clear_errors(tmp_path):
    with pytest.raises(ModelFileError, match="no saved estimator"):
        Estimator.load(tmp_path / "missing.pt")
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a torch file" * 10)
    with pytest.raises(ModelFileError, match="not a graphpriv estimator file"):
        Estimator.load(junk)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.ones(2)}, foreign)
    with pytest.raises(ModelFileError, match="no 'graphpriv-estimator' header"):
        Estimator.load(foreign)
    path = _Other(random_state=1).fit().save(tmp_path / "other.pt")
    assert type(_Affine.load(path)) is _Other  # a subclass's file is one of the parent's
    affine = _Affine().fit().save(tmp_path / "a.pt")
    with pytest.raises(ModelFileError, match="holds a _Affine, not a _Other"):
        _Other.load(affine)
    newer = tmp_path / "newer.pt"
    blob = torch.load(path, weights_only=True)
    torch.save({**blob, "format_version": 99}, newer)
    with pytest.raises(ModelFileError, match="newer than this graphpriv reads"):
        Estimator.load(newer)
    damaged = tmp_path / "damaged.pt"
    torch.save({**blob, "params": "{not json"}, damaged)
    with pytest.raises(ModelFileError, match="damaged _Other file"):
        Estimator.load(damaged)
    assert blob["format"] == FORMAT


def test_a_file_that_would_run_code_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "ran"

    class Armed:
        def __reduce__(self):
            return (open, (str(marker), "w"))
    torch.save({"format": FORMAT, "payload": Armed()}, tmp_path / "armed.pt")
    with pytest.raises(ModelFileError, match="never unpickles"):
        Estimator.load(tmp_path / "armed.pt")
    assert not marker.exists()


def test_random_state_none_is_a_fresh_secret_seed(tmp_path):
    a, b = _Affine(width=50), _Affine(width=50)
    assert a.get_params()["random_state"] is None and 0 <= a.random_state < 2**32
    a.fit(), b.fit()
    assert not torch.equal(a.weight_, b.weight_)  # two fresh seeds (a 2^-32 chance of a clash)
    blob = torch.load(a.save(tmp_path / "a.pt"), weights_only=True)
    assert str(a.random_state) not in blob["params"]  # the secret seed is not written
    assert torch.equal(Estimator.load(tmp_path / "a.pt").weight_, a.weight_)


def test_set_params_on_a_fitted_estimator_unfits_it():
    est = _Affine(random_state=1).fit()
    est.set_params(epsilon=5.0)
    assert not est.is_fitted and not hasattr(est, "weight_")
    with pytest.raises(NotFittedError):
        est.privacy_report_  # noqa: B018 - a report of the old epsilon would now be wrong
    assert est.fit().privacy_report_.epsilon == 5.0
    with pytest.raises(AttributeError, match="no attribute 'weigth_'") as info:
        est.weigth_  # noqa: B018 - a typo on a fitted estimator is not "not fitted"
    assert not isinstance(info.value, NotFittedError)
