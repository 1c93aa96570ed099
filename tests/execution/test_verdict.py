"""The verdict, branch by branch: pure functions, no engine (run by `make mutate`)."""

from __future__ import annotations

import signal

from curator.execution import verdict
from curator.execution.verdict import Events, Verdict


def _events(tests=(), finish=True, collected=None, errors=(), setup_error=None):
    return Events(collected=[i for i, _ in tests] if collected is None else collected,
                  collect_errors=list(errors),
                  tests=[{"id": i, "outcome": o} for i, o in tests],
                  finish={"exitstatus": 0} if finish else None, setup_error=setup_error)


def _decide(events, expected=("t.py::a",), code=0, sig=None, timed_out=False, stderr=""):
    return verdict.decide(events, list(expected), exit_code=code, exit_signal=sig,
                          timed_out=timed_out, timeout_s=2.5, stderr_tail=stderr)


def test_expected_tests_reads_what_pytest_collects():
    text = (
        "import unittest\n"
        "async def test_async(): pass\n"
        "def helper(): pass\n"
        "class TestWithInit:\n    def __init__(self): pass\n    def test_x(self): pass\n"
        "class Check(unittest.TestCase):\n    async def test_y(self): pass\n"
        "    def helper(self): pass\n"
        "class MyTestCase(Base):\n    def test_v(self): pass\n"
        "class Other(TestCase):\n    def test_z(self): pass\n"
        "class Plain:\n    def test_w(self): pass\n")
    assert verdict.expected_tests(text, "x.py") == [
        "x.py::test_async", "x.py::Check::test_y", "x.py::Other::test_z"]
    assert verdict.expected_tests("class TestA:\n    def test_b(self): pass\n") == [
        "test_solution.py::TestA::test_b"]


def test_events_parse_every_kind():
    token = "tok"
    lines = [
        'tok {"event": "collected", "ids": ["a", "b"]}',
        'tok {"event": "collect_error", "id": "m.py", "message": "boom"}',
        'tok {"event": "test", "id": "a", "outcome": "passed"}',
        'tok {"event": "setup_error"}',
        'tok {"event": "finish", "exitstatus": 0}',
        'tok{"event": "test", "id": "glued", "outcome": "passed"}',
        'tok {"event": "unknown"}',
        'tok [1, 2',
    ]
    events = Events.parse("\n".join(lines).encode(), token)
    assert events.collected == ["a", "b"]
    assert events.collect_errors == [{"event": "collect_error", "id": "m.py", "message": "boom"}]
    assert [t["id"] for t in events.tests] == ["a"]
    assert events.setup_error == "unknown error"
    assert events.finish == {"event": "finish", "exitstatus": 0}
    empty = Events.parse(b'tok {"event": "collected"}\n', token)
    assert empty.collected == [] and empty.finish is None and empty.setup_error is None
    named = Events.parse(b'tok {"event": "setup_error", "message": "no room"}', token)
    assert named.setup_error == "no room"


def test_test_records_are_normalised():
    events = Events(collected=["a", "b"], finish={"exitstatus": 0}, tests=[
        {"id": "a", "outcome": "passed", "duration_s": "0.5"},
        {"id": "b", "outcome": "passed", "message": "note"}])
    result = _decide(events, ["a"])
    assert result == Verdict("passed", "", [
        {"id": "a", "outcome": "passed", "duration_s": 0.5},
        {"id": "b", "outcome": "passed", "duration_s": 0.0, "message": "note"}])
    odd = _decide(Events(tests=[{}], finish={"exitstatus": 0}), [])
    assert odd.tests == [{"id": "", "outcome": "error", "duration_s": 0.0}]
    assert odd.outcome == "failed"


