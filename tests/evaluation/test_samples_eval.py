"""Evaluating samples through the real execution engine: outcomes, resuming, the CLI flow."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from execution_support import plain_workers_at_close
from samples_support import ADD_SOLUTION, COUNTER_SOLUTION, make_problems, record_run, write_jsonl

from curator.cli import main
from curator.evaluation import evaluate
from curator.execution.engine import Engine
from curator.runs import run_problems
from curator.store import Store

ROWS = [
    {"task_id": "add_one", "solution": ADD_SOLUTION},                                # passed
    {"task_id": "add_one", "solution": "def add_one(x):\n    return x + 2\n"},       # failed
    {"task_id": "add_one", "response": "I do not know."},                            # no_code
    {"task_id": "add_one", "completion": "    return x - -1\n"},                     # passed
    {"task_id": "counter_bump", "response": f"```python\n{COUNTER_SOLUTION}```"},    # passed
    {"task_id": "double_it", "solution": "import no_such_module_42\n"},              # error
]


@pytest.fixture(scope="module")
def engine():
    with Engine(workers=2) as shared:
        yield shared


@pytest.fixture
def setup(empty_workspace, tmp_path):
    store = Store(empty_workspace.db_path, "tester")
    make_problems(store)
    path = write_jsonl(tmp_path / "samples.jsonl", ROWS)
    yield empty_workspace, store, path
    store.close()


def test_evaluate_records_outcomes_and_resumes(setup, engine):
    ws, store, path = setup
    from curator.evaluation import samples as sample_files

    ids = sample_files.import_files(store, [path], model="m1").sample_ids
    # A harness failure earlier does not count as an outcome: that sample runs again.
    record_run(store, "add_one", "infra", ids[0])
    calls = []

    def cancel_after_first() -> bool:
        return len(store.query("SELECT id FROM runs WHERE sample_id IS NOT NULL "
                               "AND outcome != 'infra'")) >= 1 \
            and bool(calls.append(1) or True)

    first = evaluate.evaluate(store, ws, engine=engine, cancelled=cancel_after_first)
    assert first.cancelled
    # no reference had run: evaluation ran them first, so the report can score
    assert sorted(r["problem_id"] for r in first.references) == [
        "add_one", "counter_bump", "double_it"]
    assert {r["outcome"] for r in first.references} == {"passed"}
    done_first = first.evaluated
    assert 1 <= done_first < len(ROWS)

    second = evaluate.evaluate(store, ws, engine=engine)
    assert second.references == []   # they have current runs now
    assert second.skipped == done_first
    assert second.evaluated == len(ROWS) - done_first and not second.cancelled

    outcomes = {r["sample_id"]: r["outcome"] for r in store.query(
        "SELECT sample_id, outcome FROM runs WHERE sample_id IS NOT NULL AND outcome != 'infra'")}
    assert [outcomes[i] for i in ids] == ["passed", "failed", "no_code", "passed", "passed",
                                          "error"]
    run = store.one("SELECT * FROM runs WHERE sample_id = ? AND outcome = 'failed'", (ids[1],))
    assert run["solution_kind"] == "sample" and run["problem_id"] == "add_one"
    assert "test_small" in run["tests"]
    third = evaluate.evaluate(store, ws, engine=engine)
    assert third.evaluated == 0 and third.skipped == len(ROWS)
    assert store.one("SELECT COUNT(*) AS n FROM runs WHERE sample_id IS NOT NULL "
                     "AND outcome != 'infra'")["n"] == len(ROWS)


def test_model_filter_and_limit(setup, engine):
    ws, store, path = setup
    from curator.evaluation import samples as sample_files

    sample_files.import_files(store, [path], model="m1")
    sample_files.import_files(store, [path], model="m2")
    report = evaluate.evaluate(store, ws, model="m2", limit=2, engine=engine)
    assert report.evaluated == 2
    models = [r["model"] for r in store.query(
        "SELECT s.model FROM runs r JOIN samples s ON s.id = r.sample_id")]
    assert models == ["m2", "m2"]
    assert len(evaluate.pending(store, "m1")) == len(ROWS)


def test_cli_flow_import_eval_report_review(setup, engine):
    ws, store, path = setup
    run_problems(store, ws, engine=engine)  # references pass on this machine
    runner = CliRunner()
    base = ["--workspace", str(ws.root)]
    out = runner.invoke(main, base + ["samples", "import", str(path), "--model", "m1",
                                      "--technique", "zero-shot", "--json"])
    assert json.loads(out.stdout)["imported"] == len(ROWS)
    out = runner.invoke(main, base + ["samples", "eval", "--workers", "2", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["evaluated"] == len(ROWS)
    assert data["outcomes"] == {"error": 1, "failed": 1, "no_code": 1, "passed": 3}
    out = runner.invoke(main, base + ["report", "--json"])
    m1 = json.loads(out.stdout)["models"]["m1"]
    # add_one: 2 of 4 pass -> 0.5; counter_bump 1/1; double_it 0/1 -> (0.5 + 1 + 0) / 3
    assert m1["overall"] == {"pass@1": 0.5, "problems": 3, "samples": 6}
    out = runner.invoke(main, base + ["review", "queue", "--json"])
    queue = json.loads(out.stdout)
    assert sorted(i["outcome"] for i in queue) == ["error", "failed", "no_code"]
    failed = next(i for i in queue if i["outcome"] == "failed")
    assert failed["failing_tests"] and failed["reference"] == ADD_SOLUTION
    out = runner.invoke(main, base + ["samples", "eval", "--json"])
    assert json.loads(out.stdout)["evaluated"] == 0


SCALE = 'def scale(x):\n    """Three times x."""\n    return 3 * x\n'


@pytest.mark.requires_bwrap
def test_samples_of_repository_problems_start_no_worker_of_plain_runs(tmp_path, monkeypatch):
    """Every run of such an evaluation goes to a worker of the repository's environment;
    a slot's worker of plain runs (torch, pytest and a zygote) would only compete with
    them. A plain problem's samples still get theirs (the control)."""
    from repo_support import make_repo, mine_and_accept

    from curator.evaluation import samples as sample_files

    upstream = make_repo(tmp_path / "scales", {
        "pkg/__init__.py": "", "pkg/ops.py": SCALE,
        "tests/test_ops.py": "from pkg.ops import scale\n\n\ndef test_scale():\n"
                             "    assert scale(2) == 6\n"})
    ws, _ = mine_and_accept(tmp_path, upstream, "scale", "scale")
    left_running = plain_workers_at_close(monkeypatch, evaluate)
    with Store(ws.db_path, "tester") as store:
        rows = [{"task_id": "scale", "solution": SCALE},
                {"task_id": "scale", "solution": SCALE.replace("3 *", "2 *")}]
        sample_files.import_files(store, [write_jsonl(tmp_path / "r.jsonl", rows)],
                                  model="m1")
        report = evaluate.evaluate(store, ws, workers=1)
        assert report.outcomes == {"passed": 1, "failed": 1}, report.to_json()
        assert left_running == [0]
        make_problems(store)
        sample_files.import_files(store, [write_jsonl(tmp_path / "p.jsonl", ROWS[:2])],
                                  model="m2")
        report = evaluate.evaluate(store, ws, model="m2", workers=1)
        assert report.outcomes == {"passed": 1, "failed": 1}, report.to_json()
        assert left_running == [0, 1]
