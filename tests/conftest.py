"""Test configuration: point GRAPHPRIV_DATA at the shared/datasets folder beside the checkout, if
any, and pin the CPU kernels' instruction set for reproducible floats."""

from __future__ import annotations

import os

# The golden cells (tests/regression) pin fixed-seed trainings to 1e-6; torch's and MKL's kernels
# round differently on AVX-512 and AVX2 machines (GAP's 100-epoch cells flipped one prediction on
# an AVX2-only machine; on an AVX-512 Xeon three cells differed until MKL's strict CNR mode).
# pin_kernels (tests/regression/cells.py says what it pins and what still differs) runs before
# torch is first imported: every machine takes the AVX2 kernels.
from tests.regression.cells import pin_kernels

pin_kernels()
from pathlib import Path

if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    # pytest-xdist (``make test`` runs ``-n auto``): one process per core, so each takes one
    # intra-op thread; two threads per process on a 2-core machine make small loops crawl
    import torch

    torch.set_num_threads(1)

import pytest

ROOT = Path(__file__).resolve().parents[1]
MIRROR = ROOT.parent / "shared" / "datasets"
if "GRAPHPRIV_DATA" not in os.environ and MIRROR.is_dir():
    os.environ["GRAPHPRIV_DATA"] = str(MIRROR)


def has_mirror() -> bool:
    """True when the dataset mirror is available."""
    return bool(os.environ.get("GRAPHPRIV_DATA")) and Path(os.environ["GRAPHPRIV_DATA"]).is_dir()


needs_data = pytest.mark.skipif(not has_mirror(), reason="dataset mirror (GRAPHPRIV_DATA) not available")


@pytest.fixture(scope="module")
def one_thread():
    """Small-tensor training loops (DP-SGD steps, PrivDPR steps): on a busy 2-core machine two
    intra-op threads make them up to ~100x slower; opt in with ``pytestmark``."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
