"""The bad-input suite: every case of ``tests/reliability/matrix.py`` has its declared outcome.

A failure names the case, the outcome it must have (``clear_error`` or ``handled``) and what it
did instead (the message, or the head of the traceback). ``python scripts/reliability.py`` runs the
same matrix and prints the counts.
"""

from __future__ import annotations

import pytest

from tests.conftest import has_mirror
from tests.reliability.harness import OUTCOMES, run_case
from tests.reliability.matrix import CASES

pytestmark = pytest.mark.usefixtures("one_thread")

_NO_DATA = pytest.mark.skipif(not has_mirror(), reason="dataset mirror (GRAPHPRIV_DATA) not available")


def _params():
    for case in CASES:
        marks = [pytest.mark.slow] if case.slow else []
        if case.needs_data:
            marks.append(_NO_DATA)
        yield pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", _params())
def test_bad_input_has_its_declared_outcome(case, tmp_path):
    observed = run_case(case, tmp_path / "work")
    assert observed.outcome in OUTCOMES
    assert observed.outcome == case.expect, (
        f"{case.id} ({case.what}): expected {case.expect}, got {observed.outcome}: {observed.detail}")


def test_matrix_is_well_formed():
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids))
    assert all(case.expect in ("clear_error", "handled") for case in CASES)
    assert len(CASES) >= 150
