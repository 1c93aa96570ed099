import torch


def _iou_one_to_many(box: torch.Tensor, others: torch.Tensor) -> torch.Tensor:
    x1 = torch.maximum(box[0], others[:, 0])
    y1 = torch.maximum(box[1], others[:, 1])
    x2 = torch.minimum(box[2], others[:, 2])
    y2 = torch.minimum(box[3], others[:, 3])
    inter = (x2 - x1).clamp(min=0) * (y2 - y1).clamp(min=0)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    union = area + areas - inter
    return torch.where(union > 0, inter / union.clamp(min=1e-12), torch.zeros_like(inter))


def nms(boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    if boxes.dim() != 2 or boxes.shape[1] != 4:
        raise ValueError(f"boxes must have shape (N, 4), got {tuple(boxes.shape)}")
    if scores.dim() != 1 or scores.shape[0] != boxes.shape[0]:
        raise ValueError("scores must have shape (N,) matching boxes")
    order = torch.sort(scores, descending=True, stable=True).indices
    suppressed = torch.zeros(boxes.shape[0], dtype=torch.bool)
    keep = []
    for position, idx in enumerate(order.tolist()):
        if suppressed[idx]:
            continue
        keep.append(idx)
        rest = order[position + 1 :]
        if rest.numel() == 0:
            break
        ious = _iou_one_to_many(boxes[idx], boxes[rest])
        suppressed[rest[ious > iou_threshold]] = True
    return torch.tensor(keep, dtype=torch.long)
