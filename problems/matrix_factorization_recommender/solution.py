import torch
from torch import nn


class MFRecommender(nn.Module):
    def __init__(self, num_users: int, num_items: int, dim: int) -> None:
        super().__init__()
        if num_users < 1 or num_items < 1 or dim < 1:
            raise ValueError("num_users, num_items and dim must be >= 1")
        self.user_emb = nn.Embedding(num_users, dim)
        self.item_emb = nn.Embedding(num_items, dim)
        self.user_bias = nn.Embedding(num_users, 1)
        self.item_bias = nn.Embedding(num_items, 1)
        self.global_bias = nn.Parameter(torch.zeros(()))
        nn.init.normal_(self.user_emb.weight, mean=0.0, std=0.01)
        nn.init.normal_(self.item_emb.weight, mean=0.0, std=0.01)
        nn.init.zeros_(self.user_bias.weight)
        nn.init.zeros_(self.item_bias.weight)

    def forward(self, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        if users.dim() != 1 or items.dim() != 1 or users.shape[0] != items.shape[0]:
            raise ValueError("users and items must be 1-D tensors of the same length")
        dot = (self.user_emb(users) * self.item_emb(items)).sum(dim=1)
        bias = self.user_bias(users).squeeze(1) + self.item_bias(items).squeeze(1)
        return dot + bias + self.global_bias
