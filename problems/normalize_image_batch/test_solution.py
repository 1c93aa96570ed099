import pytest
import torch

from solution import normalize_batch


def test_hand_computed_values():
    images = torch.tensor([[[[1.0, 3.0]], [[10.0, 20.0]]]])  # (1, 2, 1, 2)
    out = normalize_batch(images, [2.0, 10.0], [1.0, 5.0])
    expected = torch.tensor([[[[-1.0, 1.0]], [[0.0, 2.0]]]])
    assert out.shape == (1, 2, 1, 2)
    assert torch.allclose(out, expected)


def test_channel_axis_not_spatial_axis():
    # 3 channels and a width of 3: normalising along the wrong axis gives other values.
    images = torch.arange(2 * 3 * 2 * 3, dtype=torch.float32).reshape(2, 3, 2, 3)
    mean = [1.0, 2.0, 3.0]
    std = [0.5, 2.0, 4.0]
    out = normalize_batch(images, mean, std)
    for c in range(3):
        assert torch.allclose(out[:, c], (images[:, c] - mean[c]) / std[c])


def test_dtype_preserved_and_tensor_stats_accepted():
    images = torch.ones(1, 2, 2, 2, dtype=torch.float64)
    out = normalize_batch(images, torch.tensor([0.5, 1.0]), torch.tensor([0.5, 1.0]))
    assert out.dtype == torch.float64
    assert torch.equal(out[0, 0], torch.ones(2, 2, dtype=torch.float64))
    assert torch.equal(out[0, 1], torch.zeros(2, 2, dtype=torch.float64))


def test_input_not_modified_and_gradients_flow():
    g = torch.Generator().manual_seed(0)
    images = torch.rand(2, 3, 4, 4, generator=g, requires_grad=True)
    before = images.detach().clone()
    out = normalize_batch(images, [0.5, 0.5, 0.5], [0.25, 0.5, 1.0])
    assert torch.equal(images.detach(), before)
    out.sum().backward()
    expected_grad = torch.tensor([4.0, 2.0, 1.0]).view(1, 3, 1, 1).expand(2, 3, 4, 4)
    assert torch.allclose(images.grad, expected_grad)


def test_empty_batch():
    out = normalize_batch(torch.zeros(0, 3, 5, 5), [0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
    assert out.shape == (0, 3, 5, 5)


def test_errors():
    with pytest.raises(ValueError):
        normalize_batch(torch.zeros(3, 4, 4), [0, 0, 0], [1, 1, 1])
    with pytest.raises(TypeError):
        normalize_batch(torch.zeros(1, 3, 4, 4, dtype=torch.uint8), [0, 0, 0], [1, 1, 1])
    with pytest.raises(ValueError):
        normalize_batch(torch.zeros(1, 3, 4, 4), [0, 0], [1, 1, 1])
    with pytest.raises(ValueError):
        normalize_batch(torch.zeros(1, 3, 4, 4), [0, 0, 0], [1, 0, 1])
