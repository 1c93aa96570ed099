import torch
import torch.nn.functional as F


def label_smoothed_cross_entropy(logits, targets, epsilon=0.1, ignore_index=-100):
    if not 0.0 <= epsilon < 1.0:
        raise ValueError("epsilon must be in [0, 1)")
    if targets.shape != logits.shape[:-1]:
        raise ValueError(
            f"targets shape {tuple(targets.shape)} does not match logits {tuple(logits.shape)}"
        )
    vocab = logits.shape[-1]
    flat_logits = logits.reshape(-1, vocab)
    flat_targets = targets.reshape(-1)
    keep = flat_targets != ignore_index
    if not bool(keep.any()):
        return logits.sum() * 0.0
    log_p = F.log_softmax(flat_logits[keep], dim=-1)
    nll = -log_p.gather(1, flat_targets[keep].unsqueeze(1)).squeeze(1)
    smooth = -log_p.mean(dim=-1)
    return ((1.0 - epsilon) * nll + epsilon * smooth).mean()
