"""The execution engine: verdicts, warm runs, repo-backed runs, the runs table, the CLI."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
import textwrap

import pytest
from click.testing import CliRunner
from execution_support import ADD_TESTS, GOOD_SOLUTION, needs_bwrap, run_one, shared_engine

from curator import runs
from curator.cli import main
from curator.errors import CuratorError
from curator.execution import verdict
from curator.execution.engine import Engine
from curator.execution.job import Job, Limits, RunResult
from curator.execution.pool import Pool
from curator.store import problems as problem_store


@pytest.fixture(scope="module", params=[pytest.param("strong", marks=needs_bwrap), "weak"])
def engine(request):
    return shared_engine(request.param, workers=1)


# -- verdicts (pure) ------------------------------------------------------------------------


def test_expected_tests_from_the_syntax_tree():
    text = textwrap.dedent("""\
        import unittest
        def test_a(): pass
        async def test_b(): pass
        def helper(): pass
        class TestGroup:
            def test_c(self): pass
            def helper(self): pass
        class TestWithInit:
            def __init__(self): pass
            def test_never(self): pass
        class Legacy(unittest.TestCase):
            def test_d(self): pass
        """)
    assert verdict.expected_tests(text) == [
        "test_solution.py::test_a", "test_solution.py::test_b",
        "test_solution.py::TestGroup::test_c", "test_solution.py::Legacy::test_d"]
    assert verdict.expected_tests("def broken(:") == []


def _events(tests, finish=True, collected=None, errors=()):
    events = verdict.Events(tests=[{"id": i, "outcome": o} for i, o in tests],
                            collect_errors=list(errors))
    events.collected = collected if collected is not None else [i for i, _ in tests]
    events.finish = {"exitstatus": 0} if finish else None
    return events


def _decide(events, expected=("t.py::a",), code=0, sig=None, timed_out=False):
    return verdict.decide(events, list(expected), exit_code=code, exit_signal=sig,
                          timed_out=timed_out, timeout_s=5)


def test_verdict_needs_positive_evidence():
    assert _decide(_events([("t.py::a", "passed")])).outcome == "passed"
    assert _decide(_events([("t.py::a[1]", "passed"), ("t.py::a[2]", "passed")])) \
        .outcome == "passed"
    # No finish record: the process ended early, whatever it printed.
    assert _decide(_events([("t.py::a", "passed")], finish=False)).outcome == "crashed"
    assert _decide(_events([("t.py::a", "passed")], finish=False), sig=9).reason \
        .startswith("killed by SIGKILL")
    # An expected test that never ran, a skip, an xfail, no tests at all.
    assert _decide(_events([("t.py::b", "passed")])).outcome == "failed"
    assert _decide(_events([("t.py::a", "skipped")])).outcome == "failed"
    assert _decide(_events([("t.py::a", "xfailed")])).outcome == "failed"
    assert _decide(_events([])).outcome == "error"
    # Collected but never reported, or a non-zero exit after passing.
    assert _decide(_events([("t.py::a", "passed")], collected=["t.py::a", "t.py::z"])) \
        .outcome == "crashed"
    assert _decide(_events([("t.py::a", "passed")]), code=3).outcome == "crashed"


def test_verdict_classifies_failures():
    assert _decide(_events([]), timed_out=True).outcome == "timeout"
    assert _decide(_events([], finish=False), sig=24).outcome == "timeout"  # SIGXCPU
    failed = _events([("t.py::a", "failed")])
    failed.tests[0]["message"] = "AssertionError: assert 1 == 2"
    result = _decide(failed)
    assert result.outcome == "failed" and "t.py::a failed: AssertionError" in result.reason
    oom = _events([("t.py::a", "failed")])
    oom.tests[0]["message"] = "MemoryError"
    assert _decide(oom).outcome == "oom"
    setup = _events([], finish=False)
    setup.setup_error = "ValueError: overlay path escapes"
    assert _decide(setup).outcome == "infra"
    error = _events([], errors=[{"id": "t.py", "message": "SyntaxError: bad", "text": ""}])
    assert _decide(error).outcome == "error" and "SyntaxError" in _decide(error).reason


def test_events_ignore_lines_without_the_token():
    token = "abc123"
    data = (b'abc123 {"event": "test", "id": "x", "outcome": "passed"}\n'
            b'forged {"event": "test", "id": "y", "outcome": "passed"}\n'
            b'{"event": "finish", "exitstatus": 0}\nabc123 not json\n')
    events = verdict.Events.parse(data, token)
    assert [t["id"] for t in events.tests] == ["x"] and events.finish is None


def test_job_round_trips_through_json():
    job = Job(problem_id="p", solution="x = 1", tests="def test(): pass",
              overlay={"a.py": "b"}, node_ids=["t.py::a"], limits=Limits(timeout_s=3))
    again = Job.from_dict(json.loads(json.dumps(job.to_dict())))
    assert again == job and again.limits.timeout_s == 3


# -- warm runs ----------------------------------------------------------------------------


def test_good_and_wrong_solutions(engine):
    good = run_one(engine, GOOD_SOLUTION)
    assert good.outcome == "passed", (good.reason, good.stdout, good.stderr)
    assert [t["id"] for t in good.tests] == ["test_solution.py::test_small",
                                             "test_solution.py::test_negative"]
    assert good.env["isolation"] == engine.isolation and good.env["python"]
    assert good.env["torch"]
    wrong = run_one(engine, "def add(a, b):\n    return a - b\n")
    assert wrong.outcome == "failed"
    assert wrong.reason.startswith("test_solution.py::test_small failed")


# A limit that grows with the tests a run collects (a reference never timed, whose node id
# names a file of many tests: pyro's tests/infer/test_inference.py timed out after 19 of
# its 68 tests in the fixed first limit, and so did its triage), never beyond its cap.
SLOW_TESTS = "import time\n\nfrom solution import add\n\n" + "".join(
    f"\ndef test_{n}():\n    time.sleep(1.2)\n    assert add(1, 2) == 3\n\n" for n in range(4))


def test_a_limit_per_test_grows_with_the_tests_collected_up_to_its_cap(engine):
    grown = run_one(engine, GOOD_SOLUTION, SLOW_TESTS, timeout=3.0, per_test_s=2.0,
                    max_timeout_s=12.0)
    assert grown.outcome == "passed", (grown.reason, grown.stdout[-2000:])
    assert grown.timeout_s == 8.0   # 4 tests of 2 s each
    capped = run_one(engine, GOOD_SOLUTION, SLOW_TESTS, timeout=3.0, per_test_s=2.0,
                     max_timeout_s=3.5)
    assert capped.outcome == "timeout", (capped.outcome, capped.reason)
    assert capped.reason == "wall-clock limit of 3.5 s exceeded", capped.reason
    fixed = run_one(engine, GOOD_SOLUTION, SLOW_TESTS, timeout=3.0)
    assert fixed.outcome == "timeout" and fixed.timeout_s == 3.0, fixed.reason


def test_empty_solution_is_no_code(engine):
    result = run_one(engine, "  \n")
    assert result.outcome == "no_code"


def test_runs_may_write_a_file_as_large_as_a_compilers_output(engine):
    """torch.compile writes a precompiled header of ~160 MB to its temp dir; a default
    file size limit below that failed every kornia `test_dynamo[...inductor]`."""
    result = run_one(engine, """\
        import os
        import tempfile

        def add(a, b):
            with open(os.path.join(tempfile.mkdtemp(), "header.gch"), "wb") as fh:
                fh.seek(200 << 20)   # sparse: the size counts, not the pages
                fh.write(b"\\0")
            return a + b
        """)
    assert result.outcome == "passed", (result.reason, result.stdout)


NATIVE_ADD = r"""
#include <Python.h>

