import math

import pytest
import torch

from solution import sinusoidal_encoding


def test_hand_computed_rows():
    pe = sinusoidal_encoding(3, 4)
    assert pe.shape == (3, 4) and pe.dtype == torch.float32
    assert torch.allclose(pe[0], torch.tensor([0.0, 1.0, 0.0, 1.0]))
    expected_1 = torch.tensor([math.sin(1.0), math.cos(1.0), math.sin(0.01), math.cos(0.01)])
    expected_2 = torch.tensor([math.sin(2.0), math.cos(2.0), math.sin(0.02), math.cos(0.02)])
    assert torch.allclose(pe[1], expected_1, atol=1e-6)
    assert torch.allclose(pe[2], expected_2, atol=1e-6)


def test_custom_base_and_dtype():
    pe = sinusoidal_encoding(5, 6, base=8.0, dtype=torch.float64)
    assert pe.dtype == torch.float64
    pos, i = 4, 2
    angle = pos / 8.0 ** (2 * i / 6)
    assert pe[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-12)
    assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-12)


def test_large_positions_accurate_and_bounded():
    pe = sinusoidal_encoding(2048, 16)
    assert pe[2047, 0].item() == pytest.approx(math.sin(2047.0), abs=1e-6)
    assert pe.abs().max().item() <= 1.0
    sq = pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2
    assert torch.allclose(sq, torch.ones_like(sq), atol=1e-5)
    assert not pe.requires_grad


def test_empty_and_errors():
    assert sinusoidal_encoding(0, 8).shape == (0, 8)
    with pytest.raises(ValueError):
        sinusoidal_encoding(4, 5)
    with pytest.raises(ValueError):
        sinusoidal_encoding(4, 0)
    with pytest.raises(ValueError):
        sinusoidal_encoding(-1, 4)
