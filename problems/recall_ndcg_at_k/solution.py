import torch


def recall_ndcg_at_k(scores: torch.Tensor, relevant: torch.Tensor, k: int):
    if scores.dim() != 2 or scores.shape != relevant.shape:
        raise ValueError("scores and relevant must both have shape (U, I)")
    if k < 1:
        raise ValueError("k must be >= 1")
    relevant = relevant.bool()
    num_relevant = relevant.sum(dim=1)
    users = num_relevant > 0
    if not bool(users.any()):
        raise ValueError("no user has a relevant item")
    k = min(k, scores.shape[1])
    order = torch.sort(scores, dim=1, descending=True, stable=True).indices[:, :k]
    hits = relevant.gather(1, order).double()  # (U, k)
    discounts = 1.0 / torch.log2(torch.arange(2, k + 2, dtype=torch.float64))
    dcg = (hits * discounts).sum(dim=1)
    ideal_len = num_relevant.clamp(max=k)
    cumulative = torch.cat([torch.zeros(1, dtype=torch.float64), discounts.cumsum(0)])
    idcg = cumulative[ideal_len]
    recall = hits.sum(dim=1)[users] / num_relevant[users].double()
    ndcg = dcg[users] / idcg[users]
    return float(recall.mean()), float(ndcg.mean())
