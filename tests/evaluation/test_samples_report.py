"""pass@k reports: hand-computed figures, exclusions, label breakdowns, CSV, CLI."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner
from samples_support import add_samples, make_problems, record_run

from curator.cli import main
from curator.evaluation import report
from curator.store import Store


@pytest.fixture
def ws(empty_workspace):
    return empty_workspace


@pytest.fixture
def db(ws, tmp_path):
    store = Store(ws.db_path, "tester")
    make_problems(store)
    record_run(store, "add_one", "failed")   # an old failing reference run ...
    record_run(store, "add_one", "passed")   # ... the latest one counts
    record_run(store, "counter_bump", "passed")
    record_run(store, "double_it", "failed")
    add_ids = add_samples(store, tmp_path, [
        {"task_id": "add_one", "solution": f"def add_one(x):\n    return x + {i}\n"}
        for i in range(10)], name="add.jsonl")
    for number, sample_id in enumerate(add_ids):  # x + 1 passes ... make 3 pass
        record_run(store, "add_one", "passed" if number in (1, 4, 7) else
                   ("error" if number == 0 else "failed"), sample_id)
    counter = add_samples(store, tmp_path, [{"task_id": "counter_bump", "solution": "ok"}],
                          name="c.jsonl")
    record_run(store, "counter_bump", "passed", counter[0])
    double = add_samples(store, tmp_path, [{"task_id": "double_it", "solution": "x"}],
                         name="d.jsonl")
    record_run(store, "double_it", "passed", double[0])  # excluded: reference fails
    pending = add_samples(store, tmp_path, [{"task_id": "counter_bump", "solution": "late"}],
                          name="p.jsonl")
    record_run(store, "counter_bump", "infra", pending[0])  # harness failure: still pending
    yield store
    store.close()


def test_hand_computed_report(db):
    data = report.build(db)
    m1 = data["models"]["m1"]
    # add_one: n=10, c=3 -> 0.3 / 0.9167 / 1.0; counter_bump: n=1, c=1 -> pass@1 only.
    assert m1["overall"] == {"pass@1": 0.65, "pass@5": 0.9167, "pass@10": 1.0,
                             "problems": 2, "samples": 11}
    assert m1["stage"] == {
        "prepost": {"pass@1": 0.3, "pass@5": 0.9167, "pass@10": 1.0, "problems": 1,
                    "samples": 10},
        "model": {"pass@1": 1.0, "problems": 1, "samples": 1},
    }
    assert set(m1["task"]) == {"classification", "general"}
    assert set(m1["data"]) == {"image", "other"}
    assert m1["outcomes"] == {"error": 1, "failed": 6, "passed": 4, "pending": 1}
    assert data["excluded"] == ["double_it"]
    assert data["excluded_reasons"] == {"double_it": "reference failed"}


def test_pass_at_k_absent_where_no_problem_has_enough_samples(db):
    data = report.build(db, by="stage")
    model_bucket = data["models"]["m1"]["stage"]["model"]
    assert "pass@5" not in model_bucket and "pass@10" not in model_bucket
    assert "task" not in data["models"]["m1"]  # --by restricts the breakdown


def test_models_techniques_and_never_run_references(db, tmp_path):
    a = add_samples(db, tmp_path, [{"task_id": "add_one", "solution": "a",
                                    "technique": "zero-shot"}], model="m2", name="z.jsonl")
    b = add_samples(db, tmp_path, [{"task_id": "add_one", "solution": "b", "technique": "cot"}],
                    model="m2", name="cot.jsonl")
    record_run(db, "add_one", "passed", a[0])
    record_run(db, "add_one", "failed", b[0])
    data = report.build(db, model="m2")
    assert set(data["models"]) == {"m2 [zero-shot]", "m2 [cot]"}
    assert data["models"]["m2 [zero-shot]"]["overall"]["pass@1"] == 1.0
    assert data["models"]["m2 [cot]"]["overall"]["pass@1"] == 0.0
    db.execute("DELETE FROM runs WHERE solution_kind = 'reference' AND problem_id = 'add_one'")
    data = report.build(db, model="m2")
    assert data["models"] == {}
    assert data["excluded_reasons"] == {"add_one": "reference never run"}


def test_csv_export(db, tmp_path):
    path = tmp_path / "report.csv"
    rows = report.write_csv(report.build(db), path)
    with open(path, newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert len(table) == rows
    overall = table[0]
    assert overall["model"] == "m1" and overall["breakdown"] == "overall"
    assert (overall["pass@1"], overall["pass@5"], overall["problems"]) == ("0.65", "0.9167", "2")
    model_row = next(r for r in table if r["breakdown"] == "stage" and r["label"] == "model")
    assert model_row["pass@5"] == ""


def test_cli_report(ws, db, tmp_path):
    runner = CliRunner()
    out = runner.invoke(main, ["--workspace", str(ws.root), "report", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert set(data["models"]["m1"]) == {"overall", "stage", "task", "data", "outcomes"}
    assert data["excluded"] == ["double_it"]
    path = tmp_path / "r.csv"
    out = runner.invoke(main, ["--workspace", str(ws.root), "report", "--by", "task", "--csv",
                               str(path)])
    assert out.exit_code == 0, out.output
    assert "pass@1" in out.stdout and "double_it" in out.stdout and path.exists()
    out = runner.invoke(main, ["--workspace", str(ws.root), "report", "--model", "nobody",
                               "--json"])
    assert json.loads(out.stdout)["models"] == {}
