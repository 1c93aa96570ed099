import math

import pytest
import torch

from solution import average_precision


def _dets(boxes, scores):
    return torch.tensor(boxes, dtype=torch.float32).reshape(-1, 4), torch.tensor(scores, dtype=torch.float32)


def test_hand_computed_with_duplicate_and_interpolation():
    gts = [torch.tensor([[0.0, 0.0, 10.0, 10.0]]), torch.tensor([[0.0, 0.0, 10.0, 10.0], [20.0, 20.0, 30.0, 30.0]])]
    dets = [
        _dets([[0, 0, 10, 10], [0, 0, 10, 10]], [0.9, 0.8]),  # TP, duplicate -> FP
        _dets([[20, 20, 30, 30], [1, 1, 10, 10]], [0.7, 0.6]),  # TP, TP (IoU 0.81)
    ]
    # precision 1, 1/2, 2/3, 3/4 ; recall 1/3, 1/3, 2/3, 1 ; interpolated 1, 3/4, 3/4, 3/4
    ap = average_precision(dets, gts)
    assert isinstance(ap, float)
    assert ap == pytest.approx((1.0 + 0.75 + 0.75) / 3)


def test_detections_match_only_their_own_image():
    gts = [torch.zeros(0, 4), torch.tensor([[20.0, 20.0, 30.0, 30.0]])]
    dets = [_dets([[20, 20, 30, 30]], [0.9]), _dets([[20, 20, 30, 30]], [0.5])]
    # FP then TP: precision 0, 1/2 ; recall 0, 1
    assert average_precision(dets, gts) == pytest.approx(0.5)


def test_threshold_inclusive_and_best_box_rule():
    gts = [torch.tensor([[0.0, 0.0, 10.0, 10.0]])]
    half = [_dets([[0, 0, 10, 5]], [0.9])]  # IoU exactly 0.5
    assert average_precision(half, gts) == pytest.approx(1.0)
    assert average_precision(half, gts, iou_threshold=0.51) == 0.0
    two_gts = [torch.tensor([[0.0, 0.0, 10.0, 10.0], [0.0, 0.0, 10.0, 8.0]])]
    dets = [_dets([[0, 0, 10, 10], [0, 0, 10, 9.5]], [0.9, 0.8])]
    # second detection's best box (IoU 0.95) is already matched -> FP, even though the
    # other box would give IoU 0.84
    assert average_precision(dets, two_gts) == pytest.approx(0.5)


def test_score_order_across_images_and_edge_cases():
    gts = [torch.tensor([[0.0, 0.0, 4.0, 4.0]]), torch.tensor([[0.0, 0.0, 4.0, 4.0]])]
    dets = [_dets([[10, 10, 12, 12]], [0.95]), _dets([[0, 0, 4, 4]], [0.3])]
    # FP (0.95) comes first: precision 0, 1/2 ; recall 0, 1/2 -> AP 0.25
    assert average_precision(dets, gts) == pytest.approx(0.25)
    empty = [_dets([], []), _dets([], [])]
    assert average_precision(empty, gts) == 0.0
    assert math.isnan(average_precision(dets, [torch.zeros(0, 4), torch.zeros(0, 4)]))


def test_errors():
    gts = [torch.zeros(0, 4)]
    with pytest.raises(ValueError):
        average_precision([], gts)
    with pytest.raises(ValueError):
        average_precision([(torch.zeros(2, 4), torch.zeros(3))], gts)
    with pytest.raises(ValueError):
        average_precision([(torch.zeros(2, 5), torch.zeros(2))], gts)
