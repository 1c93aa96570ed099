import pytest
import torch

from solution import box_iou


def test_hand_computed_matrix():
    a = torch.tensor([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 1.0, 1.0]])
    b = torch.tensor([[1.0, 1.0, 3.0, 3.0], [0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 2.0, 1.0]])
    iou = box_iou(a, b)
    expected = torch.tensor([[1 / 7, 1.0, 0.5], [0.0, 0.25, 0.5]])
    assert iou.shape == (2, 3)
    assert torch.allclose(iou, expected, atol=1e-6)


def test_disjoint_boxes_have_zero_iou():
    # Both overlaps negative: their product would be positive without clamping.
    a = torch.tensor([[0.0, 0.0, 1.0, 1.0]])
    b = torch.tensor([[2.0, 2.0, 3.0, 3.0], [1.0, 0.0, 2.0, 1.0], [5.0, 0.0, 6.0, 0.5]])
    assert torch.equal(box_iou(a, b), torch.zeros(1, 3))


def test_degenerate_and_empty():
    point = torch.tensor([[1.0, 1.0, 1.0, 1.0]])
    out = box_iou(point, point)
    assert out.item() == 0.0 and not torch.isnan(out).any()
    assert box_iou(torch.zeros(0, 4), torch.ones(3, 4)).shape == (0, 3)
    assert box_iou(torch.ones(2, 4), torch.zeros(0, 4)).shape == (2, 0)


def test_symmetry_dtype_and_gradient():
    g = torch.Generator().manual_seed(0)
    xy = torch.rand(5, 2, generator=g, dtype=torch.float64) * 10
    wh = torch.rand(5, 2, generator=g, dtype=torch.float64) * 5 + 0.5
    boxes = torch.cat([xy, xy + wh], dim=1).requires_grad_(True)
    iou = box_iou(boxes, boxes)
    assert iou.dtype == torch.float64
    assert torch.allclose(iou, iou.T)
    assert torch.allclose(torch.diagonal(iou), torch.ones(5, dtype=torch.float64))
    iou.sum().backward()
    assert torch.isfinite(boxes.grad).all()


def test_errors():
    with pytest.raises(ValueError):
        box_iou(torch.zeros(2, 3), torch.zeros(2, 4))
    with pytest.raises(ValueError):
        box_iou(torch.zeros(2, 4), torch.zeros(4))
