import pytest
import torch

from solution import soft_dice_loss


def test_hand_computed_single_sample():
    logits = torch.zeros(1, 1, 1, 2)  # p = 0.5 everywhere
    targets = torch.tensor([[[[1.0, 0.0]]]])
    # dice = (2*0.5 + 1) / (1 + 1 + 1) = 2/3
    loss = soft_dice_loss(logits, targets)
    assert loss.shape == ()
    assert loss.item() == pytest.approx(1.0 / 3.0, abs=1e-6)


def test_per_sample_mean_not_pooled():
    logits = torch.zeros(2, 1, 2)
    targets = torch.tensor([[[1.0, 1.0]], [[0.0, 0.0]]])
    # sample 0: (2*1 + 1) / (1 + 2 + 1) = 0.75 ; sample 1: (0 + 1) / (1 + 0 + 1) = 0.5
    assert soft_dice_loss(logits, targets).item() == pytest.approx(0.375, abs=1e-6)
    assert soft_dice_loss(logits, targets, eps=0.5).item() == pytest.approx(
        1 - (2.5 / 3.5 + 0.5 / 1.5) / 2, abs=1e-6
    )


def test_empty_mask_is_stable_and_bool_targets():
    logits = torch.full((1, 4, 4), -20.0, requires_grad=True)
    targets = torch.zeros(1, 4, 4, dtype=torch.bool)
    loss = soft_dice_loss(logits, targets)
    assert loss.item() < 1e-3
    loss.backward()
    assert torch.isfinite(logits.grad).all()


def test_gradients_and_perfect_prediction():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 1, 5, 5, generator=g, requires_grad=True)
    targets = (torch.rand(3, 1, 5, 5, generator=g) > 0.5).long()
    loss = soft_dice_loss(logits, targets)
    loss.backward()
    assert logits.grad is not None and logits.grad.abs().sum() > 0
    perfect = (targets.float() * 2 - 1) * 30.0
    assert soft_dice_loss(perfect, targets).item() < 1e-4
    double = soft_dice_loss(logits.detach().double(), targets)
    assert double.dtype == torch.float64


def test_errors():
    with pytest.raises(ValueError):
        soft_dice_loss(torch.zeros(1, 2, 2), torch.zeros(1, 2, 3))
    with pytest.raises(ValueError):
        soft_dice_loss(torch.zeros(0, 2, 2), torch.zeros(0, 2, 2))
    with pytest.raises(ValueError):
        soft_dice_loss(torch.zeros(1, 2, 2), torch.zeros(1, 2, 2), eps=0.0)
