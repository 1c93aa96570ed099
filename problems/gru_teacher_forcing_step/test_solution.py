import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from solution import teacher_forcing_step


def _modules(seed=0, hidden=4):
    torch.manual_seed(seed)
    gru = nn.GRU(input_size=1, hidden_size=hidden, batch_first=True)
    head = nn.Linear(hidden, 1)
    return gru, head


def _reference(gru, head, context, target, lr):
    gru, head = copy.deepcopy(gru), copy.deepcopy(head)
    seq = torch.cat([context, target[:, :-1]], dim=1).unsqueeze(-1)
    out, _ = gru(seq)
    pred = head(out[:, context.shape[1] - 1 :]).squeeze(-1)
    loss = F.mse_loss(pred, target)
    params = list(gru.parameters()) + list(head.parameters())
    grads = torch.autograd.grad(loss, params)
    with torch.no_grad():
        new = [p - lr * g for p, g in zip(params, grads)]
    return loss.item(), new


def test_loss_and_update_match_teacher_forcing():
    gru, head = _modules()
    g = torch.Generator().manual_seed(1)
    context = torch.randn(3, 5, generator=g)
    target = torch.randn(3, 4, generator=g)
    expected_loss, expected_params = _reference(gru, head, context, target, lr=0.05)
    opt = torch.optim.SGD(list(gru.parameters()) + list(head.parameters()), lr=0.05)
    loss = teacher_forcing_step(gru, head, opt, context, target)
    assert isinstance(loss, float)
    assert loss == pytest.approx(expected_loss, abs=1e-6)
    for p, e in zip(list(gru.parameters()) + list(head.parameters()), expected_params):
        assert torch.allclose(p, e, atol=1e-6)


def test_predictions_use_true_values_not_own_outputs():
    # Reading the predictions one step too late (feeding every target value, then taking
    # the last H outputs) gives a different loss; the step must match the documented one.
    gru, head = _modules(seed=3)
    g = torch.Generator().manual_seed(4)
    context = torch.randn(2, 3, generator=g)
    target = torch.randn(2, 3, generator=g) * 5
    expected_loss, _ = _reference(gru, head, context, target, lr=0.0)
    shifted = copy.deepcopy(gru), copy.deepcopy(head)
    seq = torch.cat([context, target], dim=1).unsqueeze(-1)
    out, _ = shifted[0](seq)
    wrong = F.mse_loss(shifted[1](out[:, -3:]).squeeze(-1), target).item()
    assert abs(wrong - expected_loss) > 1e-4  # sanity: the test can tell the two apart
    opt = torch.optim.SGD(list(gru.parameters()) + list(head.parameters()), lr=0.0)
    assert teacher_forcing_step(gru, head, opt, context, target) == pytest.approx(expected_loss, abs=1e-6)


def test_single_step_horizon_and_inputs_untouched():
    gru, head = _modules(seed=5, hidden=3)
    context = torch.tensor([[0.1, 0.2, 0.3]])
    target = torch.tensor([[0.4]])
    expected_loss, _ = _reference(gru, head, context, target, lr=0.1)
    before_c, before_t = context.clone(), target.clone()
    opt = torch.optim.SGD(list(gru.parameters()) + list(head.parameters()), lr=0.1)
    loss = teacher_forcing_step(gru, head, opt, context, target)
    assert loss == pytest.approx(expected_loss, abs=1e-6)
    assert torch.equal(context, before_c) and torch.equal(target, before_t)


def test_stale_gradients_are_cleared():
    gru, head = _modules(seed=6)
    context, target = torch.ones(1, 2), torch.zeros(1, 2)
    _, expected_params = _reference(gru, head, context, target, lr=0.1)
    for p in list(gru.parameters()) + list(head.parameters()):
        p.grad = torch.full_like(p, 3.0)
    opt = torch.optim.SGD(list(gru.parameters()) + list(head.parameters()), lr=0.1)
    teacher_forcing_step(gru, head, opt, context, target)
    for p, e in zip(list(gru.parameters()) + list(head.parameters()), expected_params):
        assert torch.allclose(p, e, atol=1e-6)


def test_errors():
    gru, head = _modules()
    opt = torch.optim.SGD(list(gru.parameters()) + list(head.parameters()), lr=0.1)
    with pytest.raises(ValueError):
        teacher_forcing_step(gru, head, opt, torch.zeros(2, 3), torch.zeros(3, 2))
    with pytest.raises(ValueError):
        teacher_forcing_step(gru, head, opt, torch.zeros(2, 0), torch.zeros(2, 2))
    with pytest.raises(ValueError):
        teacher_forcing_step(gru, head, opt, torch.zeros(2, 3), torch.zeros(2, 0))
    with pytest.raises(ValueError):
        teacher_forcing_step(gru, head, opt, torch.zeros(2, 3, 1), torch.zeros(2, 2))
