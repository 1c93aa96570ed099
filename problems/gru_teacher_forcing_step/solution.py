import torch
import torch.nn.functional as F
from torch import nn


def teacher_forcing_step(
    gru: nn.GRU,
    head: nn.Linear,
    optimizer: torch.optim.Optimizer,
    context: torch.Tensor,
    target: torch.Tensor,
) -> float:
    if context.dim() != 2 or target.dim() != 2:
        raise ValueError("context and target must be 2-D (batch, time)")
    if context.shape[0] != target.shape[0]:
        raise ValueError("context and target must have the same batch size")
    context_len, horizon = context.shape[1], target.shape[1]
    if context_len < 1 or horizon < 1:
        raise ValueError("context and target must each contain at least one step")
    seq = torch.cat([context, target[:, :-1]], dim=1).unsqueeze(-1)
    out, _ = gru(seq)
    predictions = head(out[:, context_len - 1 :, :]).squeeze(-1)
    loss = F.mse_loss(predictions, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
