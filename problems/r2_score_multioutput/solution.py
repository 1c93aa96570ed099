import torch


def r2_score(pred: torch.Tensor, target: torch.Tensor, multioutput: str = "uniform_average"):
    if multioutput not in ("uniform_average", "raw_values"):
        raise ValueError(f"unknown multioutput {multioutput!r}")
    if pred.shape != target.shape:
        raise ValueError(f"shape mismatch: {tuple(pred.shape)} vs {tuple(target.shape)}")
    if pred.dim() not in (1, 2):
        raise ValueError("inputs must be 1-D or 2-D")
    if pred.shape[0] < 2:
        raise ValueError("need at least two samples")
    p = pred.double().reshape(pred.shape[0], -1)
    t = target.double().reshape(target.shape[0], -1)
    ss_res = ((t - p) ** 2).sum(dim=0)
    ss_tot = ((t - t.mean(dim=0)) ** 2).sum(dim=0)
    safe_tot = torch.where(ss_tot > 0, ss_tot, torch.ones_like(ss_tot))
    constant = torch.where(ss_res == 0, torch.ones_like(ss_res), torch.zeros_like(ss_res))
    scores = torch.where(ss_tot > 0, 1.0 - ss_res / safe_tot, constant)
    if multioutput == "raw_values":
        return scores
    return float(scores.mean())
