"""A repository's pytest addopts that ask for xdist's workers (avalanche: `-n 4`).

Without pytest-xdist in the environment pytest stops before it starts ("unrecognized
arguments: -n"), and a run is one process anyway: the harness drops xdist's options
before pytest parses them. (`-p no:xdist` stands in for an environment without xdist:
the curator's own has it.)
"""

from __future__ import annotations

import pytest
from repo_support import make_repo, mine_and_accept, run_json

OPS = "def scale(x):\n    return 3 * x\n"
TESTS = ("from pkg.ops import scale\n\n\ndef test_scale():\n    assert scale(2) == 6\n\n\n"
         "def test_scale_zero():\n    assert scale(0) == 0\n")


@pytest.mark.timeout(600)
def test_addopts_that_ask_for_xdist_workers_do_not_stop_a_run(tmp_path):
    upstream = make_repo(tmp_path / "contin", {
        "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p no:xdist -n 4 '
                          '--dist=load"\n',
        "pkg/__init__.py": "", "pkg/ops.py": OPS, "tests/test_ops.py": TESTS})
    ws, base = mine_and_accept(tmp_path, upstream, "scale", "scale", isolation="weak")
    code, report = run_json(base, "scale")
    (result,) = report["runs"]
    assert result["outcome"] == "passed", result["reason"]
    assert sorted(t["id"] for t in result["tests"]) == [
        "tests/test_ops.py::test_scale", "tests/test_ops.py::test_scale_zero"]
    assert code == 0
