"""Deliberately broken mechanisms, for testing the privacy audit only."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from graphpriv.privacy import mechanisms

__all__ = ["broken_noise"]


@contextmanager
def broken_noise(factor: float) -> Iterator[None]:
    """Within the block, EdgeRand's flip probability, LapGraph's Laplace scales, the DP-SGD noise
    of DPAR and dp-mlp (``methods.dpar.train_rows``) and PrivDPR's Gaussian noise on V's gradient
    (``synthesis.privdpr.train_embeddings``) are ``factor`` times their calibrated values, while the
    accounting still claims the calibrated guarantee: a privacy bug the audit must catch (issue 10)."""
    previous = mechanisms._AUDIT_TEST_NOISE_FACTOR
    mechanisms._AUDIT_TEST_NOISE_FACTOR = float(factor)
    try:
        yield
    finally:
        mechanisms._AUDIT_TEST_NOISE_FACTOR = previous
