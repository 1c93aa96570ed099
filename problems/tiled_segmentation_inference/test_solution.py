import pytest
import torch
from torch import nn

from solution import tiled_inference


class TileMean(nn.Module):
    """Returns the tile's mean value everywhere in the tile and records tile corners."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def forward(self, x):
        self.calls.append(x.clone())
        return x.mean().expand(1, 1, x.shape[2], x.shape[3]).clone()


def test_hand_computed_average_of_overlaps():
    image = torch.tensor([[[0.0, 1.0, 2.0, 3.0, 4.0], [10.0, 11.0, 12.0, 13.0, 14.0]]])  # (1, 2, 5)
    model = TileMean()
    out = tiled_inference(model, image, tile_size=2, stride=2)
    # column starts 0, 2 and the extra 3; tile means 5.5, 7.5, 8.5
    expected = torch.tensor([[[5.5, 5.5, 7.5, 8.0, 8.5], [5.5, 5.5, 7.5, 8.0, 8.5]]])
    assert out.shape == (1, 2, 5)
    assert torch.allclose(out, expected)
    assert len(model.calls) == 3


def test_tile_positions_and_call_count():
    image = torch.arange(11 * 10, dtype=torch.float32).reshape(1, 11, 10)
    model = TileMean()
    tiled_inference(model, image, tile_size=4, stride=3)
    # rows: 0, 3, 6 then 7 ; cols: 0, 3, 6 (6 + 4 == 10, nothing added)
    corners = sorted((int(c[0, 0, 0, 0].item()) // 10, int(c[0, 0, 0, 0].item()) % 10) for c in model.calls)
    assert corners == [(r, c) for r in (0, 3, 6, 7) for c in (0, 3, 6)]
    assert all(c.shape == (1, 1, 4, 4) for c in model.calls)


def test_pointwise_model_matches_full_image_without_grad():
    torch.manual_seed(0)
    model = nn.Conv2d(3, 4, kernel_size=1)
    model.train()
    image = torch.randn(3, 9, 7)
    before = image.clone()
    out = tiled_inference(model, image, tile_size=4, stride=3)
    assert out.shape == (4, 9, 7)
    assert torch.allclose(out, model(image[None])[0].detach(), atol=1e-5)
    assert not out.requires_grad
    assert model.training
    assert torch.equal(image, before)


def test_single_tile_image():
    image = torch.ones(2, 3, 3)
    out = tiled_inference(lambda x: torch.cat([x.sum(1, keepdim=True), -x[:, :1]], dim=1), image, 3, 1)
    assert torch.equal(out, torch.stack([torch.full((3, 3), 2.0), -torch.ones(3, 3)]))


def test_errors():
    model = TileMean()
    with pytest.raises(ValueError):
        tiled_inference(model, torch.zeros(1, 3, 8), tile_size=4, stride=2)
    with pytest.raises(ValueError):
        tiled_inference(model, torch.zeros(1, 8, 8), tile_size=4, stride=5)
    with pytest.raises(ValueError):
        tiled_inference(model, torch.zeros(8, 8), tile_size=4, stride=2)
    with pytest.raises(ValueError):
        tiled_inference(lambda x: x[:, :, :2, :2], torch.zeros(1, 8, 8), tile_size=4, stride=2)
