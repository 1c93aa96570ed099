import torch


def topk_predictions(logits: torch.Tensor, k: int, temperature: float = 1.0):
    if logits.dim() not in (1, 2):
        raise ValueError(f"logits must be 1-D or 2-D, got shape {tuple(logits.shape)}")
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    num_classes = logits.shape[-1]
    if not 1 <= k <= num_classes:
        raise ValueError(f"k must be in [1, {num_classes}], got {k}")
    with torch.no_grad():
        probs = torch.softmax(logits / temperature, dim=-1)
        sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    return sorted_probs[..., :k].clone(), order[..., :k].clone()
