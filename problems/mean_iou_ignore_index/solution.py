import math

import torch


def mean_iou(pred, target, num_classes, ignore_index=255):
    if pred.shape != target.shape:
        raise ValueError(f"shape mismatch: {tuple(pred.shape)} vs {tuple(target.shape)}")
    if num_classes < 1:
        raise ValueError("num_classes must be >= 1")
    valid = target != ignore_index
    p = pred[valid].long()
    t = target[valid].long()
    for name, values in (("pred", p), ("target", t)):
        if values.numel() and (int(values.min()) < 0 or int(values.max()) >= num_classes):
            raise ValueError(f"{name} values must lie in [0, {num_classes})")
    confusion = torch.bincount(t * num_classes + p, minlength=num_classes**2)
    confusion = confusion.reshape(num_classes, num_classes).double()
    intersection = torch.diagonal(confusion)
    union = confusion.sum(dim=0) + confusion.sum(dim=1) - intersection
    per_class = torch.where(
        union > 0, intersection / union.clamp(min=1), torch.full_like(union, float("nan"))
    )
    present = ~torch.isnan(per_class)
    miou = float(per_class[present].mean()) if bool(present.any()) else math.nan
    return miou, per_class
