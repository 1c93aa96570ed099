import pytest
import torch

from solution import make_windows


def test_hand_computed_stride_one():
    x, y = make_windows(torch.arange(6.0), window=3, horizon=1)
    assert torch.equal(x, torch.tensor([[0.0, 1.0, 2.0], [1.0, 2.0, 3.0], [2.0, 3.0, 4.0]]))
    assert torch.equal(y, torch.tensor([[3.0], [4.0], [5.0]]))


def test_stride_and_multi_step_horizon():
    x, y = make_windows(torch.arange(10), window=3, horizon=2, stride=2)
    assert x.shape == (3, 3) and y.shape == (3, 2)
    assert x.dtype == torch.int64 and y.dtype == torch.int64
    assert torch.equal(x[:, 0], torch.tensor([0, 2, 4]))
    assert torch.equal(y, torch.tensor([[3, 4], [5, 6], [7, 8]]))
    x, y = make_windows(torch.arange(11), window=3, horizon=2, stride=2)
    assert torch.equal(y[-1], torch.tensor([9, 10]))


def test_exact_fit_and_too_short():
    x, y = make_windows(torch.arange(5.0), window=3, horizon=2)
    assert x.shape == (1, 3) and y.shape == (1, 2)
    x, y = make_windows(torch.arange(4.0), window=3, horizon=2)
    assert x.shape == (0, 3) and y.shape == (0, 2)
    assert x.dtype == torch.float32
    x, y = make_windows(torch.zeros(0), window=1, horizon=1)
    assert x.shape == (0, 1) and y.shape == (0, 1)


def test_outputs_are_copies():
    series = torch.arange(8.0)
    x, y = make_windows(series, window=2, horizon=1)
    x[0, 1] = 100.0
    y[0, 0] = 100.0
    assert torch.equal(series, torch.arange(8.0))
    assert x[1, 0] == 1.0  # rows do not share memory either


def test_errors():
    with pytest.raises(ValueError):
        make_windows(torch.zeros(2, 5), 2, 1)
    with pytest.raises(ValueError):
        make_windows(torch.zeros(5), 0, 1)
    with pytest.raises(ValueError):
        make_windows(torch.zeros(5), 2, 0)
    with pytest.raises(ValueError):
        make_windows(torch.zeros(5), 2, 1, stride=0)
