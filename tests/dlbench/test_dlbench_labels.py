"""The DL-Bench label mapping table (docs/dlbench-labels.md) and a release with each quirk."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from curator.cli import main
from curator.dlbench import fileformat, label_map
from curator.store import Store
from curator.store import problems as problem_store

DOC = Path(__file__).parents[2] / "docs" / "dlbench-labels.md"
TABLE = label_map.spelling_map()


def doc_rows() -> list[tuple[str, str, str]]:
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0] in ("stage", "task", "data"):
            rows.append((cells[0], "" if cells[1] == "(empty)" else cells[1], cells[2]))
    return rows


def test_the_documented_table_is_long_enough_to_mean_something():
    rows = doc_rows()
    assert len(rows) >= 25
    assert {axis for axis, _v, _s in rows} == {"stage", "task", "data"}


@pytest.mark.parametrize(("axis", "spelled", "slug"), doc_rows())
def test_documented_spelling_maps_as_the_table_says(axis, spelled, slug):
    assert label_map.map_label(axis, spelled, TABLE) == slug


FILES = {
    # class file: stage and data swapped, 'pre-post process', task 'Prediction'
    "classes-korniaforward1.txt": (
        "stage: Image\ntask: Prediction\ndata: pre-post process\n\nprompt:\nDo it.\n\n"
        " ground Truth:kornia/losses/dice.py\n\n repo:kornia\n\n function:forward\n\n"
        " class:DiceLoss\n\n test_cases:tests/losses/test_dice.py::TestDiceLoss\n"),
    # function file: typo'd task, time-series data
    "korniasafe_diff2.txt": (
        "stage: Evaluating&Metrics\ntask: Classificatoin\ndata: Timeseries\n\nprompt:\nx\n\n"
        " ground Truth:kornia/a.py\n\n repo:Kornia\n\n function:safe_diff\n\n"
        " test_cases:tests/test_a.py\n"),
    # class file whose data field repeats the stage
    "classes-korniatrain3.txt": (
        "stage: Training\ntask: \ndata: Training\n\nprompt:\nx\n\n ground Truth:kornia/b.py\n\n"
        " repo:kornia\n\n function:step\n\n class:Trainer\n\n test_cases:tests/test_b.py\n"),
    # nothing but labels and a prompt that shows the function (like classes-30.txt)
    "classes-30.txt": (
        "stage: Text\ntask: \ndata: Training\n\nprompt:\nComplete the following function :\n"
        "def _threshold_and_support(input, dim=-1):\n    pass\n\n ground Truth:\n\n repo:\n\n"
        " f_name:"),
    # no test target (like the CompressAI files)
    "classes-CompressAIforward4.txt": (
        "stage: Image\ntask: \ndata: Model Construction\n\nprompt:\nx\n\n"
        " ground Truth:compressai/entropy_models/entropy_models.py\n\n repo:CompressAI\n\n"
        " function:forward\n"),
    # a spelling nobody knows: reported with its count, kept verbatim
    "pyodfit5.txt": (
        "stage: Training\ntask: Clustering\ndata: Table\n\nprompt:\nx\n\n ground Truth:pyod/x.py"
        "\n\n repo:pyod\n\n function:fit\n\n test_cases:pyod/test/test_x.py::test_fit\n"),
}


@pytest.fixture
def release(tmp_path: Path) -> Path:
    folder = tmp_path / "DLEval"
    folder.mkdir()
    for name, text in FILES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_every_file_of_a_quirky_release_becomes_a_problem(empty_workspace, release):
    ws = empty_workspace
    result = CliRunner().invoke(main, ["--workspace", str(ws.root), "dlbench", "import",
                                       str(release), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["imported"] == len(FILES) and data["skipped"] == []
    assert data["drafts"] == 2
    assert data["unmapped"] == {"task": {"Clustering": 1}}
    flags = {p["file"]: set(p["flags"]) for p in data["problems"]}
    assert {"function_missing", "function_from_prompt", "tests_missing", "repo_missing",
            "path_missing", "labels_swapped"} <= flags["classes-30.txt"]
    assert "tests_missing" in flags["classes-CompressAIforward4.txt"]
    assert "data_repeats_stage" in flags["classes-korniatrain3.txt"]
    assert data["flags"]["tests_missing"] == 2 and data["flags"]["labels_swapped"] == 4
    with Store(ws.db_path, "tester") as store:
        problems = {p.id: p for p in problem_store.all_problems(store)}
        labels = {p.id: (p.stage, p.task, p.data) for p in problems.values()}
        raw = json.loads(store.one("SELECT raw FROM problem_imports WHERE problem_id = ?",
                                   ("pyodfit5",))["raw"])
    assert labels == {
        "classes-korniaforward1": ("prepost", "timeseries", "image"),
        "korniasafe_diff2": ("evaluation", "classification", "other"),
        "classes-korniatrain3": ("training", "general", "other"),
        "classes-30": ("training", "general", "text"),
        "classes-compressaiforward4": ("model", "general", "image"),
        "pyodfit5": ("training", "", "tabular"),
    }
    assert raw["fields"]["task"] == "Clustering"
    thirty = problems["classes-30"]
    assert thirty.entry_point == "_threshold_and_support" and thirty.test_node_ids == []
    assert thirty.status == "draft"
    assert problems["korniasafe_diff2"].source["repo"] == "https://github.com/kornia/kornia"
    # The drafts survive a dump and a load (no tests is allowed for drafts only).
    load = CliRunner().invoke(main, ["--workspace", str(ws.root), "load", "--json"])
    assert load.exit_code == 0, load.output
    assert json.loads(load.output)["errors"] == []


def test_distribution_counts_from_the_mapping(release):
    counts = Counter()
    for path in sorted(release.iterdir()):
        record = fileformat.parse_txt(path.read_text(encoding="utf-8"), path.name)
        counts[label_map.resolve_labels(record, TABLE).stage] += 1
    assert counts == {"prepost": 1, "evaluation": 1, "training": 3, "model": 1}


def test_class_label_swap_is_undone_only_when_it_resolves_more():
    record = fileformat.parse_txt("stage: Training\ntask:\ndata: Image\n", "classes-xforward1.txt")
    assert label_map.resolve_labels(record, TABLE).stage == "training"  # not swapped
    swapped = fileformat.parse_txt("stage: Image\ntask:\ndata: Training\n", "classes-x2.txt")
    result = label_map.resolve_labels(swapped, TABLE)
    assert (result.stage, result.data, result.swapped) == ("training", "image", True)
    assert re.fullmatch(r"[a-z]+", result.task)
