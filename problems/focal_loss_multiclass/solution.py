import torch
import torch.nn.functional as F


def focal_loss(logits, targets, alpha=None, gamma=2.0, reduction="mean"):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"unknown reduction {reduction!r}")
    if gamma < 0:
        raise ValueError("gamma must be non-negative")
    if logits.dim() != 2 or targets.dim() != 1 or targets.shape[0] != logits.shape[0]:
        raise ValueError("expected logits of shape (N, C) and targets of shape (N,)")
    num_classes = logits.shape[1]
    log_p = F.log_softmax(logits, dim=1)
    log_pt = log_p.gather(1, targets.long().unsqueeze(1)).squeeze(1)
    pt = log_pt.exp()
    loss = -((1 - pt) ** gamma) * log_pt
    if alpha is not None:
        alpha = torch.as_tensor(alpha, dtype=logits.dtype, device=logits.device)
        if alpha.dim() != 1 or alpha.shape[0] != num_classes:
            raise ValueError(f"alpha must have {num_classes} elements")
        loss = alpha[targets.long()] * loss
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if loss.numel() == 0:
        return loss.sum()
    return loss.mean()
