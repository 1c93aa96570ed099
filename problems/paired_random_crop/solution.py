import torch


def paired_random_crop(image, mask, size, generator):
    if image.dim() != 3:
        raise ValueError(f"image must have shape (C, H, W), got {tuple(image.shape)}")
    if mask.dim() != 2:
        raise ValueError(f"mask must have shape (H, W), got {tuple(mask.shape)}")
    height, width = image.shape[-2:]
    if tuple(mask.shape) != (height, width):
        raise ValueError("image and mask must have the same spatial size")
    h, w = int(size[0]), int(size[1])
    if not (1 <= h <= height and 1 <= w <= width):
        raise ValueError(f"crop size {(h, w)} does not fit an image of size {(height, width)}")
    top = int(torch.randint(0, height - h + 1, (1,), generator=generator))
    left = int(torch.randint(0, width - w + 1, (1,), generator=generator))
    image_crop = image[:, top : top + h, left : left + w].clone()
    mask_crop = mask[top : top + h, left : left + w].clone()
    return image_crop, mask_crop, (top, left)
