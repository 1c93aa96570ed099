import pytest
import torch
import torch.nn.functional as F
from torch import nn

from solution import SmallCNN


def test_output_shapes_for_any_size():
    torch.manual_seed(0)
    model = SmallCNN(3, [4, 8, 8], 5)
    for shape in [(2, 3, 32, 32), (1, 3, 7, 5), (1, 3, 1, 1), (3, 3, 2, 9)]:
        out = model(torch.randn(*shape))
        assert out.shape == (shape[0], 5)
        assert out.dtype == torch.float32


def test_structure_and_parameter_count():
    model = SmallCNN(3, [8, 16], 10)
    kinds = [type(m) for m in model.features]
    assert kinds == [nn.Conv2d, nn.ReLU, nn.MaxPool2d] * 2
    assert isinstance(model.pool, nn.AdaptiveAvgPool2d)
    assert isinstance(model.head, nn.Linear)
    # conv1: 3*8*9+8, conv2: 8*16*9+16, head: 16*10+10
    assert sum(p.numel() for p in model.parameters()) == 224 + 1168 + 170


def test_forward_matches_functional_reference():
    torch.manual_seed(1)
    model = SmallCNN(2, [3, 4], 3)
    x = torch.randn(2, 2, 5, 6)
    h = x
    for i in range(2):
        conv = model.features[3 * i]
        h = F.conv2d(h, conv.weight, conv.bias, padding=1)
        h = F.max_pool2d(F.relu(h), 2, ceil_mode=True)
    expected = F.linear(h.mean(dim=(2, 3)), model.head.weight, model.head.bias)
    assert torch.allclose(model(x), expected, atol=1e-6)


def test_gradients_reach_first_layer_batch_of_one():
    torch.manual_seed(2)
    model = SmallCNN(1, [4], 2)
    out = model(torch.randn(1, 1, 6, 6))
    assert out.shape == (1, 2)
    F.cross_entropy(out, torch.tensor([1])).backward()
    grad = model.features[0].weight.grad
    assert grad is not None and grad.abs().sum() > 0


def test_errors():
    with pytest.raises(ValueError):
        SmallCNN(3, [], 10)
    with pytest.raises(ValueError):
        SmallCNN(3, [8, 0], 10)
    model = SmallCNN(3, [4], 2)
    with pytest.raises(ValueError):
        model(torch.zeros(1, 1, 8, 8))
    with pytest.raises(ValueError):
        model(torch.zeros(3, 8, 8))
