import torch


def xywh_to_xyxy(boxes: torch.Tensor, image_size) -> torch.Tensor:
    if boxes.dim() != 2 or boxes.shape[1] != 4:
        raise ValueError(f"boxes must have shape (N, 4), got {tuple(boxes.shape)}")
    if bool((boxes[:, 2:] < 0).any()):
        raise ValueError("box width and height must be non-negative")
    height, width = image_size
    x1 = boxes[:, 0].clamp(0, width)
    y1 = boxes[:, 1].clamp(0, height)
    x2 = (boxes[:, 0] + boxes[:, 2]).clamp(0, width)
    y2 = (boxes[:, 1] + boxes[:, 3]).clamp(0, height)
    return torch.stack([x1, y1, x2, y2], dim=1)
