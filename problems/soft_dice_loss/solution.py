import torch


def soft_dice_loss(logits: torch.Tensor, targets: torch.Tensor, eps: float = 1.0) -> torch.Tensor:
    if logits.shape != targets.shape:
        raise ValueError(f"shape mismatch: {tuple(logits.shape)} vs {tuple(targets.shape)}")
    if logits.dim() < 2 or logits.shape[0] == 0:
        raise ValueError("logits must have a non-empty batch dimension and spatial dims")
    if eps <= 0:
        raise ValueError("eps must be positive")
    probs = torch.sigmoid(logits).flatten(1)
    t = targets.to(logits.dtype).flatten(1)
    intersection = (probs * t).sum(dim=1)
    denom = probs.sum(dim=1) + t.sum(dim=1)
    dice = (2 * intersection + eps) / (denom + eps)
    return (1 - dice).mean()
