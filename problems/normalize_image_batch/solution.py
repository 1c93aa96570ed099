import torch


def normalize_batch(images: torch.Tensor, mean, std) -> torch.Tensor:
    if images.dim() != 4:
        raise ValueError(f"images must have shape (N, C, H, W), got {tuple(images.shape)}")
    if not images.is_floating_point():
        raise TypeError(f"images must be a floating-point tensor, got {images.dtype}")
    channels = images.shape[1]
    mean_t = torch.as_tensor(mean, dtype=images.dtype, device=images.device).reshape(-1)
    std_t = torch.as_tensor(std, dtype=images.dtype, device=images.device).reshape(-1)
    if mean_t.numel() != channels or std_t.numel() != channels:
        raise ValueError(f"mean and std must have {channels} elements")
    if bool((std_t <= 0).any()):
        raise ValueError("std values must be positive")
    return (images - mean_t.view(1, channels, 1, 1)) / std_t.view(1, channels, 1, 1)
