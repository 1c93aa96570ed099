import pytest
import torch

from solution import r2_score


def test_hand_computed_1d():
    target = torch.tensor([1.0, 2.0, 3.0])
    pred = torch.tensor([1.0, 2.0, 4.0])
    value = r2_score(pred, target)
    assert isinstance(value, float)
    assert value == pytest.approx(0.5)  # ss_res 1, ss_tot 2
    raw = r2_score(pred, target, multioutput="raw_values")
    assert raw.shape == (1,) and raw.dtype == torch.float64
    assert r2_score(torch.tensor([2.0, 2.0, 2.0]), target) == pytest.approx(0.0)


def test_multi_output_columns_are_samples_along_dim0():
    target = torch.tensor([[1.0, 0.0], [2.0, 10.0], [3.0, 20.0]])
    pred = torch.tensor([[1.0, 0.0], [2.0, 10.0], [4.0, 10.0]])
    raw = r2_score(pred, target, multioutput="raw_values")
    # col0: 1 - 1/2 ; col1: 1 - 100/200
    assert raw.tolist() == pytest.approx([0.5, 0.5])
    pred2 = torch.tensor([[0.0, 0.0], [2.0, 10.0], [3.0, 20.0]])
    raw2 = r2_score(pred2, target, multioutput="raw_values")
    assert raw2.tolist() == pytest.approx([0.5, 1.0])
    assert r2_score(pred2, target) == pytest.approx(0.75)


def test_constant_target_column():
    target = torch.tensor([[1.0, 5.0], [3.0, 5.0]])
    perfect = r2_score(target.clone(), target, multioutput="raw_values")
    assert perfect.tolist() == [1.0, 1.0]
    off = r2_score(torch.tensor([[1.0, 5.0], [3.0, 6.0]]), target, multioutput="raw_values")
    assert off.tolist() == [1.0, 0.0]


def test_negative_score_and_offset_values():
    target = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float32)
    pred = torch.tensor([4.0, 3.0, 2.0, 1.0], dtype=torch.float32)
    assert r2_score(pred, target) == pytest.approx(1 - 20 / 5)
    big = torch.tensor([1e4 + 1.0, 1e4 + 2.0, 1e4 + 3.0])
    # ss_res = 0.25, ss_tot = 2
    assert r2_score(big + torch.tensor([0.0, 0.0, 0.5]), big) == pytest.approx(0.875, abs=1e-9)


def test_errors():
    with pytest.raises(ValueError):
        r2_score(torch.zeros(3), torch.zeros(4))
    with pytest.raises(ValueError):
        r2_score(torch.zeros(1), torch.zeros(1))
    with pytest.raises(ValueError):
        r2_score(torch.zeros(3), torch.zeros(3), multioutput="variance_weighted")
    with pytest.raises(ValueError):
        r2_score(torch.zeros(2, 2, 2), torch.zeros(2, 2, 2))
