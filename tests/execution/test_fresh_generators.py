"""Each run's judge draws random numbers as a fresh `python -m pytest` would: its global
generators (numpy's, torch's default, `random`) start from their own fresh seeds, not from
the state the warm worker had when it forked the run. gym, which the warm worker of pfrl's
environment preloads, starts numpy's global generator at import (numpy 2 seeds it on first
use): every run forked from that worker drew the same numbers, so the runs triage repeats
were not independent. EmpiricalNormalization's unseeded test_large (it misses its
tolerance for about one draw in ten) failed the same way in both runs of one worker and
passed on the other, and a candidate's verdict on such a test hung on the worker it ran
on."""

from __future__ import annotations

import ast
import sys
import textwrap

import pytest
from execution_support import ADD_TESTS, GOOD_SOLUTION, needs_bwrap, start_engine, write_repo

from curator.execution.job import Job, Limits

DRAW = textwrap.dedent("""\
    import random

    import numpy as np
    import torch


    def draws():
        return (float(np.random.rand()), float(torch.rand(1).item()), random.random())
    """)

TESTS = DRAW + textwrap.dedent("""\

    from pkg.ops import scale


    def test_draws():
        assert scale(2) == 4
        raise AssertionError(f"draws {draws()!r}")
    """)

SELF_CONTAINED_TESTS = ADD_TESTS + "\n\n" + DRAW + textwrap.dedent("""\


    def test_draws():
        raise AssertionError(f"draws {draws()!r}")
    """)

OPS = "def scale(x):\n    return x * 2\n"
# What gym does at import (pfrl's environment preloads it): a use of numpy's global
# generator, which numpy 2 seeds on its first use.
INIT = "import numpy\n\nnumpy.random.rand()\n"


def _repo_job(root, init: str) -> Job:
    """The reference run of a repository whose package runs `init` at import and whose
    test reports what it draws."""
    write_repo(root, {"pkg/__init__.py": init, "pkg/ops.py": OPS,
                      "tests/test_draws.py": TESTS})
    return Job(problem_id="repo", solution=OPS, repo_dir=str(root),
               overlay={"pkg/ops.py": OPS}, node_ids=["tests/test_draws.py"],
               symbol="scale", python=sys.executable, reference=True,
               env_preload=("pkg",), limits=Limits(timeout_s=120))


def _draws(result) -> str:
    failed = [t for t in result.tests if t["id"].endswith("test_draws")]
    assert failed and failed[0]["outcome"] == "failed", (result.outcome, result.reason)
    return failed[0]["message"]


@pytest.mark.parametrize("isolation", [pytest.param("strong", marks=needs_bwrap), "weak"])
def test_runs_forked_from_one_warm_worker_draw_differently(tmp_path, isolation):
    repo = _repo_job(tmp_path / "repo", INIT)
    alone = Job(problem_id="p", solution=GOOD_SOLUTION, tests=SELF_CONTAINED_TESTS,
                limits=Limits(timeout_s=60))
    engine = start_engine(isolation, workers=1)   # one worker: every run forks from it
    try:
        for job in (repo, alone):
            first, second = (_draws(r) for r in (next(iter(engine.run([job]))),
                                                 next(iter(engine.run([job])))))
            numpy_1, torch_1, python_1 = ast.literal_eval(first.split("draws ", 1)[1])
            numpy_2, torch_2, python_2 = ast.literal_eval(second.split("draws ", 1)[1])
            assert numpy_1 != numpy_2, (job.problem_id, first, second)
            assert torch_1 != torch_2, (job.problem_id, first, second)
            assert python_1 != python_2, (job.problem_id, first, second)
    finally:
        engine.close()


# A repository whose package seeds the global generators at import: a fresh interpreter
# draws the same numbers in every run, and so does each run of a warm worker (a run
# imports the repository's package itself, after the generators were seeded afresh).
SEEDING = "import numpy\nimport torch\n\nnumpy.random.seed(7)\ntorch.manual_seed(7)\n"


@pytest.mark.parametrize("isolation", [pytest.param("strong", marks=needs_bwrap), "weak"])
def test_a_repository_seeding_at_import_draws_the_same_in_every_run(tmp_path, isolation):
    import numpy as np
    import torch

    repo = _repo_job(tmp_path / "repo", SEEDING)
    fresh_numpy = float(np.random.RandomState(7).random_sample())
    fresh_torch = float(torch.rand(1, generator=torch.Generator().manual_seed(7)).item())
    engine = start_engine(isolation, workers=1, eager=False)   # repository runs only
    try:
        for _ in range(2):
            drawn = _draws(next(iter(engine.run([repo]))))
            numpy_drawn, torch_drawn, _python = ast.literal_eval(drawn.split("draws ", 1)[1])
            assert (numpy_drawn, torch_drawn) == (fresh_numpy, fresh_torch), drawn
    finally:
        engine.close()
