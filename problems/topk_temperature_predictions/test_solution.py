import math

import pytest
import torch

from solution import topk_predictions


def _softmax(values):
    exps = [math.exp(v) for v in values]
    total = sum(exps)
    return [e / total for e in exps]


def test_hand_computed_batch():
    logits = torch.tensor([[1.0, 2.0, 3.0], [0.0, 5.0, 1.0]])
    probs, idx = topk_predictions(logits, k=2)
    p0 = _softmax([1.0, 2.0, 3.0])
    p1 = _softmax([0.0, 5.0, 1.0])
    assert probs.shape == (2, 2) and idx.shape == (2, 2)
    assert idx.dtype == torch.long and probs.dtype == torch.float32
    assert torch.equal(idx, torch.tensor([[2, 1], [1, 2]]))
    assert torch.allclose(probs, torch.tensor([[p0[2], p0[1]], [p1[1], p1[2]]]), atol=1e-6)


def test_temperature_divides_logits():
    logits = torch.tensor([1.0, 2.0, 3.0])
    probs, idx = topk_predictions(logits, k=3, temperature=2.0)
    expected = _softmax([0.5, 1.0, 1.5])[::-1]
    assert probs.shape == (3,) and torch.equal(idx, torch.tensor([2, 1, 0]))
    assert torch.allclose(probs, torch.tensor(expected), atol=1e-6)
    sharp, _ = topk_predictions(logits, k=1, temperature=0.1)
    assert sharp.item() == pytest.approx(_softmax([10.0, 20.0, 30.0])[2], abs=1e-6)


def test_probabilities_not_renormalised_and_ties_by_index():
    logits = torch.tensor([[1.0, 1.0, 0.0, 1.0]])
    probs, idx = topk_predictions(logits, k=2)
    assert torch.equal(idx, torch.tensor([[0, 1]]))
    assert probs.sum().item() < 1.0
    e = math.e
    assert probs[0, 0].item() == pytest.approx(e / (3 * e + 1), abs=1e-6)


def test_no_grad_and_input_untouched():
    logits = torch.tensor([[0.2, 0.1, 0.7]], requires_grad=True)
    before = logits.detach().clone()
    probs, idx = topk_predictions(logits, k=1)
    assert not probs.requires_grad
    assert torch.equal(logits.detach(), before)
    assert idx.tolist() == [[2]]


def test_errors():
    with pytest.raises(ValueError):
        topk_predictions(torch.zeros(2, 3), k=4)
    with pytest.raises(ValueError):
        topk_predictions(torch.zeros(2, 3), k=0)
    with pytest.raises(ValueError):
        topk_predictions(torch.zeros(2, 3), k=1, temperature=0.0)
    with pytest.raises(ValueError):
        topk_predictions(torch.zeros(2, 3, 4), k=1)
