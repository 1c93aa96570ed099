import math

import pytest
import torch
import torch.nn.functional as F

from solution import focal_loss


def test_hand_computed_two_classes():
    logits = torch.tensor([[0.0, 0.0], [math.log(3.0), 0.0]])
    targets = torch.tensor([0, 0])
    # p_t = 0.5 and 0.75
    expected = torch.tensor([0.25 * math.log(2.0), 0.0625 * -math.log(0.75)])
    out = focal_loss(logits, targets, gamma=2.0, reduction="none")
    assert out.shape == (2,)
    assert torch.allclose(out, expected, atol=1e-6)
    assert focal_loss(logits, targets).item() == pytest.approx(expected.mean().item(), abs=1e-6)
    assert focal_loss(logits, targets, reduction="sum").item() == pytest.approx(
        expected.sum().item(), abs=1e-6
    )


def test_gamma_zero_matches_cross_entropy():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(8, 5, generator=g)
    targets = torch.randint(0, 5, (8,), generator=g)
    out = focal_loss(logits, targets, gamma=0.0)
    assert torch.allclose(out, F.cross_entropy(logits, targets), atol=1e-6)


def test_alpha_uses_true_class_and_plain_mean():
    logits = torch.tensor([[2.0, 0.0], [2.0, 0.0]])
    targets = torch.tensor([0, 1])
    alpha = torch.tensor([0.25, 0.75])
    base = focal_loss(logits, targets, gamma=1.5, reduction="none")
    weighted = focal_loss(logits, targets, alpha=alpha, gamma=1.5, reduction="none")
    assert torch.allclose(weighted, base * torch.tensor([0.25, 0.75]))
    mean = focal_loss(logits, targets, alpha=alpha, gamma=1.5)
    assert mean.item() == pytest.approx(weighted.sum().item() / 2, abs=1e-6)


def test_empty_batch_and_confident_gradients():
    empty = focal_loss(torch.zeros(0, 3), torch.zeros(0, dtype=torch.long))
    assert empty.shape == () and empty.item() == 0.0
    assert focal_loss(torch.zeros(0, 3), torch.zeros(0, dtype=torch.long), reduction="none").shape == (0,)
    logits = torch.tensor([[100.0, -100.0], [-100.0, 100.0]], requires_grad=True)
    loss = focal_loss(logits, torch.tensor([0, 0]))
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(logits.grad).all()
    assert loss.item() == pytest.approx(100.0, rel=1e-4)  # second sample: (1-0)^2 * 200 / 2


def test_errors():
    logits, targets = torch.zeros(2, 3), torch.zeros(2, dtype=torch.long)
    with pytest.raises(ValueError):
        focal_loss(logits, targets, reduction="avg")
    with pytest.raises(ValueError):
        focal_loss(logits, targets, alpha=torch.ones(2))
    with pytest.raises(ValueError):
        focal_loss(logits, targets, gamma=-1.0)
    with pytest.raises(ValueError):
        focal_loss(logits, torch.zeros(3, dtype=torch.long))
