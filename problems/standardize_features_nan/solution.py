import torch


def standardize_features(x: torch.Tensor):
    if x.dim() != 2:
        raise ValueError(f"x must have shape (N, F), got {tuple(x.shape)}")
    if not x.is_floating_point():
        raise TypeError(f"x must be a floating-point tensor, got {x.dtype}")
    missing = torch.isnan(x)
    counts = (~missing).sum(dim=0)
    denom = counts.clamp(min=1).to(x.dtype)
    zero = torch.zeros((), dtype=x.dtype)
    mean = torch.where(missing, zero, x).sum(dim=0) / denom
    mean = torch.where(counts > 0, mean, zero)
    deviation = torch.where(missing, zero, x - mean)
    std = torch.sqrt((deviation**2).sum(dim=0) / denom)
    one = torch.ones((), dtype=x.dtype)
    std = torch.where((counts > 0) & (std > 0), std, one)
    return (x - mean) / std, mean, std
