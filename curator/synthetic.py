"""A synthetic workspace: many plausible-looking problems, for measuring the app and the store.

The problems are deterministic for a given seed and count, valid (they pass
`curator.problem.validate`), and written through `curator.store.problems.save`, so the
database looks exactly as if a person had loaded them (audit rows included). Their code is
small and real: each reference solution passes its own tests.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from curator import sync
from curator import workspace as workspace_mod
from curator.labels import DATA, STAGES, TASKS
from curator.problem import Problem
from curator.progress import CancelCheck, Progress, checkpoint
from curator.store import Store
from curator.store import problems as problem_store

_VERBS = ("normalize", "clip", "pad", "mask", "pool", "scale", "encode", "decode", "merge",
          "split", "smooth", "rank", "threshold", "align", "crop", "shift", "tile", "sample")
_NOUNS = ("logits", "boxes", "tokens", "pixels", "features", "scores", "anchors", "masks",
          "embeddings", "gradients", "weights", "labels", "frames", "patches", "ratings")
_ADJECTIVES = ("batched", "weighted", "masked", "stable", "sparse", "padded", "clipped",
               "per-channel", "windowed", "ragged", "signed", "normalised")
_STATUS_WEIGHTS = (("draft", 5), ("ready", 3), ("released", 1), ("retired", 1))


def _status(rng: random.Random) -> str:
    return rng.choices([s for s, _ in _STATUS_WEIGHTS], [w for _, w in _STATUS_WEIGHTS])[0]


def make_problem(index: int, rng: random.Random) -> Problem:
    """One synthetic problem; `index` makes its id unique."""
    verb, noun, adjective = rng.choice(_VERBS), rng.choice(_NOUNS), rng.choice(_ADJECTIVES)
    function = f"{verb}_{noun}"
    factor = rng.randint(2, 9)
    prompt = (
        f"# {verb.capitalize()} {adjective} {noun}\n\n"
        f"Write `{function}(values)` that takes a list of numbers ({adjective} {noun}) and "
        f"returns a new list where every value is multiplied by {factor}.\n\n"
        f"- Keep the order of the input.\n- Return an empty list for an empty input.\n"
    )
    solution = (
        f"def {function}(values):\n"
        f'    """{verb.capitalize()} {noun} by a constant factor."""\n'
        f"    return [v * {factor} for v in values]\n"
    )
    tests = (
        f"from solution import {function}\n\n\n"
        f"def test_scales_each_value():\n"
        f"    assert {function}([1, 2, 3]) == [{factor}, {2 * factor}, {3 * factor}]\n\n\n"
        f"def test_empty():\n"
        f"    assert {function}([]) == []\n\n\n"
        f"def test_keeps_order():\n"
        f"    assert {function}([3, 1]) == [{3 * factor}, {factor}]\n"
    )
    return Problem(
        id=f"synth_{index:05d}_{function}",
        entry_point=function,
        kind="function",
        title=f"{verb.capitalize()} {adjective} {noun}",
        stage=rng.choice(STAGES + ("",)),
        task=rng.choice(TASKS),
        data=rng.choice(DATA),
        status=_status(rng),
        prompt=prompt,
        solution=solution,
        tests=tests,
    )


def make_problems(count: int, seed: int = 0, start: int = 1) -> Iterator[Problem]:
    rng = random.Random(seed)
    for index in range(start, start + count):
        yield make_problem(index, rng)


def populate(store: Store, count: int, seed: int = 0, progress: Progress | None = None,
             cancelled: CancelCheck | None = None) -> list[str]:
    """Save `count` synthetic problems into the database (one transaction); returns ids."""
    ids = []
    with store.transaction():
        for done, problem in enumerate(make_problems(count, seed), 1):
            checkpoint(cancelled, "synthetic generation")
            problem_store.save(store, problem)
            ids.append(problem.id)
            if progress:
                progress(done, count, problem.id)
    return ids


def create_workspace(root: str | Path, count: int, seed: int = 0, write_files: bool = False,
                     actor: str = "synthetic", progress: Progress | None = None
                     ) -> workspace_mod.Workspace:
    """A workspace at `root` whose database holds `count` synthetic problems.

    With `write_files`, problems/<id>/ folders are written too (slow for large counts;
    the app and the benchmarks only need the database).
    """
    ws = workspace_mod.init(root)
    with Store(ws.db_path, actor) as store:
        ids = populate(store, count, seed, progress)
        if write_files:
            sync.dump(store, ws.problems_dir, ids)
    return ws
