"""Inter-annotator agreement on nominal labels: Krippendorff's alpha and Cohen's kappa.

One module for every panel: failure review (curator.review.stats), problem label rounds
and candidate votes (curator.panel) all measure agreement with `agreement`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from itertools import combinations


def krippendorff_alpha_nominal(units: Sequence[Sequence[Hashable]]) -> float | None:
    """Alpha for nominal data; `units` holds, per item, the values the annotators gave.

    Missing values are simply absent; units with fewer than two values are not pairable
    and are ignored. Returns None when alpha is undefined (no pairable unit, or every
    value is the same so no disagreement could be expected).
    """
    coincidence: Counter = Counter()
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for i, j in ((i, j) for i in range(m) for j in range(m) if i != j):
            coincidence[(values[i], values[j])] += 1.0 / (m - 1)
    totals: Counter = Counter()
    for (c, _k), weight in coincidence.items():
        totals[c] += weight
    n = sum(totals.values())
    observed = sum(w for (c, k), w in coincidence.items() if c != k)
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    if expected == 0:   # also when nothing was pairable (n = 0)
        return None
    return 1.0 - (n - 1) * observed / expected


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Kappa of two annotators over the same items (a[i] and b[i] label item i)."""
    if len(a) != len(b):
        raise ValueError("both annotators must label the same items")
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[v] * cb[v] for v in ca) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def pairwise_kappa(labels: dict[str, dict[Hashable, Hashable]]) -> list[dict]:
    """Per pair of annotators, kappa over the items both labelled.

    `labels` maps annotator -> {item: value}. Pairs with no shared item are left out.
    """
    out = []
    for first, second in combinations(sorted(labels), 2):
        shared = labels[first].keys() & labels[second].keys()
        if not shared:
            continue
        # kappa does not depend on the order of items, only on both lists sharing one
        kappa = cohen_kappa([labels[first][i] for i in shared],
                            [labels[second][i] for i in shared])
        out.append({"annotators": [first, second], "items": len(shared),
                    "kappa": None if kappa is None else round(kappa, 4)})
    return out


def confusion(units: Iterable[Sequence[Hashable]]) -> dict[str, dict[str, int]]:
    """How often two votes on the same item pair up: {x: {y: pairs}} (symmetric).

    Every unordered pair of votes on one item counts once, in cell (x, y) and, when the
    values differ, also in (y, x); so the diagonal is the agreeing pairs and a row's
    off-diagonal cells say what a value was confused with.
    """
    table: dict[str, dict[str, int]] = {}
    for values in units:
        for x, y in combinations(list(values), 2):
            x, y = str(x), str(y)
            table.setdefault(x, {}).setdefault(y, 0)
            table[x][y] += 1
            if x != y:
                table.setdefault(y, {}).setdefault(x, 0)
                table[y][x] += 1
    return {x: dict(sorted(row.items())) for x, row in sorted(table.items())}


def agreement(votes: Mapping[Hashable, Mapping[str, Hashable]]) -> dict:
    """Agreement over items labelled by several people, the same for every panel.

    `votes` maps item -> {annotator: value}. Returns {"items": items with two or more
    votes, "alpha": Krippendorff's alpha (nominal) or None, "kappa": {"ann|bob": Cohen's
    kappa over the items both labelled}, "confusion": see `confusion`}. Alpha and kappa
    are rounded to four places; None where undefined.
    """
    pairable = {item: dict(by) for item, by in votes.items() if len(by) >= 2}
    units = [list(by.values()) for by in pairable.values()]
    alpha = krippendorff_alpha_nominal(units)
    per_annotator: dict[str, dict[Hashable, Hashable]] = {}
    for item, by in pairable.items():
        for name, value in by.items():
            per_annotator.setdefault(name, {})[item] = value
    return {
        "items": len(pairable),
        "alpha": None if alpha is None else round(alpha, 4),
        "kappa": {"|".join(p["annotators"]): p["kappa"]
                  for p in pairwise_kappa(per_annotator)},
        "confusion": confusion(units),
    }
