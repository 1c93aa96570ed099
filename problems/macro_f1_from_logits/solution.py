import torch


def macro_f1(logits: torch.Tensor, labels: torch.Tensor, num_classes: int) -> float:
    if num_classes < 1:
        raise ValueError("num_classes must be >= 1")
    if logits.dim() != 2 or logits.shape[1] != num_classes:
        raise ValueError(f"logits must have shape (N, {num_classes}), got {tuple(logits.shape)}")
    if labels.dim() != 1 or labels.shape[0] != logits.shape[0]:
        raise ValueError("labels must have shape (N,) matching logits")
    labels = labels.long()
    if labels.numel() and (int(labels.min()) < 0 or int(labels.max()) >= num_classes):
        raise ValueError(f"labels must lie in [0, {num_classes})")
    preds = logits.argmax(dim=1)
    confusion = torch.bincount(labels * num_classes + preds, minlength=num_classes**2)
    confusion = confusion.reshape(num_classes, num_classes).double()  # rows: label, cols: pred
    tp = torch.diagonal(confusion)
    fp = confusion.sum(dim=0) - tp
    fn = confusion.sum(dim=1) - tp
    denom = 2 * tp + fp + fn
    present = denom > 0
    if not bool(present.any()):
        return 0.0
    f1 = 2 * tp[present] / denom[present]
    return float(f1.mean())
