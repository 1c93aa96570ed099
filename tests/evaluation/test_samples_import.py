"""Sample import: JSONL (solution / completion / response), DL-Bench JSON, idempotency, errors."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from samples_support import ADD_SOLUTION, COUNTER_SOLUTION, make_problems, write_jsonl

from curator.cli import main
from curator.errors import Cancelled
from curator.evaluation import samples as sample_files
from curator.store import Store


@pytest.fixture
def ws(empty_workspace):
    with Store(empty_workspace.db_path, "tester") as store:
        make_problems(store)
    return empty_workspace


@pytest.fixture
def db(ws):
    store = Store(ws.db_path, "tester")
    yield store
    store.close()


def test_jsonl_each_code_field(db, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": "add_one", "solution": ADD_SOLUTION},
        {"task_id": "add_one", "completion": "    return x + 1\n", "temperature": 0.2},
        {"task_id": "dlbench/add_one", "response": f"Here:\n```python\n{ADD_SOLUTION}```\nDone.",
         "model": "other-model", "technique": "cot", "sample_index": 7},
        {"task_id": "counter_bump", "response": "Sorry, I can't."},
    ])
    report = sample_files.import_files(db, [path], model="m1", technique="zero-shot")
    assert report.errors == []
    assert report.imported == 4 and report.no_code == 1
    rows = db.query("SELECT * FROM samples ORDER BY id")
    by_format = {r["format"]: r for r in rows if r["problem_id"] == "add_one"}
    assert by_format["solution"]["code"] == ADD_SOLUTION
    assert by_format["solution"]["model"] == "m1"
    assert by_format["solution"]["technique"] == "zero-shot"
    completion = by_format["completion"]["code"]
    assert completion.endswith("def add_one(x: int) -> int:\n    return x + 1\n")
    assert completion.startswith("import math")  # the reference's imports come first
    assert by_format["completion"]["temperature"] == 0.2
    response = by_format["response"]
    assert response["code"] == ADD_SOLUTION and response["extraction"] == "fenced-entry"
    assert (response["model"], response["technique"], response["sample_index"]) == \
        ("other-model", "cot", 7)
    assert "Done." in response["raw"]
    no_code = next(r for r in rows if r["problem_id"] == "counter_bump")
    assert no_code["code"] is None and no_code["extraction"] == "none"
    # Every sample is audited.
    audit = db.query("SELECT * FROM audit WHERE entity = 'sample' AND action = 'create'")
    assert len(audit) == 4


def test_importing_twice_adds_nothing(db, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": "add_one", "solution": ADD_SOLUTION},
        {"task_id": "add_one", "solution": ADD_SOLUTION},  # same text, next sample
        {"task_id": "double_it", "response": "```python\ndef double(x):\n    return x\n```"},
    ])
    first = sample_files.import_files(db, [path], model="m1")
    assert first.imported == 3
    second = sample_files.import_files(db, [path], model="m1")
    assert second.imported == 0 and second.duplicates == 3
    assert db.one("SELECT COUNT(*) AS n FROM samples")["n"] == 3
    indices = [r["sample_index"] for r in db.query(
        "SELECT sample_index FROM samples WHERE problem_id = 'add_one' ORDER BY id")]
    assert indices == [0, 1]
    # Another model with the same text is a different sample.
    third = sample_files.import_files(db, [path], model="m2")
    assert third.imported == 3


def test_bad_rows_reported_with_file_and_line_rest_imports(db, tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", [
        {"task_id": "add_one", "solution": ADD_SOLUTION},            # 1 ok
        "{not json",                                                  # 2
        {"task_id": "nope", "solution": "x = 1"},                     # 3 unknown task
        {"task_id": "add_one"},                                       # 4 no code field
        {"solution": "x = 1"},                                        # 5 no task id
        "[1, 2]",                                                     # 6 not an object
        {"task_id": "add_one", "solution": 42},                       # 7 not a string
        {"task_id": "add_one", "solution": "y = 2", "sample_index": "two"},  # 8
        {"task_id": "add_one", "solution": "z = 3", "temperature": "hot"},   # 9
        {"task_id": "double_it", "response": "```python\ndef double(x):\n    return 2*x\n```"},
    ])
    report = sample_files.import_files(db, [path], model="m1")
    assert report.imported == 2
    lines = {e["line"]: e["message"] for e in report.errors}
    assert sorted(lines) == [2, 3, 4, 5, 6, 7, 8, 9]
    assert all(e["file"] == str(path) for e in report.errors)
    assert "invalid JSON" in lines[2]
    assert "unknown task_id 'nope'" in lines[3]
    assert "no code field" in lines[4]
    assert "no task_id" in lines[5]
    assert "sample_index" in lines[8] and "temperature" in lines[9]


def test_row_without_model_needs_model_option(db, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "add_one", "solution": ADD_SOLUTION}])
    report = sample_files.import_files(db, [path])
    assert report.imported == 0 and "no model" in report.errors[0]["message"]


def test_dlbench_per_problem_json(db, tmp_path):
    function_file = tmp_path / "mathlibadd_one3.json"
    function_file.write_text(json.dumps({
        "result": f"Here is the code:\n```python\n{ADD_SOLUTION}```",
        "prompt": "Add one to x", "function_name": "add_one", "ground_truth": "mathlib/ops.py",
        "test": "tests/test_ops.py", "class": "", "stage": "Pre-Post processing",
        "task": "classififcation", "data": "Image", "repo": "mathlib"}), encoding="utf-8")
    class_file = tmp_path / "classes-countersbump1.json"
    class_file.write_text(json.dumps({
        "result": f"```python\n{COUNTER_SOLUTION}```", "function_name": "bump",
        "class": "Counter", "repo": "counters", "prompt": "..."}), encoding="utf-8")
    # No entry point matches, but the file name is the problem id.
    by_name = tmp_path / "double_it.json"
    by_name.write_text(json.dumps({"result": "def double(x):\n    return x + x\n",
                                   "function_name": "twice"}), encoding="utf-8")
    unknown = tmp_path / "whatever7.json"
    unknown.write_text(json.dumps({"result": "x", "function_name": "nothing_like_it"}),
                       encoding="utf-8")
    report = sample_files.import_files(db, [function_file, class_file, by_name, unknown],
                                       model="gpt-x")
    assert report.imported == 3
    assert [(e["file"], e["line"]) for e in report.errors] == [(str(unknown), 1)]
    rows = {r["problem_id"]: r for r in db.query("SELECT * FROM samples")}
    assert rows["add_one"]["format"] == "dlbench"
    assert rows["add_one"]["code"] == ADD_SOLUTION
    assert rows["counter_bump"]["code"] == COUNTER_SOLUTION
    assert rows["double_it"]["extraction"] == "whole"
    again = sample_files.import_files(db, [function_file, class_file, by_name], model="gpt-x")
    assert again.imported == 0 and again.duplicates == 3


def test_whole_import_is_one_transaction(db, tmp_path):
    good = write_jsonl(tmp_path / "a.jsonl", [{"task_id": "add_one", "solution": ADD_SOLUTION}])
    calls = []

    def cancel() -> bool:
        calls.append(1)
        return len(calls) > 1  # cancel on the second file's first row

    other = write_jsonl(tmp_path / "b.jsonl", [{"task_id": "double_it", "solution": "x=1"}])
    with pytest.raises(Cancelled):
        sample_files.import_files(db, [good, other], model="m1", cancelled=cancel)
    assert db.one("SELECT COUNT(*) AS n FROM samples")["n"] == 0


def test_unreadable_and_malformed_files(db, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "result": "x",\n  "function_name": \n}', encoding="utf-8")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b"\xff\xfe\x00bad")
    report = sample_files.import_files(db, [broken, empty, binary, tmp_path / "missing.jsonl"],
                                       model="m")
    assert report.imported == 0
    by_file = {e["file"]: e for e in report.errors}
    assert by_file[str(broken)]["line"] == 4
    assert by_file[str(empty)]["message"] == "file is empty"
    assert "cannot read" in by_file[str(binary)]["message"]
    assert "cannot read" in by_file[str(tmp_path / "missing.jsonl")]["message"]


def test_cli_import_json_and_exit_status(ws, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [
        {"task_id": "add_one", "solution": ADD_SOLUTION},
        {"task_id": "missing", "solution": "x"},
    ])
    runner = CliRunner()
    result = runner.invoke(main, ["--workspace", str(ws.root), "samples", "import", str(path),
                                  "--model", "m1", "--json"])
    data = json.loads(result.stdout)
    assert data["imported"] == 1
    assert data["errors"][0]["line"] == 2
    assert result.exit_code == 1  # some rows were bad
    again = runner.invoke(main, ["--workspace", str(ws.root), "samples", "import", str(path),
                                 "--model", "m1"])
    assert "0 imported" in again.stdout and "1 duplicate" in again.stdout
    assert f"{path}:2:" in again.stderr
    listed = runner.invoke(main, ["--workspace", str(ws.root), "samples", "list", "--json"])
    assert [r["problem_id"] for r in json.loads(listed.stdout)] == ["add_one"]
