"""train_rows, the DP-SGD of DPAR and dp-mlp, runs graphpriv's one noisy step (DPSGD with a ghost
clipped sum) and trains the same model, bit for bit, as its loop before that refactor."""

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from graphpriv.methods.dpar import DPARConfig
from graphpriv.methods.node_classifier import steps_and_rate, train_rows
from graphpriv.nn.decoupled import DecoupledModel, feature_mlp, padded_rows
from graphpriv.privacy import dpar_accounting as acc
from graphpriv.privacy.accountant import Ledger
from graphpriv.privacy.ghost_clipping import decoupled_clipped_sum
from graphpriv.privacy.sampling import PoissonSampler
from graphpriv.privacy.units import PrivacyUnit

pytestmark = pytest.mark.usefixtures("one_thread")


def _old_train_rows(x, y, pi, *, num_classes, config, steps, sample_rate, noise_std, seed, noise_scale=1.0):
    """The private branch of train_rows before the one noisy step (the reference)."""
    torch.manual_seed(seed)
    index, weight = (torch.from_numpy(a) for a in padded_rows(pi))
    model = DecoupledModel(feature_mlp(x.shape[1], config.hidden, num_classes, config.dropout))
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    generator = torch.Generator().manual_seed(seed + 1)
    model.train()
    noise_std = noise_std * noise_scale
    sampler = PoissonSampler(index.shape[0], sample_rate, generator=generator)
    for _ in range(steps):
        rows = sampler.sample()
        if rows.numel():
            summed, _ = decoupled_clipped_sum(model, x[index[rows]], weight[rows], y[rows], config.max_grad_norm)
        else:
            summed = {name: torch.zeros_like(p) for name, p in model.named_parameters()}
        for name, param in model.named_parameters():
            noise = torch.randn(param.shape, generator=generator) * noise_std
            param.grad = (summed[name] + noise) / sampler.expected_batch_size
        optimizer.step()
    return model.eval()


def _rows(n, seed):
    """A Pi like DPAR's: identity plus a few top-K rows, column-clipped."""
    rng = np.random.default_rng(seed)
    pi = sp.identity(n, format="lil")
    for v in rng.choice(n, 8, replace=False):
        pi[v, rng.choice(n, 3, replace=False)] = rng.random(3)
    return sp.csr_matrix(pi)


@pytest.mark.parametrize(("accounting", "noise_scale", "batch"), [("rigorous", 1.0, 12), ("paper", 1.0, 12),
                                                                  ("rigorous", 0.01, 3)])
def test_train_rows_is_the_pre_refactor_loop_bit_for_bit(accounting, noise_scale, batch):
    n, f = 60, 7
    x = torch.randn(n, f, generator=torch.Generator().manual_seed(0))
    y = torch.randint(0, 3, (n,), generator=torch.Generator().manual_seed(1))
    pi = _rows(n, 2)
    group = int(np.diff(pi.tocsc().indptr).max())
    config = DPARConfig(epochs=3, batch_size=batch, accounting=accounting, r=1.5)
    steps, rate = steps_and_rate(n, config.epochs, config.batch_size)
    noise = acc.sgd_noise(3.0, 1e-4, sample_rate=rate, steps=steps, group_size=group, max_grad_norm=1.0, r=config.r,
                          accounting=accounting)
    old = _old_train_rows(x, y, pi, num_classes=3, config=config, steps=steps, sample_rate=rate,
                          noise_std=noise.noise_std, seed=5, noise_scale=noise_scale)
    ledger = Ledger(PrivacyUnit.NODE, delta=1e-4)
    new = train_rows(x, y, pi, num_classes=3, config=config, steps=steps, sample_rate=rate, seed=5,
                     noise_multiplier=noise.noise_multiplier, sensitivity=noise.sensitivity,
                     group_size=acc.sgd_group(group, accounting), ledger=ledger, accounting=accounting,
                     noise_scale=noise_scale)
    for (name, a), (_, b) in zip(old.state_dict().items(), new.state_dict().items()):
        assert torch.equal(a, b), name
    # every step spent DPAR's DP-SGD event for its mode on the ledger
    phase = ledger.report().phases[0]
    want = acc.sgd_event(noise.noise_multiplier, sample_rate=rate, group_size=group, accounting=accounting)
    assert ledger.phases == ["dp-sgd"] and phase.steps == steps and phase.noise_multiplier == noise.noise_multiplier
    assert ledger._phases["dp-sgd"] == [[want, steps, None]]


def test_a_private_train_rows_needs_a_ledger():
    config = DPARConfig(epochs=1)
    with pytest.raises(ValueError, match="ledger"):
        train_rows(torch.randn(10, 3), torch.zeros(10, dtype=torch.long), sp.identity(10, format="csr"),
                   num_classes=2, config=config, steps=1, sample_rate=0.5, seed=0, noise_multiplier=1.0)
