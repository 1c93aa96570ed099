import math

import pytest
import torch
from torch.optim.lr_scheduler import LambdaLR

from solution import warmup_cosine_scheduler


def _optimizer(*lrs):
    groups = [{"params": [torch.nn.Parameter(torch.zeros(1))], "lr": lr} for lr in lrs]
    return torch.optim.SGD(groups, lr=lrs[0])


def _trace(opt, sched, n, group=0):
    lrs = []
    for _ in range(n):
        lrs.append(opt.param_groups[group]["lr"])
        opt.step()
        sched.step()
    return lrs


def test_hand_computed_trace():
    opt = _optimizer(1.0)
    sched = warmup_cosine_scheduler(opt, warmup_steps=2, total_steps=6)
    assert isinstance(sched, LambdaLR)
    c = 0.5 * (1 + math.cos(math.pi / 4))
    expected = [0.5, 1.0, 1.0, c, 0.5, 1 - c, 0.0, 0.0]
    assert _trace(opt, sched, 8) == pytest.approx(expected, abs=1e-9)


def test_min_lr_ratio_floor_and_group_scaling():
    opt = _optimizer(0.1, 2.0)
    sched = warmup_cosine_scheduler(opt, warmup_steps=1, total_steps=3, min_lr_ratio=0.2)
    lrs = []
    for _ in range(5):
        lrs.append([g["lr"] for g in opt.param_groups])
        opt.step()
        sched.step()
    # f: step0 = 1 (warm-up end), step1 = 1, step2 = 0.2 + 0.8 * 0.5, step3+ = 0.2
    factors = [1.0, 1.0, 0.6, 0.2, 0.2]
    assert [lr[0] for lr in lrs] == pytest.approx([0.1 * f for f in factors])
    assert [lr[1] for lr in lrs] == pytest.approx([2.0 * f for f in factors])


def test_no_warmup_starts_at_base_lr():
    opt = _optimizer(0.3)
    sched = warmup_cosine_scheduler(opt, warmup_steps=0, total_steps=2)
    assert _trace(opt, sched, 3) == pytest.approx([0.3, 0.15, 0.0])


def test_errors():
    opt = _optimizer(1.0)
    with pytest.raises(ValueError):
        warmup_cosine_scheduler(opt, warmup_steps=-1, total_steps=5)
    with pytest.raises(ValueError):
        warmup_cosine_scheduler(opt, warmup_steps=5, total_steps=5)
    with pytest.raises(ValueError):
        warmup_cosine_scheduler(opt, warmup_steps=1, total_steps=5, min_lr_ratio=1.5)
