import math

import pytest
import torch

from solution import mean_iou


def test_hand_computed_with_ignored_pixel():
    target = torch.tensor([[[0, 0], [1, 255]]])
    pred = torch.tensor([[[0, 1], [1, 0]]])
    miou, per_class = mean_iou(pred, target, num_classes=3)
    # class 0: 1 / 2, class 1: 1 / 2, class 2 absent; the ignored pixel (pred 0) is excluded
    assert per_class.dtype == torch.float64 and per_class.shape == (3,)
    assert per_class[:2].tolist() == [0.5, 0.5]
    assert math.isnan(per_class[2].item())
    assert miou == pytest.approx(0.5)
    assert isinstance(miou, float)


def test_multi_image_batch_counts_globally():
    target = torch.tensor([[[1, 1]], [[1, 0]]])
    pred = torch.tensor([[[1, 0]], [[1, 0]]])
    miou, per_class = mean_iou(pred, target, num_classes=2)
    # class 0: inter 1, union 2 ; class 1: inter 2, union 3
    assert per_class.tolist() == pytest.approx([0.5, 2 / 3])
    assert miou == pytest.approx((0.5 + 2 / 3) / 2)


def test_custom_ignore_and_out_of_range_pred_at_ignored_pixel():
    target = torch.tensor([[-1, 0, 1, 1]])
    pred = torch.tensor([[9, 0, 1, 0]])
    miou, per_class = mean_iou(pred, target, num_classes=2, ignore_index=-1)
    assert per_class.tolist() == pytest.approx([0.5, 0.5])
    assert miou == pytest.approx(0.5)


def test_all_ignored_and_empty():
    miou, per_class = mean_iou(torch.zeros(2, 2, dtype=torch.long), torch.full((2, 2), 255), 2)
    assert math.isnan(miou) and torch.isnan(per_class).all()
    miou, _ = mean_iou(torch.zeros(0, 4, dtype=torch.long), torch.zeros(0, 4, dtype=torch.long), 3)
    assert math.isnan(miou)


def test_errors():
    with pytest.raises(ValueError):
        mean_iou(torch.zeros(2, 2, dtype=torch.long), torch.zeros(2, 3, dtype=torch.long), 2)
    with pytest.raises(ValueError):
        mean_iou(torch.tensor([[0, 2]]), torch.tensor([[0, 1]]), 2)
    with pytest.raises(ValueError):
        mean_iou(torch.tensor([[0, 1]]), torch.tensor([[0, 5]]), 2)
