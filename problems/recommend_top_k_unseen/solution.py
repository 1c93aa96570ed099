import torch


def recommend_top_k(user_emb, item_emb, k, seen=None):
    if user_emb.dim() != 2 or item_emb.dim() != 2 or user_emb.shape[1] != item_emb.shape[1]:
        raise ValueError("user_emb (U, D) and item_emb (I, D) must share D")
    if k < 1:
        raise ValueError("k must be >= 1")
    num_users, num_items = user_emb.shape[0], item_emb.shape[0]
    if seen is not None and tuple(seen.shape) != (num_users, num_items):
        raise ValueError(f"seen must have shape {(num_users, num_items)}")
    with torch.no_grad():
        scores = user_emb @ item_emb.T
        eligible = torch.ones_like(scores, dtype=torch.bool)
        if seen is not None:
            eligible = ~seen.bool()
        masked = scores.masked_fill(~eligible, float("-inf"))
        # Sort eligible items first, then by score, keeping index order for ties.
        order = torch.sort(masked, dim=1, descending=True, stable=True).indices
        take = min(k, num_items)
        top_idx = order[:, :take]
        top_scores = masked.gather(1, top_idx)
        top_ok = eligible.gather(1, top_idx)
        indices = torch.full((num_users, k), -1, dtype=torch.long)
        out_scores = torch.full((num_users, k), float("-inf"), dtype=scores.dtype)
        indices[:, :take] = torch.where(top_ok, top_idx, torch.full_like(top_idx, -1))
        out_scores[:, :take] = torch.where(top_ok, top_scores, torch.full_like(top_scores, float("-inf")))
    return indices, out_scores
