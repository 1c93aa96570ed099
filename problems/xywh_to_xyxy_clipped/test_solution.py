import pytest
import torch

from solution import xywh_to_xyxy


def test_inside_box_is_converted():
    out = xywh_to_xyxy(torch.tensor([[10.0, 20.0, 30.0, 40.0]]), (100, 200))
    assert out.shape == (1, 4)
    assert torch.equal(out, torch.tensor([[10.0, 20.0, 40.0, 60.0]]))


def test_clipping_uses_height_then_width():
    boxes = torch.tensor(
        [
            [250.0, 10.0, 40.0, 60.0],  # y2 = 70 > height 50, x2 = 290 < width 300
            [-5.0, -5.0, 10.0, 10.0],  # negative corner
            [290.0, 45.0, 20.0, 20.0],  # both overflow
        ]
    )
    out = xywh_to_xyxy(boxes, (50, 300))
    expected = torch.tensor(
        [
            [250.0, 10.0, 290.0, 50.0],
            [0.0, 0.0, 5.0, 5.0],
            [290.0, 45.0, 300.0, 50.0],
        ]
    )
    assert torch.equal(out, expected)


def test_box_outside_image_is_kept_degenerate():
    out = xywh_to_xyxy(torch.tensor([[120.0, 5.0, 10.0, 10.0]]), (50, 100))
    assert torch.equal(out, torch.tensor([[100.0, 5.0, 100.0, 15.0]]))


def test_integer_dtype_and_no_in_place_change():
    boxes = torch.tensor([[1, 2, 3, 4], [8, 8, 5, 5]])
    before = boxes.clone()
    out = xywh_to_xyxy(boxes, (10, 10))
    assert out.dtype == torch.int64
    assert torch.equal(out, torch.tensor([[1, 2, 4, 6], [8, 8, 10, 10]]))
    assert torch.equal(boxes, before)


def test_empty_input():
    out = xywh_to_xyxy(torch.zeros(0, 4), (10, 10))
    assert out.shape == (0, 4)
    assert out.dtype == torch.float32


def test_errors():
    with pytest.raises(ValueError):
        xywh_to_xyxy(torch.zeros(3, 5), (10, 10))
    with pytest.raises(ValueError):
        xywh_to_xyxy(torch.zeros(4), (10, 10))
    with pytest.raises(ValueError):
        xywh_to_xyxy(torch.tensor([[0.0, 0.0, -1.0, 2.0]]), (10, 10))
