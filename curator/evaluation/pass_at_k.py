"""The unbiased pass@k estimator (Chen et al., 2021): 1 - C(n-c, k) / C(n, k)."""

from __future__ import annotations

from math import comb

KS = (1, 5, 10)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples drawn from n (c of them correct) passes."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got n={n}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def mean_pass_at_k(counts: list[tuple[int, int]], k: int) -> tuple[float, int] | None:
    """Average pass@k over problems with n >= k: (value, problems used), or None if none has."""
    usable = [(n, c) for n, c in counts if n >= k]
    if not usable:
        return None
    return sum(pass_at_k(n, c, k) for n, c in usable) / len(usable), len(usable)
