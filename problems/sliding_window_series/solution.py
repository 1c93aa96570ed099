import torch


def make_windows(series: torch.Tensor, window: int, horizon: int, stride: int = 1):
    if series.dim() != 1:
        raise ValueError(f"series must be 1-D, got shape {tuple(series.shape)}")
    if window < 1 or horizon < 1 or stride < 1:
        raise ValueError("window, horizon and stride must all be >= 1")
    total = series.shape[0]
    span = window + horizon
    if total < span:
        return series.new_empty((0, window)), series.new_empty((0, horizon))
    samples = series.unfold(0, span, stride)  # (N, window + horizon)
    return samples[:, :window].clone(), samples[:, window:].clone()
