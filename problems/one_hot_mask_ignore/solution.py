import torch
import torch.nn.functional as F


def one_hot_mask(mask: torch.Tensor, num_classes: int, ignore_index=255) -> torch.Tensor:
    if mask.dim() != 2:
        raise ValueError(f"mask must have shape (H, W), got {tuple(mask.shape)}")
    if mask.is_floating_point() or mask.is_complex() or mask.dtype == torch.bool:
        raise TypeError(f"mask must be an integer tensor, got {mask.dtype}")
    if num_classes < 1:
        raise ValueError("num_classes must be at least 1")
    mask = mask.long()
    if ignore_index is None:
        valid = torch.ones_like(mask, dtype=torch.bool)
    else:
        valid = mask != ignore_index
    values = mask[valid]
    if values.numel() > 0 and (int(values.min()) < 0 or int(values.max()) >= num_classes):
        raise ValueError(f"mask values must lie in [0, {num_classes}) or equal ignore_index")
    safe = torch.where(valid, mask, torch.zeros_like(mask))
    encoded = F.one_hot(safe, num_classes).permute(2, 0, 1).to(torch.float32)
    return (encoded * valid.unsqueeze(0)).contiguous()