static PyObject *add(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a + b);
}
static PyMethodDef methods[] = {{"add", add, METH_VARARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "native_add", NULL, -1, methods};
PyMODINIT_FUNC PyInit_native_add(void) { return PyModule_Create(&module); }
"""


@pytest.mark.skipif(not shutil.which("cc"), reason="no C compiler on this host")
def test_runs_can_build_and_import_a_c_extension(engine):
    """What torch.compile and C extensions do at run time: the host's compiler, the
    interpreter's Python.h, a temp dir to build in, then an import of what was built."""
    result = run_one(engine, f"""\
        import importlib
        import os
        import subprocess
        import sys
        import sysconfig
        import tempfile

        def add(a, b):
            folder = tempfile.mkdtemp()
            with open(os.path.join(folder, "native_add.c"), "w") as fh:
                fh.write({NATIVE_ADD!r})
            target = "native_add" + sysconfig.get_config_var("EXT_SUFFIX")
            subprocess.run(["cc", "-shared", "-fPIC", "-I", sysconfig.get_paths()["include"],
                            "-o", target, "native_add.c"], cwd=folder, check=True)
            sys.path.insert(0, folder)
            return importlib.import_module("native_add").add(a, b)
        """)
    assert result.outcome == "passed", (result.reason, result.stdout)


def test_pickling_a_tensor_is_not_tampering(engine):
    """Pickling a tensor (torch.save, inductor's cache keys) makes copyreg cache
    `__slotnames__` on torch.Tensor: a library's own cache, not a change to how tests judge."""
    result = run_one(engine, """\
        import io

        import torch

        def add(a, b):
            torch.save(torch.ones(2), io.BytesIO())
            return a + b
        """)
    assert result.outcome == "passed", (result.reason, result.stdout)


def test_runs_are_deterministic_and_isolated_from_each_other(engine):
    probe = textwrap.dedent("""\
        import os, time
        # its own folder: the only one it can write (tests/adversarial/test_solution_writes.py)
        LEFT = os.path.join(os.environ["TMPDIR"], "left-by-an-earlier-run.txt")
        SEEN = os.path.exists(LEFT)
        open(LEFT, "w").close()

        def add(a, b):
            assert os.environ["PYTHONHASHSEED"] == "0"
            assert os.environ["TZ"] == "UTC" and time.strftime("%Z") == "UTC"
            assert os.environ["OMP_NUM_THREADS"] == "1"
            assert not SEEN
            return a + b
        """)
    for _ in range(2):  # the worker wipes its temp folder between runs
        result = run_one(engine, probe)
        assert result.outcome == "passed", (result.reason, result.stdout)


def test_a_warm_worker_judges_each_run_by_that_runs_own_tests(engine):
    """The worker compiles a test file once and its judges reuse it: a problem whose
    tests changed between two runs (same problem id, same worker) is judged by the new
    ones, and the rewritten asserts still explain a failure."""
    first = run_one(engine, GOOD_SOLUTION)
    assert first.outcome == "passed", (first.reason, first.stderr)
    stricter = ADD_TESTS + "\n\ndef test_zero():\n    assert add(0, 0) == 1\n"
    second = run_one(engine, GOOD_SOLUTION, tests=stricter)
    assert second.outcome == "failed", (second.reason, second.stderr)
    assert second.reason.startswith("test_solution.py::test_zero failed")
    assert "assert 0 == 1" in second.stdout + second.reason
    again = run_one(engine, GOOD_SOLUTION, tests=stricter)
    assert again.outcome == "failed"
    assert [(t["id"], t["outcome"]) for t in again.tests] == \
        [(t["id"], t["outcome"]) for t in second.tests]
    assert run_one(engine, GOOD_SOLUTION).outcome == "passed"


def test_compiled_tests_are_made_once_per_source_and_path(tmp_path, monkeypatch):
    from curator.execution import harness

    monkeypatch.setattr(harness, "_COMPILED", {})
    monkeypatch.setattr(harness, "_COMPILED_MAX", 3)
    path = tmp_path / "test_solution.py"
    code = harness.compiled_tests("def test_a():\n    assert 1 == 2\n", path)
    assert harness.compiled_tests("def test_a():\n    assert 1 == 2\n", path) is code
    assert harness.compiled_tests("def test_a():\n    assert 1 == 2\n",
                                  tmp_path / "other.py") is not code
    namespace: dict = {}
    exec(code, namespace)
    with pytest.raises(AssertionError, match="assert 1 == 2"):   # rewritten as pytest does
        namespace["test_a"]()
    for bad in ("def broken(:\n", "x = '\udcff'\n"):
        for _ in range(2):   # never cached: each judge meets the error itself
            with pytest.raises((SyntaxError, UnicodeEncodeError)):
                harness.compiled_tests(bad, path)
    for n in range(5):
        harness.compiled_tests(f"X = {n}\n", path)
    assert len(harness._COMPILED) <= 3


def _make_repo(root):
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "ops.py").write_text("def double(x):\n    raise NotImplementedError\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_ops.py").write_text(textwrap.dedent("""\
        import pytest
        from pkg.ops import double

        @pytest.mark.parametrize("x", [1, 2, 3])
        def test_double(x):
            assert double(x) == 2 * x

        def test_zero():
            assert double(0) == 0

        def test_unselected():
            assert False, "not one of the problem's node ids"
        """))
    return root


