import math

import torch


def _iou(box: torch.Tensor, others: torch.Tensor) -> torch.Tensor:
    x1 = torch.maximum(box[0], others[:, 0])
    y1 = torch.maximum(box[1], others[:, 1])
    x2 = torch.minimum(box[2], others[:, 2])
    y2 = torch.minimum(box[3], others[:, 3])
    inter = (x2 - x1).clamp(min=0) * (y2 - y1).clamp(min=0)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    union = area + areas - inter
    return torch.where(union > 0, inter / union.clamp(min=1e-12), torch.zeros_like(inter))


def average_precision(detections, ground_truths, iou_threshold=0.5):
    if len(detections) != len(ground_truths):
        raise ValueError("detections and ground_truths must have one entry per image")
    entries = []
    for image, ((boxes, scores), gts) in enumerate(zip(detections, ground_truths)):
        if boxes.dim() != 2 or boxes.shape[1] != 4:
            raise ValueError(f"image {image}: detection boxes must have shape (N, 4)")
        if scores.dim() != 1 or scores.shape[0] != boxes.shape[0]:
            raise ValueError(f"image {image}: scores must have shape (N,)")
        if gts.dim() != 2 or gts.shape[1] != 4:
            raise ValueError(f"image {image}: ground-truth boxes must have shape (M, 4)")
        for j in range(boxes.shape[0]):
            entries.append((float(scores[j]), image, j))
    total_gt = sum(int(g.shape[0]) for g in ground_truths)
    if total_gt == 0:
        return math.nan
    if not entries:
        return 0.0
    entries.sort(key=lambda e: -e[0])  # stable: keeps (image, index) order on ties
    matched = [torch.zeros(g.shape[0], dtype=torch.bool) for g in ground_truths]
    is_tp = []
    for _, image, j in entries:
        gts = ground_truths[image]
        hit = False
        if gts.shape[0] > 0:
            ious = _iou(detections[image][0][j].double(), gts.double())
            best = int(torch.argmax(ious))
            if float(ious[best]) >= iou_threshold and not bool(matched[image][best]):
                matched[image][best] = True
                hit = True
        is_tp.append(hit)
    tp = torch.tensor(is_tp, dtype=torch.float64).cumsum(0)
    ranks = torch.arange(1, len(is_tp) + 1, dtype=torch.float64)
    precision = tp / ranks
    recall = tp / total_gt
    p_interp = torch.flip(torch.cummax(torch.flip(precision, [0]), 0).values, [0])
    previous = torch.cat([torch.zeros(1, dtype=torch.float64), recall[:-1]])
    return float(((recall - previous) * p_interp).sum())
