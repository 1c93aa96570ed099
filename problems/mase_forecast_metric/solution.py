import torch


def mase(forecast, actual, insample, season=1):
    if forecast.shape != actual.shape:
        raise ValueError("forecast and actual must have the same shape")
    if forecast.dim() not in (1, 2) or insample.dim() != forecast.dim():
        raise ValueError("inputs must all be 1-D or all be 2-D")
    if season < 1:
        raise ValueError("season must be >= 1")
    if forecast.shape[-1] < 1:
        raise ValueError("forecast horizon must be >= 1")
    if forecast.dim() == 1:
        forecast, actual, insample = forecast[None], actual[None], insample[None]
    if forecast.shape[0] < 1:
        raise ValueError("need at least one series")
    f, a, x = forecast.double(), actual.double(), insample.double()
    if x.shape[0] != f.shape[0]:
        raise ValueError("insample must have one row per forecast series")
    if x.shape[1] <= season:
        raise ValueError("insample must be longer than the season")
    scale = (x[:, season:] - x[:, :-season]).abs().mean(dim=1)
    if bool((scale == 0).any()):
        raise ValueError("naive in-sample error is zero for some series; MASE is undefined")
    errors = (f - a).abs().mean(dim=1)
    return float((errors / scale).mean())