def _repo_job(repo, body, node_ids=("tests/test_ops.py::test_double",
                                    "tests/test_ops.py::test_zero")):
    return Job(problem_id="repo", solution=body, repo_dir=str(repo),
               overlay={"pkg/ops.py": body}, node_ids=list(node_ids),
               python=sys.executable, limits=Limits(timeout_s=60))


def test_repo_backed_runs_use_a_copy_with_the_overlay(engine, tmp_path):
    repo = _make_repo(tmp_path / "repo")
    good = "def double(x):\n    return 2 * x\n"
    jobs = [_repo_job(repo, good),
            _repo_job(repo, "def double(x):\n    return x + x + 1\n",
                      node_ids=["tests/test_ops.py::test_double", "tests/test_ops.py::gone"])]
    results = {r.job_id: r for r in engine.run(jobs)}
    passed, failed = (results[j.job_id] for j in jobs)
    assert passed.outcome == "passed", (passed.reason, passed.stdout, passed.stderr)
    assert {t["id"] for t in passed.tests} == {
        "tests/test_ops.py::test_double[1]", "tests/test_ops.py::test_double[2]",
        "tests/test_ops.py::test_double[3]", "tests/test_ops.py::test_zero"}
    assert passed.env["python"] and passed.env["isolation"] == engine.isolation
    assert failed.outcome in ("failed", "error") and failed.reason
    # The checkout itself is never modified.
    assert "NotImplementedError" in (repo / "pkg" / "ops.py").read_text()


