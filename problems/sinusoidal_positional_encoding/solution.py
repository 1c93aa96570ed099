import torch


def sinusoidal_encoding(seq_len, d_model, base=10000.0, dtype=torch.float32):
    if d_model <= 0 or d_model % 2 != 0:
        raise ValueError(f"d_model must be a positive even integer, got {d_model}")
    if seq_len < 0:
        raise ValueError(f"seq_len must be non-negative, got {seq_len}")
    positions = torch.arange(seq_len, dtype=torch.float64).unsqueeze(1)
    pair = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = positions / torch.pow(torch.tensor(base, dtype=torch.float64), pair / d_model)
    table = torch.empty(seq_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table.to(dtype)
