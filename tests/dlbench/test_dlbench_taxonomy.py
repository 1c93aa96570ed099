"""`samples import DIR --format dlbench-taxonomy`: samples with outcomes judged elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from mining_support import write

from curator import workspace as workspace_mod
from curator.cli import main
from curator.dlbench.taxonomy_data import parse_result
from curator.evaluation import evaluate
from curator.review.queue import queue as review_queue
from curator.store import Store

RELEASE = {
    "korniargb_to_grayscale1.txt": (
        "stage: Pre-Post processing\ntask: \ndata: Image\n\nprompt:\nConvert.\n\n"
        " ground Truth:kornia/color/gray.py\n\n repo:kornia\n\n function:rgb_to_grayscale\n\n"
        " test_cases:tests/color/test_gray.py::TestRgbToGrayscale\n"),
    "korniabackward2.txt": (
        "stage: Training\ntask: \ndata: Image\n\nprompt:\nBackward.\n\n"
        " ground Truth:kornia/grad_estimator/ste.py\n\n repo:kornia\n\n function:backward\n\n"
        " test_cases:tests/grad_estimator/test_ste.py\n"),
    "Laplaceinit_from_model3.txt": (
        "stage: Model Construction\ntask: \ndata: \n\nprompt:\nInit.\n\n"
        " ground Truth:laplace/lllaplace.py\n\n repo:Laplace\n\n function:init_from_model\n\n"
        " test_cases:tests/test_lllaplace.py\n"),
    "pyodfit4.txt": (
        "stage: Training\ntask: \ndata: Table\n\nprompt:\nFit.\n\n ground Truth:pyod/x.py\n\n"
        " repo:pyod\n\n function:fit\n\n test_cases:pyod/test/test_x.py\n"),
}

FAILED_REPORT = """output file:
processed_korniargb_to_grayscale1.json
function:
rgb_to_grayscale
Error Cases:

Pass or Failed: 0

Related Failed Test Cases:
{'FAILED tests/color/test_gray.py::TestRgbToGrayscale::test_smoke[cpu-float32]', \
'tests/color/test_gray.py::TestRgbToGrayscale::test_smoke[cpu-float32] FAILED [ 50%]'}

All Test Cases On Generated code:
============================= test session starts ==============================
collecting ... collected 2 items

tests/color/test_gray.py::TestRgbToGrayscale::test_smoke[cpu-float32] FAILED [ 50%]
tests/color/test_gray.py::TestRgbToGrayscale::test_shape[cpu-float32] PASSED [100%]

=================================== FAILURES ===================================
E       AssertionError: shapes differ
========================= 1 failed, 1 passed in 0.31s ==========================


Final Test Result:
============================= test session starts ==============================
========================= 2 passed in 0.30s ==========================


Initial Result:
============================= test session starts ==============================
========================= 2 passed in 0.29s ==========================
"""

PASSED_REPORT = """output file:
x.json
function:
backward
Error Cases:

Pass or Failed: 1

Related Failed Test Cases:
set()

All Test Cases On Generated code:
tests/grad_estimator/test_ste.py::test_ste PASSED [100%]

============================== 1 passed in 0.05s ===============================

Initial Result:
============================== 1 passed in 0.05s ===============================
"""

ERROR_REPORT = """output file:
y.json
function:
init_from_model
Error Cases:
ImportError: cannot import name 'thing' from 'laplace.utils'

Pass or Failed: 0

Related Failed Test Cases:
set()

