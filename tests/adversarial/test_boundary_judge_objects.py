"""The test's own objects after a call: what the solution wrote into them comes back as
data, and no solution code left inside them answers for the test afterwards.

A test hands the solution its model, its tensors, its containers; the solution's changes
to them are copied back into the judge's objects. The version counter torch keeps misses
writes through `.data` and `.numpy()` (a target network's soft update), which must come
back all the same.
"""

from __future__ import annotations

import pytest
from execution_support import engine_fixture, run_one

engine = engine_fixture()

# DQN's and DDPG's target update, BYOL's and MoCo's momentum encoder: written through
# `.data`, which torch's version counter does not see; and through a numpy view.
SOFT_UPDATE_TESTS = """\
import torch

from solution import soft_update


def test_parameters_of_a_module():
    torch.manual_seed(0)
    target, source = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    before = [p.detach().clone() for p in target.parameters()]
    soft_update(target, source, 0.25)
    for old, new, src in zip(before, target.parameters(), source.parameters()):
        assert torch.allclose(new, 0.75 * old + 0.25 * src)


def test_a_tensor():
    x = torch.zeros(3)
    soft_update(x, torch.ones(3), 0.25)
    assert torch.allclose(x, torch.full((3,), 0.25))
"""
SOFT_UPDATES = {
    "through .data": """\
import torch


def soft_update(target, source, tau):
    if isinstance(target, torch.Tensor):
        target.data.mul_(1 - tau).add_(tau * source)
        return
    for t, s in zip(target.parameters(), source.parameters()):
        t.data.copy_(tau * s.data + (1.0 - tau) * t.data)
""",
    "through a numpy view": """\
import torch


def soft_update(target, source, tau):
    if isinstance(target, torch.Tensor):
        target.numpy()[:] = ((1 - tau) * target + tau * source).numpy()
        return
    for t, s in zip(target.parameters(), source.parameters()):
        t.detach().numpy()[...] = ((1 - tau) * t + tau * s).detach().numpy()
""",
}


@pytest.mark.parametrize("name", sorted(SOFT_UPDATES))
def test_values_written_past_the_version_counter_come_back(engine, name):
    result = run_one(engine, SOFT_UPDATES[name], SOFT_UPDATE_TESTS, timeout=60)
    assert result.outcome == "passed", (name, result.reason)
    control = run_one(engine, "def soft_update(target, source, tau):\n    pass\n",
                      SOFT_UPDATE_TESTS, timeout=60)
    assert control.outcome == "failed", control.reason
