"""Every method's small fixed-seed cell still gives the numbers pinned in golden.json.

The pinned numbers were computed by the per-method ``run`` functions before the estimator
redesign (``python -m tests.regression.cells`` at the commit that added this file); the redesign
moves training into estimators and evaluation into protocols, and must not change a number.
"""

import json
import math
import os

import pytest

from tests.regression.cells import (
    CELLS,
    GOLDEN,
    GOLDEN_AVX512,
    avx512_overrides,
    golden_values,
    has_avx512,
    has_intel_avx512,
    run_cell,
    summary,
)

# golden.json, with golden_avx512.json's metrics on AVX-512 machines (cells.py says why)
GOLDEN_VALUES = golden_values()
pytestmark = pytest.mark.usefixtures("one_thread")


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def test_every_method_has_a_cell():
    from graphpriv.experiments.registry import METHODS

    assert set(CELLS) == set(METHODS) == set(GOLDEN_VALUES)


@pytest.mark.parametrize("method", sorted(CELLS))
def test_cell_matches_the_pinned_numbers(method):
    from graphpriv.experiments.registry import ESTIMATORS, make_estimator

    result = run_cell(method)
    # the run fitted the registry's estimator for this id, with its variant and preset
    fitted, fresh = result.estimator, make_estimator(method, CELLS[method], random_state=0)
    assert type(fitted) is ESTIMATORS[method] is type(fresh) and fitted.get_params() == fresh.get_params()
    got, want = summary(result), GOLDEN_VALUES[method]
    assert set(got["metrics"]) == set(want["metrics"]), method
    bad = {k: (got["metrics"][k], v) for k, v in want["metrics"].items() if not _close(got["metrics"][k], v)}
    assert not bad, f"{method}: metrics changed (got, pinned): {bad}"
    assert _close(got["epsilon"], want["epsilon"]) and _close(got["delta"], want["delta"]), (method, got, want)


def test_avx512_pins_replace_only_their_metrics(tmp_path):
    """An AVX-512 machine reads golden.json with golden_avx512.json's metrics in their place, and
    nothing else of it changes; an AVX2 machine reads golden.json as written."""
    base, avx512 = golden_values(avx512=False), golden_values(avx512=True)
    assert base == json.loads(GOLDEN.read_text())
    overrides = json.loads(GOLDEN_AVX512.read_text())
    assert overrides and set(overrides) <= set(base)
    for method in base:
        want = {**base[method]["metrics"], **overrides.get(method, {})}
        assert avx512[method]["metrics"] == want
        assert (avx512[method]["epsilon"], avx512[method]["delta"]) == (base[method]["epsilon"], base[method]["delta"])
    # the writer's split recovers golden_avx512.json from the numbers an AVX-512 machine computes
    assert avx512_overrides(avx512, base) == overrides
    assert avx512_overrides(base, base) == {}
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("flags\t\t: fpu sse avx2 avx512f avx512dq\n")
    assert has_avx512(cpuinfo)
    cpuinfo.write_text("flags\t\t: fpu sse avx2\n")
    assert not has_avx512(cpuinfo) and not has_avx512(tmp_path / "missing")
    # the AVX-512 pins are Intel's: MKL dispatches by vendor, an AVX-512 AMD CPU computes golden.json's
    for vendor, flags, want in (("GenuineIntel", "avx2 avx512f", True), ("AuthenticAMD", "avx2 avx512f", False),
                                ("GenuineIntel", "avx2", False)):
        cpuinfo.write_text(f"vendor_id\t: {vendor}\nflags\t\t: fpu sse {flags}\n")
        assert has_intel_avx512(cpuinfo) is want, (vendor, flags)
    assert not has_intel_avx512(tmp_path / "missing")


def test_pin_kernels_sets_strict_cnr_only_on_avx512(monkeypatch):
    """MKL's strict CNR mode on AVX-512 machines, the plain AVX2 branch elsewhere (what golden.json
    was pinned with); a value already in the environment wins."""
    from tests.regression import cells

    for avx512, want in ((True, "AVX2,STRICT"), (False, "AVX2")):
        monkeypatch.delenv("MKL_CBWR", raising=False)
        monkeypatch.delenv("ATEN_CPU_CAPABILITY", raising=False)
        monkeypatch.setattr(cells, "has_avx512", lambda avx512=avx512: avx512)
        cells.pin_kernels()
        assert os.environ["MKL_CBWR"] == want and os.environ["ATEN_CPU_CAPABILITY"] == "avx2"
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")
    cells.pin_kernels()
    assert os.environ["MKL_CBWR"] == "COMPATIBLE"
