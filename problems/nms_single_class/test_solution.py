import pytest
import torch

from solution import nms


def test_hand_computed_keeps_best_of_cluster():
    boxes = torch.tensor(
        [
            [20.0, 20.0, 30.0, 30.0],  # isolated, score 0.7
            [1.0, 1.0, 11.0, 11.0],  # IoU 81/119 with box 2, score 0.8
            [0.0, 0.0, 10.0, 10.0],  # best, score 0.9
        ]
    )
    scores = torch.tensor([0.7, 0.8, 0.9])
    keep = nms(boxes, scores, iou_threshold=0.5)
    assert keep.dtype == torch.long
    assert keep.tolist() == [2, 0]
    assert nms(boxes, scores, iou_threshold=0.7).tolist() == [2, 1, 0]


def test_suppressed_boxes_do_not_suppress():
    boxes = torch.tensor(
        [[0.0, 0.0, 10.0, 10.0], [3.0, 0.0, 13.0, 10.0], [6.0, 0.0, 16.0, 10.0]]
    )
    # IoU(A, B) = IoU(B, C) = 70/130 > 0.5, IoU(A, C) = 40/160
    keep = nms(boxes, torch.tensor([0.9, 0.8, 0.7]), iou_threshold=0.5)
    assert keep.tolist() == [0, 2]


def test_threshold_is_strict_and_ties_use_lower_index():
    boxes = torch.tensor([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 2.0, 1.0]])  # IoU exactly 0.5
    assert nms(boxes, torch.tensor([0.9, 0.8]), iou_threshold=0.5).tolist() == [0, 1]
    assert nms(boxes, torch.tensor([0.9, 0.8]), iou_threshold=0.49).tolist() == [0]
    same = torch.tensor([[0.0, 0.0, 4.0, 4.0]] * 3)
    assert nms(same, torch.tensor([0.5, 0.6, 0.6]), iou_threshold=0.3).tolist() == [1]


def test_empty_and_single_and_inputs_untouched():
    keep = nms(torch.zeros(0, 4), torch.zeros(0), 0.5)
    assert keep.shape == (0,) and keep.dtype == torch.long
    boxes = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    scores = torch.tensor([0.1])
    assert nms(boxes, scores, 0.5).tolist() == [0]
    assert torch.equal(boxes, torch.tensor([[1.0, 2.0, 3.0, 4.0]]))
    assert torch.equal(scores, torch.tensor([0.1]))


def test_errors():
    with pytest.raises(ValueError):
        nms(torch.zeros(2, 5), torch.zeros(2), 0.5)
    with pytest.raises(ValueError):
        nms(torch.zeros(2, 4), torch.zeros(3), 0.5)
