"""Each run's judge draws random numbers as a fresh `python -m pytest` would: its global
generators (numpy's, torch's default, `random`) start from their own fresh seeds, not from
the state the warm worker had when it forked the run. pfrl's package draws from numpy's
global generator at import, and the warm worker of its environment imports it: every run
forked from that worker drew the same numbers, so an unseeded test whose tolerance a few
draws in ten miss (EmpiricalNormalization's test_large) failed in every run of one worker
and passed in every run of another, and triage called it flaky where it is not, or
failing upstream, and a candidate's verdict hung on the worker it ran on."""

from __future__ import annotations

import ast
import sys
import textwrap

import pytest
from execution_support import ADD_TESTS, GOOD_SOLUTION, needs_bwrap, start_engine

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
# What pfrl does at import (through a module it imports): a draw from numpy's global
# generator, which numpy 2 seeds on its first use.
INIT = "import numpy\n\nnumpy.random.rand()\n"


def _draws(result) -> str:
    failed = [t for t in result.tests if t["id"].endswith("test_draws")]
    assert failed and failed[0]["outcome"] == "failed", (result.outcome, result.reason)
    return failed[0]["message"]


@pytest.mark.parametrize("isolation", [pytest.param("strong", marks=needs_bwrap), "weak"])
def test_runs_forked_from_one_warm_worker_draw_differently(tmp_path, isolation):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text(INIT)
    (root / "pkg" / "ops.py").write_text(OPS)
    (root / "tests").mkdir()
    (root / "tests" / "test_draws.py").write_text(TESTS)
    repo = Job(problem_id="repo", solution=OPS, repo_dir=str(root),
               overlay={"pkg/ops.py": OPS}, node_ids=["tests/test_draws.py"],
               symbol="scale", python=sys.executable, reference=True,
               env_preload=("pkg",), limits=Limits(timeout_s=120))
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
