import torch
from torch import nn


class SmallCNN(nn.Module):
    def __init__(self, in_channels: int, channels: list, num_classes: int) -> None:
        super().__init__()
        if not channels:
            raise ValueError("channels must not be empty")
        if in_channels < 1 or num_classes < 1 or any(c < 1 for c in channels):
            raise ValueError("in_channels, channel sizes and num_classes must be >= 1")
        self.in_channels = in_channels
        layers = []
        prev = in_channels
        for c in channels:
            layers += [
                nn.Conv2d(prev, c, kernel_size=3, padding=1),
                nn.ReLU(),
                nn.MaxPool2d(kernel_size=2, ceil_mode=True),
            ]
            prev = c
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(prev, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 4 or x.shape[1] != self.in_channels:
            raise ValueError(
                f"expected input of shape (N, {self.in_channels}, H, W), got {tuple(x.shape)}"
            )
        x = self.features(x)
        x = self.pool(x)
        return self.head(torch.flatten(x, 1))
