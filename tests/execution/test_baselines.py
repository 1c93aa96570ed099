"""Verdicts faithful to pytest, and solutions held to the reference's per-test outcomes."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from repo_support import make_repo, mine_and_accept, run_json

from curator import runs
from curator.cli import main
from curator.execution import verdict
from curator.execution.engine import Engine
from curator.store import Store
from curator.store import problems as problem_store


def _verdict(*outcomes: tuple[str, str]) -> verdict.Verdict:
    return verdict.Verdict("passed", "", [{"id": i, "outcome": o, "duration_s": 0.0}
                                          for i, o in outcomes])


def _decide(*outcomes: tuple[str, str], exit_code: int = 0) -> verdict.Verdict:
    events = verdict.Events(collected=[i for i, _ in outcomes],
                            tests=[{"id": i, "outcome": o} for i, o in outcomes],
                            finish={"exitstatus": exit_code})
    return verdict.decide(events, [], exit_code=exit_code, exit_signal=None,
                          timed_out=False, timeout_s=10)


def test_reference_passes_with_skips_xfails_and_xpasses_but_not_with_none_passing():
    decided = _decide(("a", "passed"), ("b", "skipped"), ("c", "xfailed"), ("d", "xpassed"))
    assert decided.outcome == "passed"
    assert [t["outcome"] for t in decided.tests] == ["passed", "skipped", "xfailed", "xpassed"]
    assert _decide(("a", "skipped"), ("b", "xfailed")).outcome == "failed"
    assert "no test passed" in _decide(("a", "skipped")).reason
    assert _decide(("a", "passed"), ("b", "error"), exit_code=1).outcome == "failed"


BASELINE = {"a": "passed", "b": "skipped", "c": "xfailed", "d": "xpassed"}


@pytest.mark.parametrize("outcome_of_a", ["skipped", "xfailed", "error", "failed"])
def test_a_baseline_pass_that_does_not_pass_fails_the_solution(outcome_of_a):
    judged = verdict.against_baseline(_verdict(("a", outcome_of_a), ("b", "passed")),
                                      BASELINE)
    assert judged.outcome == "failed"
    assert judged.reason.startswith(f"a {outcome_of_a}")


def test_a_missing_baseline_test_fails_and_skips_on_the_reference_do_not_count():
    missing = verdict.against_baseline(_verdict(("b", "skipped"), ("z", "passed")), BASELINE)
    assert missing.outcome == "failed" and "did not run" in missing.reason
    ok = verdict.against_baseline(
        _verdict(("a", "passed"), ("b", "failed"), ("c", "passed"), ("d", "skipped")),
        BASELINE)
    assert ok.outcome == "passed"
    assert verdict.not_counted(ok.tests, BASELINE) == ["b", "c", "d"]


def test_without_a_baseline_a_sample_needs_every_test_to_pass():
    assert verdict.against_baseline(_verdict(("a", "passed"), ("b", "skipped")), None,
                                    strict=True).outcome == "failed"
    assert verdict.against_baseline(_verdict(("a", "passed"), ("b", "skipped")), None,
                                    strict=False).outcome == "passed"


CODE = '''def double(x):
    """Twice x."""
    return 2 * x
'''

TESTS = '''import pytest

from lib.code import double


def test_double():
    assert double(2) == 4


@pytest.mark.skip(reason="need --runslow option to run")
def test_slow():
    assert double(10**6) == 2 * 10**6


@pytest.mark.xfail(reason="documented upstream bug")
def test_known_bug():
    assert double("a") == 2


@pytest.mark.xfail(reason="fixed since")
def test_fixed_since():
    assert double(0) == 0


class TestMore:
    def test_negative(self):
        assert double(-1) == -2

    def test_needs_network(self):
        assert double(1) == 2
        raise OSError("no network here")
'''

SKIPPING = '''def double(x):
    import pytest

    if x == 2:
        pytest.skip("not today")
    return 2 * x
'''


@pytest.mark.slow
def test_repo_backed_baseline_with_skip_xfail_xpass_and_an_excluded_test(tmp_path):
    upstream = make_repo(tmp_path / "lib", {
        "conftest.py": "", "lib/__init__.py": "", "lib/code.py": CODE,
        "tests/test_code.py": TESTS})
    ws, base = mine_and_accept(
        tmp_path, upstream, "double", "double", isolation="weak",
        exclude=["tests/test_code.py::TestMore::test_needs_network"])
    with Store(ws.db_path, "tester") as store:
        (left_out,) = runs.excluded(store, "double")
    assert left_out["reason"] == "needs the network"
    code, report = run_json(base, "double")
    (run,) = report["runs"]
    assert (run["outcome"], code) == ("passed", 0), run["reason"]
    outcomes = {t["id"].split("::", 1)[1]: t["outcome"] for t in run["tests"]}
    assert outcomes == {"test_double": "passed", "test_slow": "skipped",
                        "test_known_bug": "xfailed", "test_fixed_since": "xpassed",
                        "TestMore::test_negative": "passed"}
    assert len(run["not_counted"]) == 3
    with Store(ws.db_path, "tester") as store:
        stored = runs.baseline_row(store, "double")
        assert stored["run_id"] == run["run_id"]
        assert {k.split("::", 1)[1]: v for k, v in stored["tests"].items()} == outcomes
        problem = problem_store.get(store, "double")
        jobs = [runs.job_for(store, ws, problem, text, "sample")
                for text in (CODE, SKIPPING, CODE.replace("2 * x", "x + x + (x == -1)"))]
    assert jobs[0].baseline == stored["tests"]
    with Engine(workers=1, isolation="weak", eager=False) as engine:
        results = {r.job_id: r for r in engine.run(jobs)}
    good, skipping, wrong = (results[j.job_id] for j in jobs)
    assert good.outcome == "passed", good.reason
    assert skipping.outcome == "failed"
    # pytest.skip raised by the candidate happens in the solution's process: across the
    # boundary it is the solution's exception, so the judge's test fails (never skips)
    assert "test_double failed" in skipping.reason and "Skipped" in skipping.reason
    assert wrong.outcome == "failed" and "test_negative" in wrong.reason


def test_an_excluded_test_the_problem_also_names_inside_a_module_it_runs_does_not_run(
        tmp_path):
    """A problem that runs a test module whole and also names one of its tests, which is
    excluded (stanza's parse_tokenized_sentences: the release's module and the tests that
    use the function, one of them in that module, needs_network): the module must not run
    the excluded test. It ran, failed the reference, and a triage that kept the exclusion
    crashed recording it again (UNIQUE constraint failed: excluded_tests)."""
    upstream = make_repo(tmp_path / "lib", {
        "conftest.py": "", "lib/__init__.py": "", "lib/code.py": CODE,
        "tests/test_code.py": TESTS})
    excluded = "tests/test_code.py::TestMore::test_needs_network"
    ws, base = mine_and_accept(tmp_path, upstream, "double", "double", isolation="weak",
                               exclude=[excluded])
    with Store(ws.db_path, "tester") as store:
        problem = problem_store.get(store, "double")
        problem.test_node_ids = ["tests/test_code.py", excluded]
        problem_store.save(store, problem)
    code, report = run_json(base, "double")
    (run,) = report["runs"]
    assert (run["outcome"], code) == ("passed", 0), run["reason"]
    outcomes = {t["id"]: t["outcome"] for t in run["tests"]}
    assert outcomes.get(excluded, "deselected") == "deselected", outcomes
    assert outcomes["tests/test_code.py::TestMore::test_negative"] == "passed"


def test_accept_refuses_an_exclusion_without_a_reason_or_outside_its_tests(tmp_path):
    upstream = make_repo(tmp_path / "lib", {
        "conftest.py": "", "lib/__init__.py": "", "lib/code.py": CODE,
        "tests/test_code.py": TESTS})
    ws, base = mine_and_accept(tmp_path, upstream, "double", "first")
    with Store(ws.db_path, "tester") as store:
        store.execute("UPDATE candidates SET status = 'new', problem_id = NULL")
        (cid,) = [r["id"] for r in store.query("SELECT id FROM candidates")]
    runner = CliRunner()
    out = runner.invoke(main, [*base, "candidates", "accept", str(cid), "--exclude",
                               "tests/test_code.py::test_slow"])
    assert out.exit_code == 2 and "--exclude-reason" in out.output
    out = runner.invoke(main, [*base, "candidates", "accept", str(cid), "--exclude",
                               "tests/other.py::test_x", "--exclude-reason", "x"])
    assert out.exit_code == 1 and "is not one of its tests" in out.output
