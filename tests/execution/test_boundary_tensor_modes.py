"""Tensors cross as bytes made by torch's own operations, outside the torch function mode
a test set: pyro's conftest sets the default device (`torch.set_default_device`, a mode
every operation goes through), and every tensor the boundary encoded or decoded paid for
it (half of its time in the codec of pyro's RWS steps). A mode that moves what a factory
makes (the meta device) made the judge's encoding of a CPU argument fail."""

from __future__ import annotations

import torch
from execution_support import engine_fixture, run_one

from curator.execution import boundary

engine = engine_fixture(("strong",))

MODE_TESTS = """\
import torch

from solution import double

torch.set_default_device("meta")


def test_a_cpu_tensor_crosses_under_a_default_device():
    x = torch.arange(6.0, device="cpu").reshape(2, 3)
    out = double(x)
    assert out.device.type == "cpu" and torch.equal(out, x * 2)
"""
MODE_SOLUTION = "def double(x):\n    return x * 2\n"


def test_a_tensor_crosses_under_the_tests_default_device(engine):
    result = run_one(engine, MODE_SOLUTION, MODE_TESTS, timeout=60)
    assert result.outcome == "passed", (result.reason, result.stdout[-3000:])


def test_encoding_and_decoding_run_outside_a_device_mode():
    x = torch.arange(6.0).reshape(2, 3).requires_grad_()
    with torch.device("meta"):
        record = boundary._tensor_record(x)
        y = boundary._make_tensor(*record[:6], form=record[7])
        digest = boundary._values_digest(x)
    assert y.device.type == "cpu" and torch.equal(y.detach(), x.detach()) and y.requires_grad
    assert digest == boundary._values_digest(x)
