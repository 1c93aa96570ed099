"""Runs use pytest's native tracebacks (its own styles read and parse the source of every
frame: most of a failing run's time); the runner's and the boundary's frames are left
out of what people read, the test's and the candidate's stay."""

from __future__ import annotations

from types import SimpleNamespace

from execution_support import run_one, shared_engine

from curator.execution.harness import _prune_native

NATIVE = [
    "Traceback (most recent call last):\n",
    '  File "/venv/lib/python3.11/site-packages/_pytest/runner.py", line 341, in from_call\n'
    "    result = func()\n",
    '  File "/venv/lib/python3.11/site-packages/pluggy/_callers.py", line 103, in _multicall\n'
    "    res = hook_impl.function(*args)\n"
    "          ^^^^^^^^^^^^^^^^^^^^^^^^^\n",
    '  File "/tmp/run/test_solution.py", line 9, in test_add\n',
    '  File "/tmp/.curator-src/lib/curator/execution/boundary.py", line 1780, in __call__\n'
    '    return self._link.call(("call", None), self, args, kwargs)\n',
    '  File "/venv/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", line 1446,'
    " in _fn\n    return fn(*args, **kwargs)\n",
    "AssertionError: assert 1 == 2\n",
    "raised in the solution process (ValueError):\n",
    '  File "/tmp/srun/solution.py", line 3, in add\n'
    "    raise ValueError('no')\n",
]


def test_runner_and_boundary_frames_are_left_out():
    entry = SimpleNamespace(lines=list(NATIVE))
    report = SimpleNamespace(longrepr=SimpleNamespace(
        reprtraceback=SimpleNamespace(reprentries=[entry])))
    _prune_native(report)
    text = "".join(entry.lines)
    assert "_pytest" not in text and "pluggy" not in text and "hook_impl" not in text
    assert "boundary.py" not in text and "eval_frame" not in text and "_link.call" not in text
    assert 'File "/tmp/run/test_solution.py", line 9, in test_add' in text
    assert "AssertionError: assert 1 == 2" in text
    assert 'File "/tmp/srun/solution.py", line 3, in add' in text
    assert "raise ValueError('no')" in text


def test_a_failing_runs_log_names_the_test_and_the_candidate():
    engine = shared_engine("weak")   # the pytest process's (execution_support)
    result = run_one(engine, "def add(a, b):\n    raise ValueError('no sum today')\n")
    assert result.outcome == "failed"
    assert "ValueError: no sum today" in result.stdout
    assert "solution.py" in result.stdout
    assert "_pytest" not in result.stdout and "pluggy" not in result.stdout