def test_overlay_escaping_the_repo_is_an_infra_failure(engine, tmp_path):
    repo = _make_repo(tmp_path / "repo")
    job = _repo_job(repo, "def double(x):\n    return 2 * x\n")
    job.overlay = {"../escaped.py": "x = 1\n"}
    result = run_one_job(engine, job)
    assert result.outcome == "infra" and "escapes" in result.reason
    assert not (tmp_path / "escaped.py").exists()


def run_one_job(engine, job):
    (result,) = engine.run([job])
    return result


# -- the runs table and job_for -----------------------------------------------------------


def _result(problem_id, outcome="passed", duration=0.5):
    return RunResult(job_id="j-" + outcome, problem_id=problem_id, outcome=outcome,
                     tests=[{"id": "t::a", "outcome": outcome, "duration_s": 0.1}],
                     duration_s=duration, stdout="out", stderr="", reason="",
                     env={"python": "3.11", "torch": None, "isolation": "weak"}, timeout_s=9)


def test_record_latest_and_history(store):
    pid = problem_store.all_problems(store)[0].id
    first = runs.record(store, _result(pid, "failed"), "reference", "h1")
    second = runs.record(store, _result(pid, "passed"), "reference", "h2")
    runs.record(store, _result(pid, "error"), "sample", "h3", sample_id=7)
    latest = runs.latest(store)
    assert latest[pid]["id"] == second and latest[pid]["outcome"] == "passed"
    assert latest[pid]["tests"][0]["id"] == "t::a" and latest[pid]["env"]["isolation"] == "weak"
    assert runs.latest(store, "sample")[pid]["sample_id"] == 7
    assert [r["id"] for r in runs.history(store, pid)][1:] == [second, first]
    audit = store.history("run", str(first))
    assert audit[0]["action"] == "create" and audit[0]["actor"] == "tester"
    with pytest.raises(CuratorError):
        runs.record(store, _result(pid), "oracle", "h")


