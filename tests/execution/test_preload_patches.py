"""A preloaded module that replaces parts of the standard library at import (gevent's
monkey.patch_all, run by locust when it is imported) is left out of the worker's
preload, with the reason: the worker starts again without it, and its runs pass."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from curator.execution.job import Job, Limits

ROOT = Path(__file__).resolve().parents[2]

PATCHER = """\
import os


def fork():
    raise OSError("fork replaced by patcher")


os.fork = fork
"""


def _messages(proc, until: str) -> list[dict]:
    seen = []
    for line in proc.stdout:
        message = json.loads(line)
        seen.append(message)
        if until in message:
            return seen
    raise AssertionError(f"the worker ended before {until!r}: {seen}")


def test_a_preload_that_patches_the_standard_library_is_left_out(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "patcher.py").write_text(PATCHER, encoding="utf-8")
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o1777)
    settings = {"warm": True, "preload": ["json", "patcher"], "isolation": "weak",
                "tmp_root": str(runs), "uid": None}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "lib"), str(ROOT)]))
    proc = subprocess.Popen([sys.executable, "-m", "curator.execution.worker",
                             json.dumps(settings)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=env, text=True, cwd=tmp_path)
    try:
        ready = _messages(proc, "ready")[-1]["ready"]
        assert any(p.startswith("patcher: replaces os.fork at import") for p in
                   ready["problems"]), ready["problems"]
        job = Job(problem_id="p", solution="def add(a, b):\n    return a + b\n",
                  tests="from solution import add\n\n\ndef test_add():\n"
                        "    assert add(1, 2) == 3\n", limits=Limits(timeout_s=60))
        proc.stdin.write(json.dumps({"job": job.to_dict(), "marker": "curator-test-m"})
                         + "\n")
        proc.stdin.flush()
        result = _messages(proc, "result")[-1]["result"]
        assert result["outcome"] == "passed", result["reason"]
    finally:
        proc.stdin.close()
        proc.kill()
        proc.wait()
