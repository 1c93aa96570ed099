"""Release bundles: build, reproducibility, verify (and tampering), diff, import round trip."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from release_support import make_releasable, record_reference, record_validation

from curator.archives import tar_gz_bytes
from curator.cli import main
from curator.dlbench import fileformat, label_map
from curator.errors import ReleaseError
from curator.evaluation.samples import import_files
from curator.execution.job import RunResult
from curator.release import bundle
from curator.release.diff import diff
from curator.release.rows import FIELDS, OPTIONAL, content_sha256, jsonl_line
from curator.release.verify import verify
from curator.review import annotations as review_labels
from curator.store import Store
from curator.store import problems as problem_store
from curator.store.runs import record
from curator.workspace import init


def cli(ws, *args):
    return CliRunner().invoke(main, ["--workspace", str(ws.root), *args])


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def same_problems(again: Path, first: Path) -> None:
    """A rebuild from an imported bundle has the same problem rows, byte for byte, except
    `validity`: test strength measured here, null where nothing was validated yet."""
    rebuilt, original = read_jsonl(again), read_jsonl(first)
    assert all(row["validity"] is None for row in rebuilt)
    assert all(row["validity"] is not None for row in original)
    for row in rebuilt + original:
        row["validity"] = None
    assert [jsonl_line(r) for r in rebuilt] == [jsonl_line(r) for r in original]


@pytest.fixture
def ready(workspace, store):
    """The seed workspace with a licence and a passing reference run per problem."""
    return make_releasable(workspace, store)


@pytest.fixture
def built(ready, store, tmp_path):
    report = bundle.build(store, ready, "1.0.0", tmp_path / "out", name="seed")
    return report


# -- build ----------------------------------------------------------------------------------

def test_build_writes_every_file_of_the_bundle(built, store):
    out = built.out
    names = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert {"problems.jsonl", "dlbench.csv", "taxonomy.json", "annotations.jsonl",
            "results.jsonl", "manifest.json", "README.md", "seed-1.0.0.tar.gz",
            "seed-1.0.0.tar.gz.sha256", "LICENSES/seed.txt"} <= names
    problems = problem_store.all_problems(store)
    rows = read_jsonl(out / "problems.jsonl")
    assert [r["task_id"] for r in rows] == [f"seed/{p.id}" for p in problems]
    for row, problem in zip(rows, problems):
        assert tuple(k for k in row if k not in OPTIONAL) == FIELDS
        # the test strength `curator validate` stored for this solution and these tests
        assert row["validity"] == {
            "discriminates": True, "stub_failed_share": 1.0, "non_exercising_tests": [],
            "stable": True, "flaky_tests": [], "mutation_score": 0.9, "mutants": 10,
            "killed": 9, "survivors": [{"operator": "constant", "line": 3}]}
        assert row["canonical_solution"] == problem.solution
        assert row["instruct_prompt"] == problem.prompt
        assert row["test"] == problem.tests and row["test_node_ids"] is None
        assert row["source"] is None and "torch" in row["libs"]
        assert row["content_sha256"] == content_sha256(row)
        assert problem.entry_point.split(".")[0] in row["code_prompt"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["name"] == "seed" and manifest["version"] == "1.0.0"
    assert manifest["schema_version"] == bundle.SCHEMA_VERSION
    assert manifest["tool_version"] and manifest["allow_failing"] is False
    assert manifest["counts"]["problems"] == len(problems)
    assert sum(manifest["counts"]["stage"].values()) == len(problems)
    for rel, entry in manifest["files"].items():
        data = (out / rel).read_bytes()
        assert entry == {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    assert "manifest.json" not in manifest["files"]
    sidecar = (out / "seed-1.0.0.tar.gz.sha256").read_text().split()
    assert sidecar == [built.archive_sha256, "seed-1.0.0.tar.gz"]
    results = read_jsonl(out / "results.jsonl")
    assert len(results) == len(problems)
    assert {r["solution_kind"] for r in results} == {"reference"}
    assert all(r["outcome"] == "passed" and len(r["tests"]) == 5 for r in results)
    labels = [r for r in read_jsonl(out / "annotations.jsonl") if r["type"] == "labels"]
    assert len(labels) == len(problems)
    assert {h["axis"] for h in labels[0]["history"]} == {"stage", "task", "data"}
    taxonomy = json.loads((out / "taxonomy.json").read_text())
    assert [x["slug"] for x in taxonomy["labels"]["data"]] == ["image", "text", "tabular", "other"]
    assert len(taxonomy["bug_taxonomy"]["categories"]) == 15
    readme = (out / "README.md").read_text()
    for heading in ("## How it was built", "## Distribution", "## Results",
                    "## Known limitations", "| Pipeline stage |", "## Test strength"):
        assert heading in readme
    assert (f"{len(problems)} of {len(problems)} problems were validated" in readme
            and "median mutation score 0.90" in readme)
    first = problems[0].id
    assert f"| {first} | yes | 1.00 | 0 | 0.90 (9/10) | 1 |" in readme
    assert "MIT" in (out / "LICENSES" / "seed.txt").read_text()


def test_csv_has_dlbench_columns_and_spellings(built, store):
    text = (built.out / "dlbench.csv").read_text(encoding="utf-8")
    reader = csv.DictReader(io.StringIO(text))
    assert tuple(reader.fieldnames) == fileformat.CSV_COLUMNS
    rows = {r["filename"]: r for r in reader}
    by_id = {p.id: p for p in problem_store.all_problems(store)}
    assert set(rows) == {f"{pid}.txt" for pid in by_id}
    for name, row in rows.items():
        problem = by_id[name[:-4]]
        assert row["stage"] == label_map.EXPORT_SPELLINGS["stage"][problem.stage]
        assert row["task"] == label_map.EXPORT_SPELLINGS["task"][problem.task]
        assert row["data"] == label_map.EXPORT_SPELLINGS["data"][problem.data]
        assert row["class"] == (problem.class_name or "")
        assert row["function"] == problem.function_name
        assert row["prompt"] == problem.prompt
    spelled = {r["stage"] for r in rows.values()} | {r["data"] for r in rows.values()}
    assert {"Pre/Post Processing", "Evaluation & Metrics", "Structured Array", "Others"} <= spelled
    # The CSV reads back through the importer's parser to the same slugs.
    records, errors = fileformat.parse_csv(text, "dlbench.csv")
    table = label_map.spelling_map()
    assert not errors
    for rec in records:
        labels = label_map.resolve_labels(rec, table)
        problem = by_id[rec.origin[:-4]]
        assert (labels.stage, labels.task, labels.data) == (problem.stage, problem.task,
                                                            problem.data)


def test_two_builds_are_byte_identical(ready, store, tmp_path):
    first = bundle.build(store, ready, "1.0.0", tmp_path / "a")
    second = bundle.build(store, ready, "1.0.0", tmp_path / "b")
    assert first.archive_sha256 == second.archive_sha256
    assert first.archive.read_bytes() == second.archive.read_bytes()
    assert first.released and not second.released and not second.recorded
    # Entries sorted, headers normalised, gzip without a timestamp.
    data = first.archive.read_bytes()
    assert data[4:8] == b"\0\0\0\0"
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names) and names[0] == "dl-bench-1.0.0"
    for member in members:
        assert (member.mtime, member.uid, member.gid, member.uname, member.gname) == (
            0, 0, 0, "", "")
        assert member.mode == (0o755 if member.isdir() else 0o644)
    assert gzip.decompress(data)  # a plain gzip stream


def test_tarball_bytes_do_not_depend_on_insertion_order():
    files = {"b.txt": b"2", "a/x.txt": b"1", "manifest.json": b"{}"}
    reordered = dict(reversed(list(files.items())))
    assert tar_gz_bytes("n-1.0.0", files) == tar_gz_bytes("n-1.0.0", reordered)


def test_build_refuses_failing_gates_unless_allowed(workspace, store, tmp_path):
    with pytest.raises(ReleaseError, match="release blocked: .* --allow-failing"):
        bundle.build(store, workspace, "1.0.0", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert problem_store.get(store, "soft_dice_loss").status == "ready"
    result = cli(workspace, "release", "build", "--version", "1.0.0", "--out",
                 str(tmp_path / "out"), "--allow-failing", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["allow_failing"] is True and data["failing"]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["allow_failing"] is True
    assert {f["gate"] for f in manifest["failing"]} == {
        "reference_passes", "provenance_known", "tests_discriminate", "reference_stable"}
    assert "--allow-failing" in (tmp_path / "out" / "README.md").read_text()


def test_build_cli_refusal_is_one_line(workspace, tmp_path):
    result = cli(workspace, "release", "build", "--version", "1.0.0", "--out", str(tmp_path / "o"))
    assert result.exit_code == 1
    assert result.stderr.startswith("error: release blocked:") and result.stderr.count("\n") == 1


def test_build_marks_problems_released_with_audit_and_files(built, store):
    ws_problems = Path(store.path).parent.parent / "problems"
    for problem in problem_store.all_problems(store):
        assert problem.status == "released"
        toml = (ws_problems / problem.id / "problem.toml").read_text()
        assert 'status = "released"' in toml
        actions = [(h["action"], h["field"], h["after"])
                   for h in store.history("problem", problem.id)]
        assert ("update", "status", "released") in actions
        assert ("release", "version", "seed 1.0.0") in actions
    release = store.one("SELECT * FROM releases")
    assert (release["name"], release["version"]) == ("seed", "1.0.0")
    assert release["archive_sha256"] == built.archive_sha256
    count = store.one("SELECT COUNT(*) AS n FROM release_problems")["n"]
    assert count == built.problems
    # load after the build sees no change: the files say what the database says.
    result = cli_load(store)
    assert result["loaded"] == 0


def cli_load(store) -> dict:
    root = Path(store.path).parent.parent
    result = CliRunner().invoke(main, ["--workspace", str(root), "load", "--json"])
    return json.loads(result.output)


def test_same_version_with_other_content_is_refused(built, ready, store, tmp_path):
    before = problem_store.get(store, "soft_dice_loss").prompt
    problem_store.update_fields(store, "soft_dice_loss", prompt=before + "\nChanged.\n")
    with pytest.raises(ReleaseError, match="already built with different content"):
        bundle.build(store, ready, "1.0.0", tmp_path / "again", name="seed")
    with pytest.raises(ReleaseError, match="X.Y.Z"):
        bundle.build(store, ready, "1.0", tmp_path / "again", name="seed")


def test_out_folder_with_other_files_is_refused(ready, store, tmp_path):
    out = tmp_path / "busy"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ReleaseError, match="not empty"):
        bundle.build(store, ready, "1.0.0", out)
    assert (out / "notes.txt").read_text() == "mine"


def test_samples_appear_in_results_and_pass_at_k(ready, store, tmp_path):
    rows = []
    for problem in problem_store.all_problems(store)[:2]:
        for index in range(5):
            rows.append({"task_id": problem.id, "solution": problem.solution,
                         "model": "tiny-lm", "sample_index": index})
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = import_files(store, [path])
    assert report.imported == 10
    for sample in store.query("SELECT id, problem_id, code_sha256, sample_index FROM samples"):
        outcome = "passed" if sample["sample_index"] < 3 else "failed"
        record(store, RunResult(job_id=f"j{sample['id']}", problem_id=sample["problem_id"],
                                outcome=outcome), "sample", sample["code_sha256"],
               sample_id=sample["id"])
    failing = store.one("SELECT id FROM samples WHERE sample_index = 4 ORDER BY id")["id"]
    review_labels.label(store, failing, "ann1", pairs=[("5", "misses the empty input")])
    review_labels.label(store, failing, "ann2", verdict="benchmark-defect")
    review_labels.adjudicate(store, failing, accept="ann1")
    built = bundle.build(store, ready, "1.0.0", tmp_path / "out")
    reviews = [r for r in read_jsonl(built.out / "annotations.jsonl") if r["type"] != "labels"]
    assert [(r["type"], r.get("annotator") or r.get("adjudicator"), r["verdict"])
            for r in reviews] == [("review", "ann1", "bug"),
                                  ("review", "ann2", "benchmark-defect"),
                                  ("review_final", "tester", "bug")]
    assert reviews[0]["pairs"][0]["category"] == "5" and reviews[0]["model"] == "tiny-lm"
    results = read_jsonl(built.out / "results.jsonl")
    samples = [r for r in results if r["solution_kind"] == "sample"]
    assert len(samples) == 10 and {r["model"] for r in samples} == {"tiny-lm"}
    readme = (built.out / "README.md").read_text()
    # 3 of 5 pass on both problems: pass@1 = 60.0, pass@5 = 100.0.
    assert "| tiny-lm | 2 | 10 | 60.0 | 100.0 | - |" in readme
    assert verify(built.out).ok


# -- verify -----------------------------------------------------------------------------------

def test_verify_accepts_folder_and_archive(built):
    for target in (built.out, built.archive):
        report = verify(target)
        assert report.ok, [str(i) for i in report.issues]
        assert report.files_checked == len(json.loads(
            (built.out / "manifest.json").read_text())["files"])
    result = CliRunner().invoke(main, ["release", "verify", str(built.out), "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["ok"] is True


def _tampered_copy(built, tmp_path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(built.out, copy)
    for archive in copy.glob("*.tar.gz*"):
        archive.unlink()
    return copy


def test_verify_detects_a_changed_file(built, tmp_path):
    copy = _tampered_copy(built, tmp_path)
    path = copy / "problems.jsonl"
    path.write_bytes(path.read_bytes().replace(b"torch", b"torcH", 1))
    (copy / "LICENSES" / "extra.txt").write_text("sneaked in")
    (copy / "taxonomy.json").unlink()
    result = CliRunner().invoke(main, ["release", "verify", str(copy), "--json"])
    assert result.exit_code == 1
    issues = {(i["file"], i["message"].split(" ")[0]) for i in json.loads(result.output)["issues"]}
    assert ("problems.jsonl", "sha256") in issues
    assert ("LICENSES/extra.txt", "not") in issues
    assert ("taxonomy.json", "listed") in issues


def test_verify_reports_a_bad_row_by_line_even_with_a_fixed_manifest(built, tmp_path):
    copy = _tampered_copy(built, tmp_path)
    rows = read_jsonl(copy / "problems.jsonl")
    rows[2]["canonical_solution"] += "\n# backdoor\n"
    del rows[4]["libs"]
    data = "".join(jsonl_line(r) for r in rows).encode()
    (copy / "problems.jsonl").write_bytes(data)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["files"]["problems.jsonl"] = {"sha256": hashlib.sha256(data).hexdigest(),
                                           "size": len(data)}
    (copy / "manifest.json").write_text(json.dumps(manifest))
    report = verify(copy)
    found = {(i.file, i.row): i.message for i in report.issues}
    assert found[("problems.jsonl", 3)] == "content_sha256 does not match the row's content"
    assert found[("problems.jsonl", 5)].startswith("missing field(s): libs")
    text = CliRunner().invoke(main, ["release", "verify", str(copy)])
    assert text.exit_code == 1 and "problems.jsonl:3: content_sha256" in text.stderr


def test_verify_detects_a_tampered_archive(built, tmp_path):
    from curator.archives import read_tar_gz

    prefix, files = read_tar_gz(built.archive)
    files["README.md"] = files["README.md"] + b"\nextra\n"
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(tar_gz_bytes(prefix, files))
    report = verify(bad)
    assert [(i.file, i.message.split(" ")[0]) for i in report.issues] == [("README.md", "size"),
                                                                           ("README.md", "sha256")]
    # The archive beside a folder must match the folder and its .sha256.
    copy = tmp_path / "folder"
    shutil.copytree(built.out, copy)
    (copy / built.archive.name).write_bytes(bad.read_bytes())
    messages = [str(i) for i in verify(copy).issues]
    assert any(m.startswith(f"{built.archive.name}.sha256: does not match") for m in messages)
    assert f"{built.archive.name}:README.md: differs from the folder" in messages


# -- diff -------------------------------------------------------------------------------------

def test_diff_lists_added_removed_changed(built, ready, store, tmp_path):
    old_prompt = problem_store.get(store, "soft_dice_loss").prompt
    problem_store.update_fields(store, "soft_dice_loss", prompt="A new prompt.\n\n"
                                + old_prompt)
    problem_store.update_fields(store, "pairwise_box_iou", stage="evaluation")
    problem_store.update_fields(store, "nms_single_class", status="retired")
    new = problem_store.get(store, "xywh_to_xyxy_clipped")
    new.id, new.status = "xywh_copy_for_diff", "ready"
    new.prompt = "Convert boxes, a fresh prompt.\n\n" + new.prompt
    new.solution += "\n\ndef _unused_helper(values):\n    return [v * 2 for v in values if v]\n"
    problem_store.save(store, new)
    for pid in ("soft_dice_loss", "pairwise_box_iou", "xywh_copy_for_diff"):
        record_reference(store, problem_store.get(store, pid))
        record_validation(store, problem_store.get(store, pid))
    ws = ready.__class__(ready.root, ready.db_path, {"release": {
        "license": "MIT", "near_duplicate_threshold": 0.99}})
    second = bundle.build(store, ws, "1.1.0", tmp_path / "next", name="seed")
    result = diff(built.out, second.archive)
    assert result.added == ["xywh_copy_for_diff"]
    assert result.removed == ["nms_single_class"]
    changed = {c["id"]: c for c in result.changed}
    assert changed["soft_dice_loss"]["changes"] == ["prompt"]
    assert changed["pairwise_box_iou"]["changes"] == ["labels"]
    assert changed["pairwise_box_iou"]["labels"] == {"stage": ["model", "evaluation"]}
    assert result.unchanged == built.problems - 3
    out = CliRunner().invoke(main, ["release", "diff", str(built.out), str(second.out), "--json"])
    assert out.exit_code == 0 and json.loads(out.output)["added"] == ["xywh_copy_for_diff"]
    text = CliRunner().invoke(main, ["release", "diff", str(built.out), str(second.out)])
    assert "### Added (1)" in text.output and "- pairwise_box_iou: labels" in text.output


# -- import-release round trip ------------------------------------------------------------------

def test_bundle_import_build_gives_the_same_problems_jsonl(built, tmp_path):
    target = init(tmp_path / "fresh")
    result = CliRunner().invoke(main, ["--workspace", str(target.root), "import-release",
                                       str(built.archive), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["imported"] == built.problems and data["skipped"] == []
    (target.root / "curator.toml").write_text('[release]\nlicense = "MIT"\n')
    result = CliRunner().invoke(main, ["--workspace", str(target.root), "release", "build",
                                       "--version", "1.0.0", "--out", str(tmp_path / "again"),
                                       "--name", "seed", "--allow-failing", "--json"])
    assert result.exit_code == 0, result.output
    same_problems(tmp_path / "again" / "problems.jsonl", built.out / "problems.jsonl")
    assert (tmp_path / "again" / "dlbench.csv").read_bytes() == \
        (built.out / "dlbench.csv").read_bytes()
    # The problems are real problem folders, with the titles carried in annotations.
    with Store(target.db_path, "tester") as store:
        problem = problem_store.get(store, "soft_dice_loss")
        assert problem.title and (target.problems_dir / "soft_dice_loss" / "solution.py").is_file()
        origin = store.one("SELECT origin, origin_key FROM problem_imports WHERE problem_id = ?",
                           ("soft_dice_loss",))
        assert origin == {"origin": "release", "origin_key": "seed-1.0.0"}
    again = CliRunner().invoke(main, ["--workspace", str(target.root), "import-release",
                                      str(built.out), "--json"])
    data = json.loads(again.output)
    assert data["imported"] == 0
    assert all("already present, unchanged" in s["reason"] for s in data["skipped"])


def test_import_release_refuses_a_tampered_bundle(built, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(built.out, copy)
    (copy / "README.md").write_text("changed")
    target = init(tmp_path / "fresh")
    result = CliRunner().invoke(main, ["--workspace", str(target.root), "import-release",
                                       str(copy)])
    assert result.exit_code == 1 and "does not verify" in result.stderr


def test_build_keeps_unloaded_edits_in_problem_toml(ready, store, tmp_path):
    path = ready.problems_dir / "soft_dice_loss" / "problem.toml"
    edited = path.read_text().replace('title = "', 'title = "Edited: ', 1)
    path.write_text(edited)
    bundle.build(store, ready, "1.0.0", tmp_path / "out")
    text = path.read_text()
    assert text == edited.replace('status = "ready"', 'status = "released"')
    # The database still has the old title until the edit is loaded; load then sees it.
    assert not problem_store.get(store, "soft_dice_loss").title.startswith("Edited")
    assert cli_load(store)["loaded_ids"] == ["soft_dice_loss"]
    problem = problem_store.get(store, "soft_dice_loss")
    assert problem.title.startswith("Edited: ") and problem.status == "released"


def test_repo_backed_problem_round_trips(ready, store, tmp_path):
    source = {"repo": "https://github.com/kornia/kornia",
              "commit": "0123456789abcdef0123456789abcdef01234567",
              "path": "kornia/losses/dice.py", "symbol": "soft_dice_loss", "lines": "10-40",
              "license": "Apache-2.0"}
    problem_store.update_fields(store, "soft_dice_loss", source=source, tests=None,
                                test_node_ids=["tests/test_dice.py::TestDice"])
    record_reference(store, problem_store.get(store, "soft_dice_loss"))
    record_validation(store, problem_store.get(store, "soft_dice_loss"))
    built = bundle.build(store, ready, "2.0.0", tmp_path / "out")
    row = next(r for r in read_jsonl(built.out / "problems.jsonl")
               if r["task_id"] == "dl-bench/soft_dice_loss")
    assert row["source"] == source and row["test"] is None
    assert row["test_node_ids"] == ["tests/test_dice.py::TestDice"]
    notice = (built.out / "LICENSES" / "kornia_kornia.txt").read_text()
    assert "Apache-2.0" in notice and source["commit"] in notice and "soft_dice_loss" in notice
    csv_row = next(r for r in csv.DictReader(io.StringIO((built.out / "dlbench.csv").read_text()))
                   if r["function"] == "soft_dice_loss")
    assert (csv_row["repo"], csv_row["ground Truth"], csv_row["test_cases"]) == (
        "kornia", "kornia/losses/dice.py#L10-L40", "tests/test_dice.py::TestDice")
    target = init(tmp_path / "fresh")
    result = CliRunner().invoke(main, ["--workspace", str(target.root), "import-release",
                                       str(built.archive)])
    assert result.exit_code == 0, result.output
    (target.root / "curator.toml").write_text('[release]\nlicense = "MIT"\n')
    result = CliRunner().invoke(main, ["--workspace", str(target.root), "release", "build",
                                       "--version", "2.0.0", "--out", str(tmp_path / "again"),
                                       "--allow-failing"])
    assert result.exit_code == 0, result.output
    same_problems(tmp_path / "again" / "problems.jsonl", built.out / "problems.jsonl")
