import torch


def autoregressive_forecast(model, context: torch.Tensor, horizon: int) -> torch.Tensor:
    if context.dim() != 2 or context.shape[1] < 1:
        raise ValueError(f"context must have shape (B, W) with W >= 1, got {tuple(context.shape)}")
    if horizon < 0:
        raise ValueError("horizon must be >= 0")
    batch = context.shape[0]
    predictions = []
    with torch.no_grad():
        window = context.clone()
        for _ in range(horizon):
            y = model(window)
            if y.shape not in ((batch,), (batch, 1)):
                raise ValueError(f"model output must be (B,) or (B, 1), got {tuple(y.shape)}")
            y = y.reshape(batch).to(context.dtype)
            predictions.append(y)
            window = torch.cat([window[:, 1:], y.unsqueeze(1)], dim=1)
    if not predictions:
        return context.new_empty((batch, 0))
    return torch.stack(predictions, dim=1)
