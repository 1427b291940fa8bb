"""Shared fixtures of the transductive node classifiers' tests (GAP, ProGAP, GCN); a test module's own
``graph`` or ``split`` fixture takes precedence."""

import numpy as np
import pytest

from graphpriv.testing.graphs import labelled_sbm


@pytest.fixture(scope="package")
def graph():
    """Weak features (signal 0.3), strong communities: what aggregation over the graph adds shows."""
    return labelled_sbm(240, 3, p_in=0.12, p_out=0.004, signal=0.3, seed=7)


@pytest.fixture(scope="package")
def split(graph):
    """``(train [120], test [120])`` sorted node ids of :func:`graph`."""
    perm = np.random.default_rng(0).permutation(graph.num_nodes)
    return np.sort(perm[:120]), np.sort(perm[120:])