def test_timeout_scales_with_the_reference_time(store, workspace):
    problem = problem_store.all_problems(store)[0]
    first = runs.default_limits(store, workspace, problem)
    assert first.timeout_s == runs.DEFAULT_TIMEOUT_S
    # the first limit grows with the tests the run collects, up to its cap
    assert first.wall_limit(None) == first.wall_limit(3) == runs.FIRST_TIMEOUT_S
    assert first.wall_limit(68) == 68 * runs.FIRST_PER_TEST_S
    assert first.wall_limit(10_000) == first.longest() == runs.FIRST_MAX_TIMEOUT_S
    runs.record(store, _result(problem.id, duration=0.2), "reference", "h")
    measured = runs.default_limits(store, workspace, problem)
    assert measured.timeout_s == measured.wall_limit(10_000) == runs.TIMEOUT_FLOOR_S
    runs.record(store, _result(problem.id, duration=3.0), "reference", "h")
    assert runs.default_limits(store, workspace, problem).timeout_s == 30.0
    assert runs.default_limits(store, workspace, problem, timeout=4).timeout_s == 4


def test_job_for_self_contained_and_repo_backed(store, workspace, monkeypatch):
    problem = problem_store.all_problems(store)[0]
    job = runs.job_for(store, workspace, problem, problem.solution)
    assert job.tests == problem.tests and job.repo_dir is None and job.problem_id == problem.id
    problem.test_node_ids = ["tests/test_x.py::test_y"]
    monkeypatch.setattr(runs.checkout, "prepare", lambda *a, **k: (
        "/repo", {"pkg/mod.py": "x = 1\n"}, "/usr/bin/python3"))
    job = runs.job_for(store, workspace, problem, problem.solution)
    assert (job.repo_dir, job.overlay, job.python) == (
        "/repo", {"pkg/mod.py": "x = 1\n"}, "/usr/bin/python3")
    assert job.node_ids == ["tests/test_x.py::test_y"] and job.tests is None

    def missing(*a, **k):
        raise runs.checkout.MissingSymbol("no such symbol")

    monkeypatch.setattr(runs.checkout, "prepare", missing)
    assert runs.job_for(store, workspace, problem, problem.solution).solution == ""


class ScriptedPool(Pool):
    """A backend that answers from a script: shows the Pool interface is all it takes."""

    def __init__(self, outcomes):
        self.outcomes = list(outcomes)

    def start(self):
        pass

    def run(self, jobs, cancelled=None):
        for job in jobs:
            yield RunResult(job.job_id, job.problem_id, self.outcomes.pop(0), duration_s=0.1,
                            env={"isolation": "weak"}, timeout_s=job.limits.timeout_s)

    def close(self):
        pass

    def info(self):
        return {"backend": "scripted", "workers": 1, "isolation": "weak", "reason": ""}


def test_repeat_flags_flaky_problems(store, workspace):
    ids = [p.id for p in problem_store.all_problems(store)[:2]]
    engine = Engine(pool=ScriptedPool(["passed", "passed", "passed", "failed"]))
    report = runs.run_problems(store, workspace, ids, repeat=2, engine=engine)
    assert report.flaky == [ids[1]]
    assert not report.all_passed and len(report.runs) == 4
    assert report.summary()["outcomes"] == {"failed": 1, "passed": 3}
    assert len(runs.history(store, ids[1])) == 2


# -- the CLI --------------------------------------------------------------------------------


def _cli(ws, *args):
    return CliRunner().invoke(main, ["--workspace", str(ws.root), *args])


def test_cli_usage_errors(workspace):
    assert _cli(workspace, "run").exit_code == 2
    assert _cli(workspace, "run", "--all", "normalize_image_batch").exit_code == 2
    assert _cli(workspace, "run", "no_such_problem").exit_code == 2
    assert _cli(workspace, "run", "--all", "--workers", "0").exit_code == 2


