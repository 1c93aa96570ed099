import math

import pytest
import torch

from solution import standardize_features

nan = float("nan")


def test_hand_computed_with_nan_and_constant_column():
    x = torch.tensor([[1.0, 2.0], [3.0, nan], [5.0, 2.0]])
    z, mean, std = standardize_features(x)
    s = math.sqrt(8.0 / 3.0)  # population std of 1, 3, 5
    assert torch.allclose(mean, torch.tensor([3.0, 2.0]))
    assert torch.allclose(std, torch.tensor([s, 1.0]))
    assert torch.allclose(z[:, 0], torch.tensor([-2.0 / s, 0.0, 2.0 / s]))
    assert z[0, 1] == 0.0 and z[2, 1] == 0.0
    assert math.isnan(z[1, 1].item())


def test_nan_ignored_in_both_mean_and_std():
    x = torch.tensor([[0.0], [nan], [4.0], [nan]], dtype=torch.float64)
    z, mean, std = standardize_features(x)
    assert z.dtype == mean.dtype == std.dtype == torch.float64
    assert mean.tolist() == [2.0]
    assert std.tolist() == [2.0]
    assert z[0, 0].item() == -1.0 and z[2, 0].item() == 1.0


def test_all_nan_column_and_empty_rows():
    x = torch.tensor([[nan, 1.0], [nan, 3.0]])
    z, mean, std = standardize_features(x)
    assert mean.tolist() == [0.0, 2.0]
    assert std.tolist() == [1.0, 1.0]
    assert torch.isnan(z[:, 0]).all()
    z0, mean0, std0 = standardize_features(torch.zeros(0, 3))
    assert z0.shape == (0, 3)
    assert mean0.tolist() == [0.0, 0.0, 0.0] and std0.tolist() == [1.0, 1.0, 1.0]


def test_input_not_modified_and_fitted_stats_reusable():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(50, 4, generator=g) * 3 + 7
    x[3, 1] = nan
    before = x.clone()
    z, mean, std = standardize_features(x)
    assert torch.equal(torch.isnan(x), torch.isnan(before))
    assert torch.equal(torch.nan_to_num(x), torch.nan_to_num(before))
    valid = ~torch.isnan(z)
    for f in range(4):
        col = z[valid[:, f], f]
        assert abs(col.mean().item()) < 1e-5
        assert abs(col.pow(2).mean().item() - 1.0) < 1e-4


def test_errors():
    with pytest.raises(ValueError):
        standardize_features(torch.zeros(3))
    with pytest.raises(TypeError):
        standardize_features(torch.zeros(3, 2, dtype=torch.long))
