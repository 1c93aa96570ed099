"""Plain values of the repository's own modules that a test changes reach the function
under test in the solution process (`boundary.ModuleValues`).

pyro's test_sample sets `pyro.distributions.stable.RADIUS = 0.02` around `d.sample(...)`,
whose `_unsafe_standard_stable` (the target) read the solution process's own 0.01; a
test that turns a library's flag off through its function (`enable_validation(False)`)
is the same case. In-process the function sees what the test set, and so it does here.
"""

from __future__ import annotations

from execution_support import engine_fixture, repo_job, write_repo

engine = engine_fixture(("strong",))

FLAGS = '''VALIDATE = True
LABEL = "plain"
_READY = False
_TABLE = None


def table():
    """Made once, when first used (the judge's use must not make the solution's flag
    say it was made)."""
    global _READY, _TABLE
    if not _READY:
        _TABLE = [10, 20]
        _READY = True
    return _TABLE


def enable_validation(on):
    global VALIDATE
    VALIDATE = bool(on)
'''
OPS = '''from pkg import flags

RADIUS = 0.01


def scaled(x):
    if flags.VALIDATE and x < 0:
        raise ValueError("negative")
    return (x * RADIUS * (flags.table()[0] // 10), flags.LABEL)
'''
TESTS = '''import pytest

import pkg.ops
from pkg import flags
from pkg.ops import scaled


def test_a_private_flag_of_the_librarys_bookkeeping_is_not_sent():
    # first: the table is made in the judge, not yet in the solution process
    assert flags.table() == [10, 20]
    assert scaled(2.0) == (0.02, "plain")


def test_as_imported():
    assert scaled(2.0) == (0.02, "plain")
    with pytest.raises(ValueError):
        scaled(-1.0)


def test_a_value_the_test_sets_and_puts_back():
    old = pkg.ops.RADIUS
    pkg.ops.RADIUS = 0.5
    try:
        assert scaled(2.0) == (1.0, "plain")
    finally:
        pkg.ops.RADIUS = old
    assert scaled(2.0) == (0.02, "plain")


def test_a_flag_of_another_module_set_by_its_function():
    flags.enable_validation(False)
    flags.LABEL = "changed"
    try:
        assert scaled(-1.0) == (-0.01, "changed")
    finally:
        flags.enable_validation(True)
        flags.LABEL = "plain"
    with pytest.raises(ValueError):
        scaled(-1.0)


def test_a_name_the_test_adds_is_not_sent():
    pkg.ops.EXTRA = 3
    try:
        assert scaled(1.0) == (0.01, "plain")
    finally:
        del pkg.ops.EXTRA
'''
RIGHT = OPS
# reads the solution's module values, as the right one does; ignores the flag
WRONG = OPS.replace("if flags.VALIDATE and x < 0", "if False")


def module_repo(root, conftest: bool):
    files = {"pkg/__init__.py": "", "pkg/flags.py": FLAGS, "pkg/ops.py": OPS,
             "tests/test_ops.py": TESTS}
    if conftest:   # the worker preloads what conftests import: pkg.flags before the judge
        files["tests/conftest.py"] = "import pkg.flags  # noqa: F401\n"
    return write_repo(root, files)


def test_values_a_test_changes_reach_the_function(engine, tmp_path):
    for conftest in (False, True):
        repo = module_repo(tmp_path / f"repo{int(conftest)}", conftest)
        jobs = [repo_job(repo, "pkg/ops.py", text, "tests/test_ops.py", "scaled", reference)
                for text, reference in ((RIGHT, True), (WRONG, False))]
        results = {r.job_id: r for r in engine.run(jobs)}
        right, wrong = (results[j.job_id] for j in jobs)
        assert right.outcome == "passed", (conftest, right.reason, right.stdout[-3000:])
        assert len(right.tests) == 5
        outcomes = {t["id"].rpartition("::")[2]: t["outcome"] for t in wrong.tests}
        assert outcomes == {"test_as_imported": "failed",
                            "test_a_value_the_test_sets_and_puts_back": "passed",
                            "test_a_flag_of_another_module_set_by_its_function": "failed",
                            "test_a_private_flag_of_the_librarys_bookkeeping_is_not_sent":
                                "passed",
                            "test_a_name_the_test_adds_is_not_sent": "passed"}, wrong.stdout