def test_cli_run_all_seed_problems_pass(workspace, store):
    """Every seed reference passes; one deliberately broken extra problem makes it exit 1."""
    seeds = {p.id for p in problem_store.all_problems(store)}
    broken = dataclasses.replace(problem_store.get(store, min(seeds)), id="zz_broken",
                                 solution="def nothing_useful():\n    pass\n")
    problem_store.save(store, broken)
    result = _cli(workspace, "run", "--all", "--json", "--workers", "2", "--timeout", "60")
    data = json.loads(result.output)
    outcomes = {r["problem_id"]: r["outcome"] for r in data["runs"]}
    assert {pid: o for pid, o in outcomes.items() if pid != "zz_broken" and o != "passed"} \
        == {}, [(r["problem_id"], r["reason"]) for r in data["runs"]]
    assert outcomes["zz_broken"] == "error" and set(outcomes) == seeds | {"zz_broken"}
    assert result.exit_code == 1
    for run in data["runs"]:
        assert {"problem_id", "outcome", "duration_s", "tests"} <= set(run)
        assert run["tests"] or run["problem_id"] == "zz_broken"
        assert all(set(t) == {"id", "outcome"} for t in run["tests"])
    assert data["summary"]["passed"] == len(seeds) and data["summary"]["flaky"] == []
    latest = runs.latest(store)
    assert set(latest) == seeds | {"zz_broken"} and latest["zz_broken"]["timeout_s"] == 60


def test_without_bubblewrap_isolation_is_weak_and_doctor_says_why(monkeypatch):
    from curator.execution import doctor, sandbox

    missing = f"bubblewrap (bwrap) is not installed: {sandbox.INSTALL_HINT}"
    monkeypatch.setattr(sandbox, "probe", lambda: (False, missing))
    assert sandbox.resolve_isolation("auto") == ("weak", missing)
    with pytest.raises(CuratorError, match="strong isolation requested"):
        sandbox.resolve_isolation("strong")
    report = doctor.report()
    assert report["isolation"] == "weak"
    assert any("apt-get install bubblewrap" in m for m in report["missing"])


def test_cli_doctor(workspace):
    result = _cli(workspace, "doctor", "--json")
    assert result.exit_code == 0
    report = json.loads(result.output)
    assert report["isolation"] in ("strong", "weak")
    assert {c["check"] for c in report["checks"]} >= {"bubblewrap", "rlimits"}
    # this kernel lets the solution process make everything but its folder read-only
    assert report["protections"]["solution writes its own folder only"] is True
    # and a call's writes to the judge's folders reach its layers (saves that tests read)
    assert report["protections"]["a call's files come back to the judge"] is True
    if report["isolation"] == "weak":
        assert any("bubblewrap" in m for m in report["missing"])


@pytest.mark.parametrize("level", ["strong", "weak"])
def test_call_layers_are_probed_where_runs_happen(level):
    """The probe sets a solution process up as a run's (confined, dropped to the run's
    uid, the read grant where runs need it) and writes through an overlay; a level this
    machine cannot give fails it rather than skipping."""
    from curator.execution import sandbox

    sandbox.call_layers_work.cache_clear()
    assert sandbox.call_layers_work(level) is True


# -- pytest configured once per worker ----------------------------------------------------

HOLDS_NO_PYTEST_CONFIG = """\
import sys

def _pytest_configs():
    found, frame = [], sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            config = getattr(value, "_config", None)
            if type(config).__module__ == "_pytest.config":
                found.append(config)
        frame = frame.f_back
    return found

HELD = _pytest_configs()

def add(a, b):
    return a + b if not HELD else 0
"""


def test_the_solution_process_holds_no_pytest_configuration(engine):
    """The zygote is forked before the worker parses and configures pytest: a solution
    process finds no Config (its options, plugins, the judge's hooks) in its memory."""
    result = run_one(engine, HOLDS_NO_PYTEST_CONFIG)
    assert result.outcome == "passed", (result.reason, result.stderr[-2000:])


LOGGING_TESTS = """\
import logging

from solution import add


def test_a_log_record_lands_in_no_file_of_the_test(tmp_path):
    path = tmp_path / "data.txt"
    with open(path, "w") as fh:
        logging.getLogger("judge").warning("a record of the test")
        logging.getLogger("judge").error("another record of the test")
        fh.write("data")
    assert path.read_text() == "data"
    assert add(1, 2) == 3
"""


def test_pytest_configured_in_the_worker_logs_into_no_file_of_a_run(engine):
    """pytest's logging plugin opens its log file (/dev/null) when the worker configures
    it; the judge keeps that descriptor, so a record never goes to a file the test opened
    under the same number."""
    for _ in range(2):   # the second run's judge is forked from the same configuration
        result = run_one(engine, GOOD_SOLUTION, LOGGING_TESTS)
        assert result.outcome == "passed", (result.reason, result.stderr[-2000:])
