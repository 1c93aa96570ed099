import math

import pytest
import torch
from torch import nn

from solution import train_one_epoch

BATCHES = [
    (torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0]])),
    (torch.tensor([[0.0, 1.0]]), torch.tensor([[2.0]])),
    (torch.tensor([[1.0, 1.0]]), torch.tensor([[1.0]])),
]


def _setup():
    model = nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        model.weight.zero_()
    return model, torch.optim.SGD(model.parameters(), lr=0.1)


def test_accumulation_with_leftover_group():
    model, opt = _setup()
    out = train_one_epoch(model, iter(BATCHES), opt, nn.MSELoss(), accum_steps=2)
    # step 1: grads (-2, 0)/2 + (0, -4)/2 -> w = (0.1, 0.2)
    # leftover: pred 0.3, grad 2*(0.3-1)*(1, 1)/2 = (-0.7, -0.7) -> w = (0.17, 0.27)
    assert torch.allclose(model.weight, torch.tensor([[0.17, 0.27]]), atol=1e-6)
    assert out["steps"] == 2 and out["batches"] == 3
    assert out["loss"] == pytest.approx((1.0 + 4.0 + 0.49) / 3, abs=1e-6)


def test_clipping_applies_to_accumulated_gradient():
    model, opt = _setup()
    out = train_one_epoch(model, BATCHES[:2], opt, nn.MSELoss(), accum_steps=2, max_grad_norm=1.0)
    # accumulated grad (-1, -2) has norm sqrt(5) and is scaled to norm 1 before the step
    s = math.sqrt(5.0)
    assert torch.allclose(model.weight, torch.tensor([[0.1 / s, 0.2 / s]]), atol=1e-6)
    assert out["steps"] == 1


def test_stale_gradients_cleared_and_train_mode_set():
    model, opt = _setup()
    model.eval()
    model.weight.grad = torch.full((1, 2), 50.0)
    out = train_one_epoch(model, BATCHES[:1], opt, nn.MSELoss(), accum_steps=1)
    assert model.training
    assert torch.allclose(model.weight, torch.tensor([[0.2, 0.0]]), atol=1e-6)
    assert out == {"loss": pytest.approx(1.0), "steps": 1, "batches": 1}


def test_accum_one_steps_every_batch():
    model, opt = _setup()
    out = train_one_epoch(model, BATCHES, opt, nn.MSELoss())
    assert out["steps"] == 3
    # w after b1: (0.2, 0); b2: pred 0 -> (0.2, 0.4); b3: pred 0.6, grad 2*(-0.4) -> +0.08
    assert torch.allclose(model.weight, torch.tensor([[0.28, 0.48]]), atol=1e-6)


def test_empty_loader_and_errors():
    model, opt = _setup()
    out = train_one_epoch(model, [], opt, nn.MSELoss(), accum_steps=4)
    assert math.isnan(out["loss"]) and out["steps"] == 0 and out["batches"] == 0
    assert torch.equal(model.weight, torch.zeros(1, 2))
    with pytest.raises(ValueError):
        train_one_epoch(model, BATCHES, opt, nn.MSELoss(), accum_steps=0)
