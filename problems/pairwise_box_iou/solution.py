import torch


def box_iou(boxes1: torch.Tensor, boxes2: torch.Tensor) -> torch.Tensor:
    for boxes in (boxes1, boxes2):
        if boxes.dim() != 2 or boxes.shape[1] != 4:
            raise ValueError(f"boxes must have shape (K, 4), got {tuple(boxes.shape)}")
    area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
    area2 = (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1])
    top_left = torch.maximum(boxes1[:, None, :2], boxes2[None, :, :2])
    bottom_right = torch.minimum(boxes1[:, None, 2:], boxes2[None, :, 2:])
    wh = (bottom_right - top_left).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    union = area1[:, None] + area2[None, :] - inter
    safe_union = torch.where(union > 0, union, torch.ones_like(union))
    return torch.where(union > 0, inter / safe_union, torch.zeros_like(inter))