def test_setup_errors_timeouts_and_cpu_limits():
    assert _decide(_events(setup_error="bad overlay")) == Verdict(
        "infra", "the run could not be set up: bad overlay", [])
    assert _decide(_events([("t.py::a", "passed")]), timed_out=True) == Verdict(
        "timeout", "wall-clock limit of 2.5 s exceeded",
        [{"id": "t.py::a", "outcome": "passed", "duration_s": 0.0}])
    cpu = _decide(_events(finish=False), sig=signal.SIGXCPU)
    assert (cpu.outcome, cpu.reason) == ("timeout", "CPU time limit exceeded")


def test_runs_that_did_not_finish():
    oom = _decide(_events(finish=False), sig=9, stderr="x\nMemoryError\n")
    assert (oom.outcome, oom.reason) == ("oom", "ran out of memory (address-space limit)")
    oom_in_test = _events([("t.py::a", "failed")], finish=False)
    oom_in_test.tests[0]["message"] = "std::bad_alloc"
    assert _decide(oom_in_test).outcome == "oom"
    killed = _decide(_events([("t.py::a", "passed")], finish=False), sig=9)
    assert killed.reason == "killed by SIGKILL before the tests finished"
    assert _decide(_events(finish=False), sig=999).reason == \
        "killed by signal 999 before the tests finished"
    never = _decide(Events(), code=127, stderr="\n  python: not found  \n\n")
    assert never == Verdict("crashed", "exited with status 127 before pytest started: "
                                       "python: not found", [])
    assert _decide(Events(), code=1).reason == "exited with status 1 before pytest started"
    # pytest's usage error: the line that says what is wrong, not the rootdir after it
    usage = _decide(Events(), code=4, stderr=(
        "ERROR: usage: pytest [options] [file_or_dir] [file_or_dir] [...]\n"
        "pytest: error: unrecognized arguments: --approvaltests-use-reporter=PythonNative\n"
        "  inifile: /tmp/run/repo/pytest.ini\n  rootdir: /tmp/run/repo\n"))
    assert usage.reason == ("exited with status 4 before pytest started: pytest: error: "
                            "unrecognized arguments: --approvaltests-use-reporter=PythonNative")
    long = _decide(Events(), code=1, stderr="e" * 400)
    assert long.reason.endswith(": " + "e" * 300)
    begun = _decide(_events(collected=["t.py::a"], finish=False), code=2, stderr="bye")
    assert begun.reason == "exited with status 2 before the tests finished: bye"
    errored = _decide(_events(finish=False, collected=[],
                              errors=[{"id": "t.py", "message": "x"}]), code=2)
    assert errored.reason == "exited with status 2 before the tests finished"
    tested = _decide(Events(tests=[{"id": "t.py::a", "outcome": "passed"}]), code=2)
    assert tested.reason == "exited with status 2 before the tests finished"


def test_collection_errors():
    error = _decide(_events(errors=[{"id": "t.py", "message": "SyntaxError: x"}]))
    assert (error.outcome, error.reason) == ("error", "t.py: SyntaxError: x")
    anonymous = _decide(_events(errors=[{}]))
    assert anonymous.reason == "collection: could not be collected"
    oom = _decide(_events(errors=[{"id": "t.py", "message": "m", "text": "MemoryError"}]))
    assert oom.outcome == "oom"
    assert _decide(_events()) == Verdict("error", "no tests ran", [])


def test_failures_and_tests_that_did_not_pass():
    failed = _events([("t.py::a", "passed"), ("t.py::b", "error")])
    failed.tests[1]["message"] = "ValueError: no"
    result = _decide(failed, ["t.py::a", "t.py::b"])
    assert (result.outcome, result.reason) == ("failed", "t.py::b error: ValueError: no")
    bare = _decide(_events([("t.py::a", "failed")]))
    assert bare.reason == "t.py::a failed:"
    skipped = _decide(_events([("t.py::a", "skipped"), ("t.py::b", "xfailed"),
                               ("t.py::c", "skipped")]))
    assert (skipped.outcome, skipped.reason) == (
        "failed", "no test passed (2 skipped, 1 xfailed)")
    some = _decide(_events([("t.py::a", "passed"), ("t.py::b", "skipped")]))
    assert some.outcome == "passed"


