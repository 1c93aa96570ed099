"""Balanced assignment: each item to `per_item` people, the least loaded first.

Shared by label rounds (problems to annotators) and candidate panels (candidates to
reviewers). Deterministic for a seed: ties in load are broken by a seeded random order of
the people, so two runs with the same seed give the same plan.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterable, Mapping, Sequence


def plan(items: Iterable[Hashable], names: Sequence[str], per_item: int,
         current: Mapping[Hashable, Iterable[str]], seed: int = 0) -> dict:
    """item -> the sorted names it goes to; `current` (item -> names) counts as load."""
    rng = random.Random(seed)
    load = {a: sum(a in people for people in current.values()) for a in names}
    tiebreak = {a: rng.random() for a in names}
    out: dict = {}
    for item in items:
        people = sorted(names, key=lambda a: (load[a], tiebreak[a]))[:per_item]
        for a in people:
            load[a] += 1
        out[item] = sorted(people)
    return out
