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


def model_key(model: str, technique: str | None, techniques_of_model: set) -> str:
    """How reports and datasheets name a model: "model", or "model [technique]" when the
    model was evaluated with more than one technique (an unnamed one is "default")."""
    if len(techniques_of_model) > 1:
        return f"{model} [{technique or 'default'}]"
    return model


def per_problem(samples, skip: set | frozenset = frozenset()) -> dict[str, dict[str, tuple]]:
    """{model key: {problem id: (n, c)}} from (model, technique, problem id, passed) rows.

    `passed` is None for a sample not evaluated yet: it names the model (its technique
    counts for `model_key`) but adds nothing to n. Problems in `skip` are left out."""
    samples = list(samples)
    techniques: dict[str, set] = {}
    for model, technique, _, _ in samples:
        techniques.setdefault(model, set()).add(technique)
    out: dict[str, dict[str, tuple]] = {}
    for model, technique, problem_id, passed in samples:
        if problem_id in skip or passed is None:
            continue
        key = model_key(model, technique, techniques[model])
        n, c = out.setdefault(key, {}).get(problem_id, (0, 0))
        out[key][problem_id] = (n + 1, c + bool(passed))
    return out