def test_missing_and_unreported_tests():
    missing = _decide(_events([("t.py::a", "passed")]), ["t.py::a", "t.py::b", "t.py::c"])
    assert missing.reason == "expected test t.py::b did not run"
    unreported = _decide(_events([("t.py::a", "passed")],
                                 collected=["t.py::a", "t.py::z", "t.py::y"]))
    assert unreported == Verdict("crashed", "collected test t.py::y never reported",
                                 unreported.tests)
    assert _decide(_events([("t.py::a", "passed")], collected=None)).outcome == "passed"
    loose = Events(tests=[{"id": "t.py::a", "outcome": "passed"}], finish={"exitstatus": 0})
    assert _decide(loose).outcome == "passed"


def test_how_the_process_ended_after_passing():
    passed = [("t.py::a", "passed")]
    assert _decide(_events(passed), code=3).reason == \
        "tests passed but the run ended with status 3"
    assert _decide(_events(passed), sig=signal.SIGTERM).reason == \
        "tests passed but the run ended with SIGTERM"
    events = _events(passed)
    events.finish = {"exitstatus": 5}
    assert _decide(events).outcome == "crashed"
    events.finish = {}
    assert _decide(events).outcome == "crashed"


def test_against_the_reference_baseline():
    tests = [{"id": "a", "outcome": "passed"}, {"id": "b", "outcome": "skipped",
                                                 "message": "later"}]
    passed = Verdict("passed", "", tests)
    assert verdict.baseline_of(tests) == {"a": "passed", "b": "skipped"}
    assert verdict.against_baseline(passed, None) is passed
    strict = verdict.against_baseline(passed, None, strict=True)
    assert strict.outcome == "failed" and strict.reason == (
        "b skipped (without a reference baseline every test must pass) later")
    only_passed = Verdict("passed", "", tests[:1])
    assert verdict.against_baseline(only_passed, None, strict=True) is only_passed
    assert verdict.against_baseline(passed, {"a": "passed", "b": "skipped"}) is passed
    held = verdict.against_baseline(passed, {"a": "passed", "b": "passed"})
    assert (held.outcome, held.reason) == ("failed", "b skipped (it passed on the reference) "
                                                     "later")
    gone = verdict.against_baseline(passed, {"a": "passed", "c": "passed", "d": "passed"})
    assert gone.reason == "c passed on the reference but did not run"
    failed = Verdict("failed", "x", tests)
    assert verdict.against_baseline(failed, {"z": "passed"}) is failed
    quiet = Verdict("passed", "", [{"id": "a", "outcome": "passed"},
                                   {"id": "b", "outcome": "failed"}])
    assert verdict.against_baseline(quiet, {"b": "passed"}).reason == \
        "b failed (it passed on the reference)"


def test_not_counted():
    tests = [{"id": "c", "outcome": "xpassed"}, {"id": "a", "outcome": "skipped"},
             {"id": "b", "outcome": "passed"}, {"id": "d", "outcome": "xfailed"}]
    assert verdict.not_counted(tests) == ["a", "c", "d"]
    assert verdict.not_counted(tests, {"e": "skipped", "b": "passed", "f": "xfailed"}) == [
        "a", "c", "d", "e", "f"]


def test_tampering_is_read_from_every_report_and_decided_first():
    data = b"\n".join([
        b"pytest's own output",
        b"tok [1, 2",
        b'tok {"event": "tampered", "evidence": ["patched pytest", "wrote conftest"]}',
        b'tok {"event": "test", "id": "t.py::\xff", "outcome": "passed"}',
        b'tok {"event": "tampered", "evidence": ["wrote conftest", 7]}',
        b'tok {"event": "tampered"}',
        b'tok {"event": "finish", "exitstatus": 0}'])
    events = Events.parse(data, "tok")
    assert events.tampered == ["patched pytest", "wrote conftest", "7"]
    assert [t["id"] for t in events.tests] == ["t.py::\ufffd"]   # bad bytes replaced
    assert _decide(events, ["t.py::\ufffd"]) == Verdict(
        "tampered", "the run tried to change how it is judged: patched pytest",
        [{"id": "t.py::\ufffd", "outcome": "passed", "duration_s": 0.0}],
        ["patched pytest", "wrote conftest", "7"])
    flood = _events([("t.py::a", "passed")])
    flood.tampered = [f"e{i}" for i in range(60)]
    result = _decide(flood)
    assert result.reason.endswith(": e0") and result.evidence == flood.tampered[:50]