All Test Cases On Generated code:
==================================== ERRORS ====================================
___________________ ERROR collecting tests/test_lllaplace.py ___________________
E   ImportError: cannot import name 'thing'
=========================== short test summary info ============================
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 0.50s ===============================
"""

GENERATED = {
    "processed_korniargb_to_grayscale1.py": "def rgb_to_grayscale(image):\n    return image\n",
    # the taxonomy spells two names differently from the release
    "processed_class-korniabackward2.py": "def backward(ctx, grad):\n    return grad\n",
    "processed_classes-Laplaceinit_from_model3.py":
        "from laplace.utils import thing\n\ndef init_from_model(m):\n    return thing(m)\n",
    "processed_pyodfit4.py": "def fit(X):\n    return X\n",          # no Result file
    "processed_nosuchproblem9.py": "def f():\n    pass\n",            # not in the release
}


@pytest.fixture
def taxonomy(tmp_path: Path) -> Path:
    root = tmp_path / "Taxonomy-Data"
    write(root / "Generated", GENERATED)
    write(root / "Original", {name: "# reference\n" for name in GENERATED})
    write(root / "Result", {
        "processed_korniargb_to_grayscale1.txt": FAILED_REPORT,
        "processed_class-korniabackward2.txt": PASSED_REPORT,
        "processed_classes-Laplaceinit_from_model3.txt": ERROR_REPORT,
        "processed_nosuchproblem9.txt": "Pass or Failed: 1\n",
    })
    return tmp_path


@pytest.fixture
def ws(tmp_path: Path):
    release = tmp_path / "release"
    write(release, RELEASE)
    ws = workspace_mod.init(tmp_path / "ws")
    result = CliRunner().invoke(main, ["--workspace", str(ws.root), "dlbench", "import",
                                       str(release)])
    assert result.exit_code == 0, result.output
    return ws


def cli(ws, *args):
    return CliRunner().invoke(main, ["--workspace", str(ws.root), *args])


def test_outcomes_of_dlbench_reports():
    failed = parse_result(FAILED_REPORT, "r.txt")
    assert failed.outcome == "failed" and not failed.passed
    assert failed.failed_tests == [("tests/color/test_gray.py::TestRgbToGrayscale::"
                                    "test_smoke[cpu-float32]")]
    assert {t["id"]: t["outcome"] for t in failed.tests} == {
        "tests/color/test_gray.py::TestRgbToGrayscale::test_smoke[cpu-float32]": "failed",
        "tests/color/test_gray.py::TestRgbToGrayscale::test_shape[cpu-float32]": "passed"}
    assert failed.summary == "1 failed, 1 passed"
    assert "AssertionError: shapes differ" in failed.output
    assert "Final Test Result" not in failed.output    # the reference's runs are apart
    assert parse_result(PASSED_REPORT, "r.txt").outcome == "passed"
    error = parse_result(ERROR_REPORT, "r.txt")
    assert error.outcome == "error" and "ImportError" in error.error_cases
    with pytest.raises(Exception, match="r.txt: no 'Pass or Failed: 0|1' line"):
        parse_result("output file:\nx\n", "r.txt")


def test_import_gives_each_sample_its_recorded_outcome(ws, taxonomy):
    result = cli(ws, "samples", "import", str(taxonomy), "--format", "dlbench-taxonomy",
                 "--model", "gpt-4o", "--json")
    assert result.exit_code == 1, result.output          # errors are reported ...
    data = json.loads(result.stdout)
    assert data["imported"] == 4 and data["pending"] == 1   # ... and the rest imports
    assert data["outcomes"] == {"error": 1, "failed": 1, "passed": 1}
    messages = {Path(e["file"]).name: e["message"] for e in data["errors"]}
    assert "no imported DL-Bench problem 'nosuchproblem9'" in \
        messages["processed_nosuchproblem9.py"]
    assert messages["processed_pyodfit4.txt"].startswith("missing")

    listed = json.loads(cli(ws, "samples", "list", "--json").stdout)
    by_problem = {r["problem_id"]: r for r in listed}
    assert {p: (r["outcome"], r["judged_by"]) for p, r in by_problem.items()} == {
        "korniargb_to_grayscale1": ("failed", "dlbench-taxonomy"),
        "korniabackward2": ("passed", "dlbench-taxonomy"),
        "laplaceinit_from_model3": ("error", "dlbench-taxonomy"),
        "pyodfit4": ("pending", None)}

    # Reviewable without running anything here: the references never ran.
    with Store(ws.db_path, "tester") as store:
        items = {i.problem_id: i for i in review_queue(store)}
        assert set(items) == {"korniargb_to_grayscale1", "laplaceinit_from_model3"}
        gray = items["korniargb_to_grayscale1"]
        assert gray.failing_tests == [{"id": "tests/color/test_gray.py::TestRgbToGrayscale::"
                                             "test_smoke[cpu-float32]", "outcome": "failed"}]
        assert "AssertionError: shapes differ" in gray.test_output
        assert "judged elsewhere" in gray.reason
        # ... and never re-run: only the sample without a report is left to evaluate
        assert [s["problem_id"] for s in evaluate.pending(store)] == ["pyodfit4"]

    report = json.loads(cli(ws, "report", "--json").stdout)
    entry = report["models"]["gpt-4o"]
    assert entry["judged_elsewhere"] == 3
    assert entry["outcomes"] == {"error": 1, "failed": 1, "passed": 1}
    assert entry["overall"]["problems"] == 3 and entry["overall"]["pass@1"] == 0.3333
    assert report["excluded"] == ["pyodfit4"]    # pending, and its reference never ran

    again = cli(ws, "samples", "import", str(taxonomy), "--format", "dlbench-taxonomy",
                "--model", "gpt-4o", "--json")
    assert json.loads(again.stdout)["duplicates"] == 4
    with Store(ws.db_path, "tester") as store:
        assert store.one("SELECT COUNT(*) AS n FROM runs")["n"] == 3


def test_taxonomy_import_needs_a_model_and_a_taxonomy_folder(ws, tmp_path):
    no_model = cli(ws, "samples", "import", str(tmp_path), "--format", "dlbench-taxonomy")
    assert no_model.exit_code == 1 and "needs --model" in no_model.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    wrong = cli(ws, "samples", "import", str(empty), "--format", "dlbench-taxonomy",
                "--model", "m")
    assert wrong.exit_code == 1 and "no Generated/ folder" in wrong.stderr


def test_the_file_named_as_the_release_file_wins(ws, tmp_path):
    root = tmp_path / "two" / "Taxonomy-Data"
    code = "def backward(ctx, grad):\n    return grad\n"
    write(root / "Generated", {"processed_class-korniabackward2.py": code,
                               "processed_korniabackward2.py": code})
    write(root / "Result", {"processed_class-korniabackward2.txt": PASSED_REPORT,
                            "processed_korniabackward2.txt": PASSED_REPORT.replace(
                                "Pass or Failed: 1", "Pass or Failed: 0").replace(
                                "1 passed in", "1 failed in")})
    result = cli(ws, "samples", "import", str(root.parent), "--format", "dlbench-taxonomy",
                 "--model", "m", "--json")
    data = json.loads(result.stdout)
    assert result.exit_code == 1 and data["imported"] == 1
    assert data["outcomes"] == {"failed": 1}
    (error,) = data["errors"]
    assert error["file"].endswith("processed_class-korniabackward2.py")
    assert error["message"] == ("problem korniabackward2 is processed_korniabackward2.py's; "
                                "not imported")


def test_dlbench_taxonomy_is_the_command_and_the_old_spelling_says_so(ws, taxonomy):
    new = cli(ws, "dlbench", "taxonomy", str(taxonomy), "--model", "gpt-4o", "--json")
    assert new.exit_code == 1 and json.loads(new.stdout)["imported"] == 4
    assert "is now" not in new.stderr
    old = cli(ws, "samples", "import", str(taxonomy), "--format", "dlbench-taxonomy",
              "--model", "gpt-4o", "--json")
    assert json.loads(old.stdout)["duplicates"] == 4       # the same import, run again
    assert "note: `samples import --format dlbench-taxonomy` is now `curator dlbench " \
           "taxonomy`" in old.stderr
