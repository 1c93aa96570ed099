import math

import pytest
import torch
from torch import nn

from solution import EarlyStopping


def _model(value=0.0):
    model = nn.Linear(2, 1)
    with torch.no_grad():
        model.weight.fill_(value)
        model.bias.fill_(value)
    return model


def test_stops_after_patience_bad_epochs():
    stopper = EarlyStopping(patience=2)
    model = _model()
    decisions = [stopper.step(m, model) for m in [1.0, 0.9, 0.95, 0.91]]
    assert decisions == [False, False, False, True]
    assert stopper.best == pytest.approx(0.9)
    assert stopper.num_bad_epochs == 2


def test_min_delta_compares_against_best_so_far():
    stopper = EarlyStopping(patience=10, min_delta=0.05)
    model = _model()
    stopper.step(1.0, model)
    stopper.step(0.96, model)  # not below 1.0 - 0.05
    assert stopper.best == 1.0 and stopper.num_bad_epochs == 1
    stopper.step(0.97, model)
    stopper.step(0.94, model)  # below 0.95: improvement
    assert stopper.best == pytest.approx(0.94) and stopper.num_bad_epochs == 0


def test_best_state_is_a_snapshot_and_restore_works():
    stopper = EarlyStopping(patience=3)
    model = _model(1.0)
    stopper.step(0.5, model)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(10.0)  # in-place change after the best epoch
    stopper.step(0.7, model)
    assert torch.equal(stopper.best_state["weight"], torch.ones(1, 2))
    stopper.restore(model)
    assert torch.equal(model.weight, torch.ones(1, 2))
    assert torch.equal(model.bias, torch.ones(1))


def test_max_mode_and_nan_metric():
    stopper = EarlyStopping(patience=1, mode="max")
    model = _model()
    assert stopper.best == -math.inf
    assert stopper.step(0.8, model) is False
    assert stopper.step(float("nan"), model) is True
    assert stopper.best == 0.8
    fresh = EarlyStopping(patience=2)
    assert fresh.step(float("nan"), model) is False
    assert fresh.best_state is None and fresh.best == math.inf


def test_restore_without_state_and_invalid_arguments():
    with pytest.raises(RuntimeError):
        EarlyStopping(patience=1).restore(_model())
    with pytest.raises(ValueError):
        EarlyStopping(patience=0)
    with pytest.raises(ValueError):
        EarlyStopping(patience=1, min_delta=-0.1)
    with pytest.raises(ValueError):
        EarlyStopping(patience=1, mode="best")
