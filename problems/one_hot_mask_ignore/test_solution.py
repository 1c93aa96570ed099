import pytest
import torch

from solution import one_hot_mask


def test_hand_computed_with_default_ignore():
    mask = torch.tensor([[0, 1], [255, 2]])
    out = one_hot_mask(mask, 3)
    expected = torch.tensor(
        [
            [[1.0, 0.0], [0.0, 0.0]],
            [[0.0, 1.0], [0.0, 0.0]],
            [[0.0, 0.0], [0.0, 1.0]],
        ]
    )
    assert out.shape == (3, 2, 2)
    assert out.dtype == torch.float32
    assert torch.equal(out, expected)


def test_custom_ignore_index_and_channel_sums():
    mask = torch.tensor([[2, -1, 0], [1, 1, -1]])
    before = mask.clone()
    out = one_hot_mask(mask, 4, ignore_index=-1)
    assert torch.equal(out.sum(0), (mask != -1).float())
    assert torch.equal(out[3], torch.zeros(2, 3))
    assert torch.equal(out[1], torch.tensor([[0.0, 0.0, 0.0], [1.0, 1.0, 0.0]]))
    assert torch.equal(mask, before)


def test_ignore_index_inside_class_range_and_none():
    mask = torch.tensor([[0, 1, 2]])
    out = one_hot_mask(mask, 3, ignore_index=0)
    assert torch.equal(out[:, 0, 0], torch.zeros(3))
    assert torch.equal(out[:, 0, 2], torch.tensor([0.0, 0.0, 1.0]))
    out_none = one_hot_mask(mask, 3, ignore_index=None)
    assert torch.equal(out_none.sum(0), torch.ones(1, 3))


def test_single_class_and_empty_mask():
    out = one_hot_mask(torch.zeros(2, 2, dtype=torch.uint8), 1)
    assert torch.equal(out, torch.ones(1, 2, 2))
    empty = one_hot_mask(torch.zeros(0, 5, dtype=torch.long), 4)
    assert empty.shape == (4, 0, 5)


def test_errors():
    with pytest.raises(ValueError):
        one_hot_mask(torch.tensor([[0, 3]]), 3)
    with pytest.raises(ValueError):
        one_hot_mask(torch.tensor([[0, -2]]), 3, ignore_index=-1)
    with pytest.raises(TypeError):
        one_hot_mask(torch.zeros(2, 2), 3)
    with pytest.raises(ValueError):
        one_hot_mask(torch.zeros(1, 2, 2, dtype=torch.long), 3)
