import pytest
import torch

from solution import mase


def test_hand_computed_single_series():
    insample = torch.tensor([1.0, 3.0, 2.0, 4.0])  # naive diffs 2, 1, 2 -> scale 5/3
    value = mase(torch.tensor([5.0, 5.0]), torch.tensor([4.0, 6.0]), insample)
    assert isinstance(value, float)
    assert value == pytest.approx(0.6)


def test_seasonal_scale():
    insample = torch.tensor([1.0, 3.0, 2.0, 4.0])  # season 2 diffs: |2-1|, |4-3| -> 1
    assert mase(torch.tensor([5.0, 5.0]), torch.tensor([4.0, 6.0]), insample, season=2) == pytest.approx(1.0)


def test_batch_is_mean_of_per_series_values():
    insample = torch.tensor([[1.0, 3.0, 2.0, 4.0], [0.0, 10.0, 0.0, 10.0]])  # scales 5/3, 10
    forecast = torch.tensor([[5.0, 5.0], [0.0, 0.0]])
    actual = torch.tensor([[4.0, 6.0], [4.0, 0.0]])  # maes 1, 2
    # per series 0.6 and 0.2 -> 0.4 (pooled ratio would be 1.5 / (35/6) = 0.257)
    assert mase(forecast, actual, insample) == pytest.approx(0.4)
    single = mase(forecast[:1], actual[:1], insample[:1])
    assert single == pytest.approx(0.6)


def test_perfect_forecast_and_inputs_untouched():
    insample = torch.tensor([[2.0, 4.0, 8.0]])
    forecast = torch.tensor([[1.0, 2.0, 3.0]])
    before = forecast.clone()
    assert mase(forecast, forecast.clone(), insample) == 0.0
    assert torch.equal(forecast, before)


def test_errors():
    with pytest.raises(ValueError):
        mase(torch.zeros(2), torch.zeros(3), torch.arange(4.0))
    with pytest.raises(ValueError):
        mase(torch.zeros(2), torch.zeros(2), torch.ones(4))  # zero naive error
    with pytest.raises(ValueError):
        mase(torch.zeros(2), torch.zeros(2), torch.arange(2.0), season=2)
    with pytest.raises(ValueError):
        mase(torch.zeros(2, 2), torch.zeros(2, 2), torch.arange(4.0).reshape(1, 4))
    with pytest.raises(ValueError):
        mase(torch.zeros(0), torch.zeros(0), torch.arange(4.0))


def test_degenerate_shapes_raise_value_error():
    with pytest.raises(ValueError):
        mase(torch.zeros(0, 2), torch.zeros(0, 2), torch.zeros(0, 4))
    with pytest.raises(ValueError):
        mase(torch.zeros(1, 2), torch.zeros(1, 2), torch.zeros(1, 0))
