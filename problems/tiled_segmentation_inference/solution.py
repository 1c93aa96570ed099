import torch


def _starts(length: int, tile: int, stride: int) -> list:
    starts = list(range(0, length - tile + 1, stride))
    if starts[-1] != length - tile:
        starts.append(length - tile)
    return starts


def tiled_inference(model, image: torch.Tensor, tile_size: int, stride: int) -> torch.Tensor:
    if image.dim() != 3:
        raise ValueError(f"image must have shape (C, H, W), got {tuple(image.shape)}")
    if tile_size < 1 or stride < 1 or stride > tile_size:
        raise ValueError("need tile_size >= 1 and 1 <= stride <= tile_size")
    _, height, width = image.shape
    if height < tile_size or width < tile_size:
        raise ValueError("image is smaller than one tile")
    total = None
    counts = torch.zeros(1, height, width, dtype=image.dtype)
    with torch.no_grad():
        for top in _starts(height, tile_size, stride):
            for left in _starts(width, tile_size, stride):
                tile = image[None, :, top : top + tile_size, left : left + tile_size]
                logits = model(tile)
                if logits.dim() != 4 or logits.shape[0] != 1 or logits.shape[2:] != (tile_size, tile_size):
                    raise ValueError(
                        f"model output must be (1, K, {tile_size}, {tile_size}), got {tuple(logits.shape)}"
                    )
                if total is None:
                    total = torch.zeros(logits.shape[1], height, width, dtype=logits.dtype)
                elif logits.shape[1] != total.shape[0]:
                    raise ValueError("model returned a different number of classes")
                total[:, top : top + tile_size, left : left + tile_size] += logits[0]
                counts[:, top : top + tile_size, left : left + tile_size] += 1
    return total / counts.to(total.dtype)