def test_every_verdict_keeps_the_per_test_records():
    a = [("t.py::a", "passed")]
    memory = [{"id": "t.py", "message": "m", "text": "MemoryError: x"}]
    cases = {
        "cpu": (_decide(_events(a, finish=False), sig=signal.SIGXCPU), "timeout"),
        "oom": (_decide(_events(a, finish=False), code=1, stderr="MemoryError"), "oom"),
        "oom while collecting": (_decide(_events(a, finish=False, errors=memory), code=1),
                                 "oom"),
        "killed": (_decide(_events(a, finish=False), sig=9), "crashed"),
        "exited": (_decide(_events(a, finish=False), code=2), "crashed"),
        "collection": (_decide(_events(a, errors=[{"id": "t.py", "message": "x"}])), "error"),
        "missing": (_decide(_events(a), ["t.py::a", "t.py::b"]), "failed"),
        "unreported": (_decide(_events(a, collected=["t.py::a", "t.py::z"])), "crashed"),
        "status": (_decide(_events(a), code=3), "crashed"),
    }
    record = [{"id": "t.py::a", "outcome": "passed", "duration_s": 0.0}]
    for name, (result, outcome) in cases.items():
        assert (result.outcome, result.tests, result.evidence) == (outcome, record, []), name
    failed = _decide(_events([("t.py::a", "failed")]))
    assert failed.tests == [{"id": "t.py::a", "outcome": "failed", "duration_s": 0.0}]
    # no stderr given: the reason ends at the status
    assert verdict.decide(Events(), [], exit_code=1, exit_signal=None, timed_out=False,
                          timeout_s=None).reason == "exited with status 1 before pytest started"


def test_uncollected_upstream_ids_are_listed_not_counted():
    result = verdict.decide(_events([("t.py::a", "passed")]), ["t.py::a", "t.py::gone"],
                            exit_code=0, exit_signal=None, timed_out=False, timeout_s=None,
                            uncollected_ok=True)
    assert result == Verdict("passed", "", [
        {"id": "t.py::a", "outcome": "passed", "duration_s": 0.0},
        {"id": "t.py::gone", "outcome": "deselected", "duration_s": 0.0,
         "message": "not collected"}])


def test_a_verdict_failed_against_the_baseline_keeps_its_records():
    tests = [{"id": "a", "outcome": "passed"}, {"id": "b", "outcome": "skipped"}]
    passed = Verdict("passed", "", tests)
    assert verdict.against_baseline(passed, None, strict=True) == Verdict(
        "failed", "b skipped (without a reference baseline every test must pass)", tests, [])
    assert verdict.against_baseline(passed, {"a": "skipped", "b": "passed"}) == Verdict(
        "failed", "b skipped (it passed on the reference)", tests, [])
    assert verdict.against_baseline(passed, {"c": "passed"}) == Verdict(
        "failed", "c passed on the reference but did not run", tests, [])


def test_a_value_that_cannot_cross_either_way_is_the_boundarys_limit():
    """Triage reads both directions as this tool's limit (`boundary: ...`): a value of
    the solution's that the judge cannot decode, and a judge's value (a tf.function's
    symbolic tensor) the solution process cannot be given."""
    assert verdict.crossing_reason(f"a module (os) {verdict.CANNOT_CROSS}")
    assert verdict.crossing_reason(f"a symbolic tensor (x:0) {verdict.CANNOT_SEND}")
    assert not verdict.crossing_reason("tests/test_a.py::test_b failed: TypeError: cannot")
    assert not verdict.crossing_reason(None)
