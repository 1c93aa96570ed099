"""`release verify --rerun`: canonical solutions run in the sandbox through the engine."""

from __future__ import annotations

import hashlib
import json

import pytest
from click.testing import CliRunner
from release_support import make_releasable

from curator.cli import main
from curator.release import bundle
from curator.release.rows import content_sha256, jsonl_line
from curator.store import problems as problem_store

KEEP = ("xywh_to_xyxy_clipped", "sliding_window_series")


@pytest.mark.slow
def test_rerun_reports_a_solution_that_fails_its_tests(workspace, store, tmp_path):
    for problem in problem_store.all_problems(store):
        if problem.id not in KEEP:
            problem_store.update_fields(store, problem.id, status="draft")
    ws = make_releasable(workspace, store)
    built = bundle.build(store, ws, "1.0.0", tmp_path / "out")

    # A consistent bundle (hashes and manifest fixed up) whose second solution is wrong:
    # only running it can tell.
    out = built.out
    built.archive.unlink()
    rows = [json.loads(line) for line in (out / "problems.jsonl").read_text().splitlines()]
    assert [r["task_id"].split("/")[1] for r in rows] == sorted(KEEP)
    rows[1]["canonical_solution"] = rows[1]["canonical_solution"].replace(
        "return", "return None and", 1)
    rows[1]["content_sha256"] = content_sha256(rows[1])
    data = "".join(jsonl_line(r) for r in rows).encode()
    (out / "problems.jsonl").write_bytes(data)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["files"]["problems.jsonl"] = {"sha256": hashlib.sha256(data).hexdigest(),
                                           "size": len(data)}
    (out / "manifest.json").write_text(json.dumps(manifest))

    plain = CliRunner().invoke(main, ["release", "verify", str(out), "--json"])
    assert plain.exit_code == 0, plain.output
    result = CliRunner().invoke(main, ["--workspace", str(ws.root), "release", "verify",
                                       str(out), "--rerun", "--json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert report["rerun"]["jobs"] == 2
    assert report["rerun"]["outcomes"]["passed"] == 1
    [issue] = report["issues"]
    assert issue["file"] == "problems.jsonl" and issue["row"] == 2
    assert issue["message"].startswith(f"dl-bench/{rows[1]['task_id'].split('/')[1]}: "
                                       "canonical solution ")


def test_verify_summary_is_text_not_a_repr():
    from curator.release.verify import VerifyReport

    report = VerifyReport("b", name="dl-bench", version="1.0.0", files_checked=7,
                          rows_checked=2, rerun={"jobs": 2, "outcomes": {"failed": 1,
                                                                          "passed": 1}})
    text = report.summary()
    assert text == ("dl-bench 1.0.0: 7 file(s), 2 row(s) checked; re-ran 2 solution(s): "
                    "1 failed, 1 passed, ok")
    assert "{" not in text and "'" not in text
