"""A write to a closed pipe is BrokenPipeError in the judge and in the solution process, as
in any Python process, never death by SIGPIPE: upstream tests (and the code they test)
that write to a finished subprocess or a closed socket rely on it, and a solution process
that has ended is the boundary's own reason, not a judge killed by the signal."""

from __future__ import annotations

from execution_support import engine_fixture, run_one

engine = engine_fixture()

PIPE_SOLUTION = """\
import os


def write_to_closed_pipe():
    read, write = os.pipe()
    os.close(read)
    try:
        os.write(write, b"x")
    except BrokenPipeError:
        return "BrokenPipeError"
    finally:
        os.close(write)
    return "written"
"""

PIPE_TESTS = """\
import os

import pytest

from solution import write_to_closed_pipe


def test_the_solution_process_sees_broken_pipe_error():
    assert write_to_closed_pipe() == "BrokenPipeError"


def test_the_judge_sees_broken_pipe_error():
    read, write = os.pipe()
    os.close(read)
    with pytest.raises(BrokenPipeError):
        os.write(write, b"x")
    os.close(write)
"""


def test_a_write_to_a_closed_pipe_raises_on_both_sides(engine):
    result = run_one(engine, PIPE_SOLUTION, PIPE_TESTS, timeout=60)
    assert result.outcome == "passed", result.reason


ENDING_SOLUTION = """\
import os
import threading


def add(a, b):
    threading.Timer(0.2, os._exit, (0,)).start()   # the process ends after the reply
    return a + b
"""

ENDING_TESTS = """\
import time

from solution import add


def test_calls_after_the_solution_process_ended():
    assert add(1, 2) == 3
    time.sleep(2)
    add(1, 2)
"""


def test_a_call_after_the_solution_process_ended_is_its_reason_not_sigpipe(engine):
    result = run_one(engine, ENDING_SOLUTION, ENDING_TESTS, timeout=60)
    assert result.outcome != "passed"
    assert "SIGPIPE" not in result.reason
    assert "solution process" in result.reason, result.reason
