"""DL-Bench interop: the .txt and CSV forms, label spellings, import as draft problems."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from curator.cli import main
from curator.dlbench import fileformat, label_map
from curator.dlbench.importer import sanitise_id, unique_id
from curator.problem import ID_PATTERN
from curator.release import gates
from curator.store import problems as problem_store

FIXTURES = Path(__file__).parents[1] / "fixtures" / "dlbench"
TXT = FIXTURES / "txt"
CSV = FIXTURES / "csv" / "dlbench.csv"
TABLE = label_map.spelling_map()


def parse(name: str) -> fileformat.Record:
    return fileformat.parse_txt((TXT / name).read_text(encoding="utf-8"), name)


def labels(record: fileformat.Record):
    result = label_map.resolve_labels(record, TABLE)
    return result.stage, result.task, result.data


def import_cmd(ws, *args):
    result = CliRunner().invoke(main, ["--workspace", str(ws.root), "dlbench", "import", *args])
    return result


# -- the .txt format ----------------------------------------------------------------------

def test_keys_count_only_with_at_most_two_leading_spaces():
    record = parse("visionbox_iou12.txt")
    prompt = record.fields["prompt"]
    assert "   data: a tensor of shape [N, 4]" in prompt        # 3 spaces: prompt text
    assert "    task: not a key either" in prompt               # 4 spaces
    assert "\tstage: a tab does not count" in prompt            # a tab
    assert prompt.endswith("Return a tensor of shape [N, M].")
    assert labels(record) == ("prepost", "classification", "image")
    # Two leading spaces still make a key.
    assert parse("classes-lightlymemory_bank1.txt").fields["repo"] == "lightly"


def test_legacy_f_name_key_and_ground_truth_anchors():
    assert parse("visionbox_iou12.txt").fields["function"] == "box_iou"
    gt = fileformat.parse_ground_truth(parse("kornia_rgb_to_grayscale1.txt").fields["ground_truth"])
    assert (gt.path, gt.lines) == ("kornia/color/gray.py", "204")
    gt = fileformat.parse_ground_truth(parse("classes-korniaforward3.txt").fields["ground_truth"])
    assert (gt.path, gt.lines) == ("kornia/losses/dice.py", "120-168")
    gt = fileformat.parse_ground_truth("./cleanlab/filter.py#L10-L42")
    assert (gt.path, gt.lines) == ("cleanlab/filter.py", "10-42")
    gt = fileformat.parse_ground_truth(parse("ignitepinned_accuracy3.txt").fields["ground_truth"])
    assert gt.repo_url == "https://github.com/pytorch/ignite"
    assert gt.path == "ignite/metrics/accuracy.py" and gt.lines == "200-230"
    assert fileformat.is_commit(gt.ref)


def test_crlf_preamble_and_duplicate_keys():
    record = parse("cleanlabfind_label_issues2.txt")
    assert "\r" not in record.fields["prompt"]
    assert labels(record) == ("training", "regression", "tabular")   # TRAINING, Table
    assert fileformat.node_ids(record.fields["test_cases"]) == [
        "tests/test_filter.py::test_find_label_issues"]
    record = parse("ignitepinned_accuracy3.txt")
    assert record.fields["prompt"].startswith("Write `Accuracy.compute()`")
    assert record.notes == ["duplicate key 'prompt': the first value is kept",
                            "text before the first key was ignored"]


def test_class_files_have_stage_and_data_swapped():
    record = parse("classes-korniaforward3.txt")          # stage: Image, data: Model ...
    assert record.is_class
    result = label_map.resolve_labels(record, TABLE)
    assert (result.stage, result.task, result.data) == ("model", "segmentation", "image")
    assert result.swapped
    # A class file written the right way round is read as it is.
    result = label_map.resolve_labels(parse("classes-lightlymemory_bank1.txt"), TABLE)
    assert (result.stage, result.data, result.swapped) == ("training", "image", False)
    # A function file is only swapped when that is the only reading that makes sense.
    odd = fileformat.Record("fn.txt", {"stage": "Text", "task": "", "data": "Inference"})
    result = label_map.resolve_labels(odd, TABLE)
    assert (result.stage, result.data, result.swapped) == ("inference", "text", True)


@pytest.mark.parametrize(("axis", "value", "slug"), [
    ("stage", "Pre-Post processing", "prepost"),
    ("stage", "Pre/Post Processing", "prepost"),
    ("stage", "pre/post processing ", "prepost"),
    ("stage", "Evaluating&Metrics", "evaluation"),
    ("stage", "evaluation and metrics", "evaluation"),
    ("stage", "Model Construction", "model"),
    ("stage", "TRAINING", "training"),
    ("task", "classififcation", "classification"),
    ("task", "Object Detection", "detection"),
    ("task", "Time Series Prediction", "timeseries"),
    ("task", "", "general"),
    ("task", "   ", "general"),
    ("data", "Table", "tabular"),
    ("data", "Structured Array", "tabular"),
    ("data", "others", "other"),
    ("data", "", "other"),
    ("stage", "", None),
    ("stage", "Data Loading", None),
    ("task", "Clustering", None),
])
def test_label_spellings(axis, value, slug):
    assert label_map.map_label(axis, value, TABLE) == slug


def test_export_spellings_map_back_to_every_slug():
    for axis, spellings in label_map.EXPORT_SPELLINGS.items():
        for slug, spelling in spellings.items():
            assert label_map.map_label(axis, spelling, TABLE) == slug


def test_rendered_txt_parses_back_including_class_swap():
    row = {"repo": "kornia", "filename": "classes-korniax1.txt", "function": "forward",
           "class": "Net", "ground Truth": "kornia/net.py#L3-L9", "test_cases": "t.py::T t.py::U",
           "prompt": "Complete `Net.forward`.\n    data: inside the prompt\n",
           "stage": "Model Construction", "task": "Classification", "data": "Image"}
    text = fileformat.render_txt(row)
    assert "stage: Image" in text and "data: Model Construction" in text
    record = fileformat.parse_txt(text, row["filename"])
    assert labels(record) == ("model", "classification", "image")
    assert record.fields["prompt"] == row["prompt"].strip()
    assert fileformat.node_ids(record.fields["test_cases"]) == ["t.py::T", "t.py::U"]


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=0, max_size=90))
def test_sanitised_ids_are_always_valid(name):
    pid = sanitise_id(name + ".txt")
    assert ID_PATTERN.match(pid)
    assert ID_PATTERN.match(unique_id(pid, {pid, pid[:62] + "-2"}))


def test_sanitise_and_unique_ids():
    assert sanitise_id("Kornia RGB-to-HSV (copy)9.txt") == "kornia_rgb-to-hsv_copy_9"
    assert sanitise_id("classes-Kornia.Gray1.txt") == "classes-kornia_gray1"
    assert sanitise_id("___.txt") == "dlbench"
    long = "a" * 80
    assert unique_id(long[:64], {long[:64]}) == "a" * 62 + "-2"


# -- importing ---------------------------------------------------------------------------

def test_import_txt_corpus(empty_workspace):
    ws = empty_workspace
    result = import_cmd(ws, str(TXT), "--json")
    assert result.exit_code == 0, result.output  # nothing skipped: drafts keep what is missing
    data = json.loads(result.output)
    assert data["imported"] == 13 and data["skipped"] == []
    flags = {p["id"]: p["flags"] for p in data["problems"]}
    assert "prompt_missing" in flags["lightlynoprompt5"]   # kept as a draft, never dropped
    assert data["drafts"] == 1 and data["flags"]["prompt_missing"] == 1
    assert data["unmapped"] == {"data": {"Point Cloud": 1}, "stage": {"Data Loading": 1},
                                "task": {"Clustering": 1}}
    assert data["unknown_labels"] == [
        {"file": "pytorch3dknn_points4.txt", "problem_id": "pytorch3dknn_points4",
         "axis": axis, "value": value, "key": axis}
        for axis, value in (("stage", "Data Loading"), ("task", "Clustering"),
                            ("data", "Point Cloud"))]
    ids = {p["file"]: p["id"] for p in data["problems"]}
    assert ids["Kornia.Gray1.txt"] == "kornia_gray1"
    assert ids["kornia_gray1.txt"] == "kornia_gray1-2"
    assert ids["Kornia RGB-to-HSV (copy)9.txt"] == "kornia_rgb-to-hsv_copy_9"
    flags = {p["id"]: p["flags"] for p in data["problems"]}
    assert "commit_unpinned" in flags["kornia_rgb_to_grayscale1"]
    assert "commit_unpinned" not in flags["ignitepinned_accuracy3"]
    assert "labels_swapped" in flags["classes-korniaforward3"]
    assert "repo_unresolved" in flags["mysteryrepomain6"]

    from curator.store import Store
    with Store(ws.db_path, "tester") as store:
        problem = problem_store.get(store, "classes-korniaforward3")
        assert problem.status == "draft" and problem.kind == "method"
        assert problem.entry_point == "DiceLoss.forward" and problem.repo_backed
        assert problem.source == {"repo": "https://github.com/kornia/kornia",
                                  "path": "kornia/losses/dice.py", "symbol": "DiceLoss.forward",
                                  "lines": "120-168"}
        assert (problem.stage, problem.task, problem.data) == ("model", "segmentation", "image")
        assert problem.tests is None and len(problem.test_node_ids) == 2
        pinned = problem_store.get(store, "ignitepinned_accuracy3")
        assert pinned.source["commit"] == "0123456789abcdef0123456789abcdef01234567"
        unknown = problem_store.get(store, "pytorch3dknn_points4")
        assert (unknown.stage, unknown.task, unknown.data) == ("", "", "")
        raw = json.loads(store.one("SELECT raw FROM problem_imports WHERE problem_id = ?",
                                   ("pytorch3dknn_points4",))["raw"])
        assert raw["fields"]["stage"] == "Data Loading"   # kept, never dropped
        assert [h["action"] for h in store.history("problem", "kornia_gray1")] == [
            "create", "import"]
        # Unpinned imports cannot be released: the provenance gate says why.
        report = gates.check(store, ws)
        reasons = {f.problem_id: f.reason for f in report.failures
                   if f.gate == "provenance_known"}
        assert reasons["kornia_gray1"] == "[source] lacks commit (unpinned), license"
        assert report.ok  # drafts never block
    assert (ws.problems_dir / "kornia_gray1-2" / "problem.toml").is_file()
    assert not (ws.problems_dir / "kornia_gray1-2" / "test_solution.py").exists()
    load = CliRunner().invoke(main, ["--workspace", str(ws.root), "load", "--json"])
    assert json.loads(load.output)["loaded"] == 0

    again = json.loads(import_cmd(ws, str(TXT), "--json").output)
    assert again["imported"] == 0
    assert {"file": "kornia_gray1.txt", "reason": "already imported as kornia_gray1-2"} in \
        again["skipped"]


def test_import_tarball_matches_folder(empty_workspace, tmp_path):
    archive = tmp_path / "DL-Bench.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(TXT, arcname="DL-Bench")
    folder = json.loads(import_cmd(empty_workspace, str(TXT), "--dry-run", "--json").output)
    packed = json.loads(import_cmd(empty_workspace, str(archive), "--dry-run", "--json").output)
    assert folder["dry_run"] and packed["problems"] == folder["problems"]
    assert packed["unknown_labels"] == folder["unknown_labels"]
    assert not any(empty_workspace.problems_dir.iterdir())  # dry run wrote nothing


def test_import_csv_form(empty_workspace):
    result = import_cmd(empty_workspace, str(CSV), "--json")
    assert result.exit_code == 0, result.output  # nothing skipped: drafts keep what is missing
    data = json.loads(result.output)
    assert data["imported"] == 6 and data["skipped"] == []
    flags = {p["file"]: p["flags"] for p in data["problems"]}
    assert "tests_missing" in flags["korniamissing_tests6.txt"]
    assert data["unknown_labels"] == [{"file": "pfrlcompute_loss4.txt",
                                       "problem_id": "pfrlcompute_loss4", "axis": "task",
                                       "value": "Reinforcement Learning", "key": "task"}]
    ids = [p["id"] for p in data["problems"]]
    assert "dlbench_csv_6" in ids   # no filename: the id comes from file and line
    from curator.store import Store
    with Store(empty_workspace.db_path, "tester") as store:
        fpn = problem_store.get(store, "classes-visionforward2")
        assert fpn.entry_point == "FeaturePyramidNetwork.forward"
        assert (fpn.stage, fpn.task, fpn.data) == ("model", "detection", "image")
        assert fpn.source["repo"] == "https://github.com/pytorch/vision"
        acc = problem_store.get(store, "scikit-learnaccuracy_score3")
        assert (acc.stage, acc.task, acc.data) == ("evaluation", "general", "other")
        assert acc.framework == "scikit-learn"
        grad = problem_store.get(store, "korniaspatial_gradient1")
        assert grad.prompt.startswith('Write `spatial_gradient(input, mode="sobel", order=1)`')
        assert grad.source["lines"] == "40"


def test_configured_spellings_and_repos(empty_workspace):
    (empty_workspace.root / "curator.toml").write_text(
        '[dlbench.spellings.stage]\n"Data Loading" = "prepost"\n'
        '[dlbench.spellings.task]\nClustering = "general"\n'
        '[dlbench.spellings.data]\n"Point Cloud" = "other"\n'
        '[dlbench.repos]\nsome-private-repo = "https://git.example.org/team/model"\n')
    data = json.loads(import_cmd(empty_workspace, str(TXT), "--json").output)
    assert data["unknown_labels"] == []
    from curator.store import Store
    with Store(empty_workspace.db_path, "tester") as store:
        assert problem_store.get(store, "mysteryrepomain6").source["repo"] == \
            "https://git.example.org/team/model"
        knn = problem_store.get(store, "pytorch3dknn_points4")
        assert (knn.stage, knn.task, knn.data) == ("prepost", "general", "other")


def test_import_reports_unreadable_files(empty_workspace, tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "latin1.txt").write_bytes("stage: Training\nprompt: caf\xe9\n".encode("latin-1"))
    (folder / "badname.txt").write_text("prompt: x\nrepo: kornia\nfunction: not a name\n"
                                        "test_cases: t.py\n")
    (folder / "notests.txt").write_text("prompt: x\nrepo: kornia\nfunction: f\n")
    data = json.loads(import_cmd(empty_workspace, str(folder), "--json").output)
    assert data["imported"] == 2 and data["drafts"] == 2
    assert data["skipped"] == [{"file": "latin1.txt", "reason": "not UTF-8 (byte 27)"}]
    flags = {p["file"]: p["flags"] for p in data["problems"]}
    assert "function_invalid" in flags["badname.txt"]
    assert "tests_missing" in flags["notests.txt"]
    text = import_cmd(empty_workspace, str(folder))
    assert text.exit_code == 1 and "error: latin1.txt: not UTF-8" in text.stderr


def test_import_dlbench_is_an_alias_that_says_where_the_command_lives(empty_workspace):
    result = CliRunner().invoke(main, ["--workspace", str(empty_workspace.root),
                                       "import-dlbench", str(TXT), "--json"])
    assert result.exit_code == 0, result.output
    assert "note: `curator import-dlbench` is now `curator dlbench import`" in result.stderr
    assert json.loads(result.stdout)["imported"] == \
        len([p for p in TXT.iterdir() if p.suffix == ".txt"])
