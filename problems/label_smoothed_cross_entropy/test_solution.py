import math

import pytest
import torch
import torch.nn.functional as F

from solution import label_smoothed_cross_entropy


def test_hand_computed_single_token():
    logits = torch.tensor([[0.0, math.log(3.0)]])  # p = [0.25, 0.75]
    loss = label_smoothed_cross_entropy(logits, torch.tensor([1]), epsilon=0.1)
    nll = -math.log(0.75)
    smooth = (math.log(4.0) + math.log(4.0 / 3.0)) / 2
    assert loss.shape == ()
    assert loss.item() == pytest.approx(0.9 * nll + 0.1 * smooth, abs=1e-6)


def test_padding_excluded_from_mean():
    logits = torch.tensor([[[0.0, math.log(3.0)], [5.0, -5.0], [1.0, 2.0]]])  # (1, 3, 2)
    targets = torch.tensor([[1, -100, 0]])
    loss = label_smoothed_cross_entropy(logits, targets, epsilon=0.0)
    expected = (-math.log(0.75) + -F.log_softmax(torch.tensor([1.0, 2.0]), 0)[0].item()) / 2
    assert loss.item() == pytest.approx(expected, abs=1e-6)


def test_matches_torch_on_batch_with_custom_ignore():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 4, 7, generator=g)
    targets = torch.randint(0, 7, (3, 4), generator=g)
    targets[0, 3] = 0
    targets[2, 1:] = 0  # padding id 0 for this test
    loss = label_smoothed_cross_entropy(logits, targets, epsilon=0.2, ignore_index=0)
    ref = F.cross_entropy(logits.reshape(-1, 7), targets.reshape(-1), ignore_index=0, label_smoothing=0.2)
    assert torch.allclose(loss, ref, atol=1e-6)


def test_all_padding_gives_zero_with_gradient():
    logits = torch.randn(2, 3, 5, generator=torch.Generator().manual_seed(1), requires_grad=True)
    targets = torch.full((2, 3), -100)
    loss = label_smoothed_cross_entropy(logits, targets)
    assert loss.item() == 0.0
    loss.backward()
    assert torch.equal(logits.grad, torch.zeros_like(logits))


def test_gradients_flow_and_errors():
    logits = torch.zeros(2, 4, requires_grad=True)
    label_smoothed_cross_entropy(logits, torch.tensor([0, 3]), epsilon=0.1).backward()
    assert logits.grad.abs().sum() > 0
    with pytest.raises(ValueError):
        label_smoothed_cross_entropy(torch.zeros(2, 4), torch.tensor([0, 1]), epsilon=1.0)
    with pytest.raises(ValueError):
        label_smoothed_cross_entropy(torch.zeros(2, 4), torch.tensor([0, 1, 2]))
