import math

import torch


def train_one_epoch(model, loader, optimizer, loss_fn, accum_steps=1, max_grad_norm=None):
    if accum_steps < 1:
        raise ValueError("accum_steps must be >= 1")
    model.train()
    optimizer.zero_grad()
    losses = []
    steps = 0
    pending = 0

    def _step():
        if max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()
        optimizer.zero_grad()

    for inputs, targets in loader:
        loss = loss_fn(model(inputs), targets)
        losses.append(loss.item())
        (loss / accum_steps).backward()
        pending += 1
        if pending == accum_steps:
            _step()
            steps += 1
            pending = 0
    if pending:
        _step()
        steps += 1
    mean_loss = sum(losses) / len(losses) if losses else math.nan
    return {"loss": mean_loss, "steps": steps, "batches": len(losses)}
