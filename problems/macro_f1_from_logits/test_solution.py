import pytest
import torch

from solution import macro_f1


def _one_hot_logits(preds, num_classes):
    return torch.nn.functional.one_hot(torch.tensor(preds), num_classes).float() * 3.0 - 1.0


def test_hand_computed_with_absent_class():
    labels = torch.tensor([0, 0, 1, 2])
    logits = _one_hot_logits([0, 1, 1, 1], 4)
    # class 0: 2/3, class 1: 2*1/(2+2+0) = 0.5, class 2: 0, class 3 absent -> excluded
    assert macro_f1(logits, labels, 4) == pytest.approx((2 / 3 + 0.5 + 0.0) / 3, abs=1e-9)


def test_class_only_in_predictions_counts_as_zero():
    labels = torch.tensor([0, 0, 0])
    logits = _one_hot_logits([0, 0, 2], 3)
    # class 0: 2*2/(4+0+1) = 0.8 ; class 2: predicted but never true -> 0 ; class 1 excluded
    assert macro_f1(logits, labels, 3) == pytest.approx(0.4, abs=1e-9)


def test_argmax_ties_and_perfect_single_class():
    logits = torch.tensor([[1.0, 1.0], [0.0, 2.0]])  # first row ties -> class 0
    assert macro_f1(logits, torch.tensor([0, 1]), 2) == pytest.approx(1.0)
    assert macro_f1(torch.zeros(5, 1), torch.zeros(5, dtype=torch.long), 1) == 1.0


def test_empty_and_return_type():
    value = macro_f1(torch.zeros(0, 3), torch.zeros(0, dtype=torch.long), 3)
    assert value == 0.0 and isinstance(value, float)
    g = torch.Generator().manual_seed(0)
    out = macro_f1(torch.randn(20, 4, generator=g), torch.randint(0, 4, (20,), generator=g), 4)
    assert isinstance(out, float) and 0.0 <= out <= 1.0


def test_errors():
    with pytest.raises(ValueError):
        macro_f1(torch.zeros(3, 2), torch.tensor([0, 1, 2]), 2)
    with pytest.raises(ValueError):
        macro_f1(torch.zeros(3, 3), torch.tensor([0, 1, 2]), 2)
    with pytest.raises(ValueError):
        macro_f1(torch.zeros(3, 2), torch.tensor([0, 1]), 2)
    with pytest.raises(ValueError):
        macro_f1(torch.zeros(0, 0), torch.zeros(0, dtype=torch.long), 0)
