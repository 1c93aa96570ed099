import math

from torch import nn


class EarlyStopping:
    def __init__(self, patience: int, min_delta: float = 0.0, mode: str = "min") -> None:
        if patience < 1:
            raise ValueError("patience must be >= 1")
        if min_delta < 0:
            raise ValueError("min_delta must be >= 0")
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        self.patience = patience
        self.min_delta = float(min_delta)
        self.mode = mode
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.best_state = None

    def _improved(self, metric: float) -> bool:
        if math.isnan(metric):
            return False
        if self.mode == "min":
            return metric < self.best - self.min_delta
        return metric > self.best + self.min_delta

    def step(self, metric: float, model: nn.Module) -> bool:
        metric = float(metric)
        if self._improved(metric):
            self.best = metric
            self.num_bad_epochs = 0
            self.best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        else:
            self.num_bad_epochs += 1
        return self.num_bad_epochs >= self.patience

    def restore(self, model: nn.Module) -> None:
        if self.best_state is None:
            raise RuntimeError("no best state recorded yet")
        model.load_state_dict(self.best_state)
