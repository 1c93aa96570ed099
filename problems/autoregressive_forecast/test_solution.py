import pytest
import torch
from torch import nn

from solution import autoregressive_forecast


def test_sliding_window_fibonacci():
    context = torch.tensor([[1.0, 2.0], [0.0, 1.0]])
    out = autoregressive_forecast(lambda w: w.sum(dim=1), context, horizon=4)
    assert out.shape == (2, 4)
    assert torch.equal(out, torch.tensor([[3.0, 5.0, 8.0, 13.0], [1.0, 2.0, 3.0, 5.0]]))


def test_model_returning_column_and_window_order():
    # next = 2 * newest - oldest (linear extrapolation); wrong window order breaks it
    model = lambda w: (2 * w[:, -1] - w[:, 0]).unsqueeze(1)  # noqa: E731
    context = torch.tensor([[1.0, 2.0]])
    out = autoregressive_forecast(model, context, horizon=3)
    assert torch.equal(out, torch.tensor([[3.0, 4.0, 5.0]]))
    widths = []
    autoregressive_forecast(lambda w: widths.append(w.shape[1]) or w[:, -1], torch.zeros(1, 3), 3)
    assert widths == [3, 3, 3]


def test_linear_module_no_grad_and_mode_preserved():
    model = nn.Linear(3, 1, bias=False)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.0, 0.5, 0.5]]))
    model.train()
    context = torch.tensor([[2.0, 4.0, 6.0]])
    before = context.clone()
    out = autoregressive_forecast(model, context, horizon=2)
    assert torch.allclose(out, torch.tensor([[5.0, 5.5]]))
    assert not out.requires_grad
    assert model.training
    assert torch.equal(context, before)


def test_zero_horizon_and_single_value_window():
    assert autoregressive_forecast(lambda w: w[:, 0], torch.zeros(3, 2), 0).shape == (3, 0)
    out = autoregressive_forecast(lambda w: w[:, 0] * 2, torch.tensor([[1.0]]), 3)
    assert torch.equal(out, torch.tensor([[2.0, 4.0, 8.0]]))


def test_errors():
    with pytest.raises(ValueError):
        autoregressive_forecast(lambda w: w[:, 0], torch.zeros(4), 2)
    with pytest.raises(ValueError):
        autoregressive_forecast(lambda w: w[:, 0], torch.zeros(1, 2), -1)
    with pytest.raises(ValueError):
        autoregressive_forecast(lambda w: w, torch.zeros(1, 2), 1)
