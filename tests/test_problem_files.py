"""problems/<id>/ folders <-> database: round trips, idempotence, bad input, kill-safety."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curator import sync
from curator.labels import DATA, STAGES, TASKS
from curator.problem import Problem
from curator.problem_files import read_problem, render_toml, write_problem
from curator.store import Store
from curator.store import problems as problem_store


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def make_problem(folder: Path, pid: str, **overrides) -> Path:
    d = folder / pid
    d.mkdir(parents=True)
    meta = dict(id=pid, title="T", entry_point="f", kind="function", stage="model",
                task="general", data="other", framework="pytorch", status="draft")
    meta.update(overrides)
    d.joinpath("problem.toml").write_text(
        "".join(f'{k} = "{v}"\n' for k, v in meta.items()), encoding="utf-8")
    d.joinpath("prompt.md").write_text("Write f.\n", encoding="utf-8")
    d.joinpath("solution.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    d.joinpath("test_solution.py").write_text(
        "from solution import f\n\ndef test_f():\n    assert f() == 1\n", encoding="utf-8")
    return d


def test_seed_load_then_dump_is_byte_identical(tmp_path, seed_dir):
    problems = tmp_path / "problems"
    shutil.copytree(seed_dir, problems)
    before = tree_bytes(problems)
    with Store(tmp_path / "c.sqlite", "t") as store:
        report = sync.load(store, problems)
        assert not report.errors and len(report.loaded) == len(list(problems.iterdir()))
        shutil.rmtree(problems)
        sync.dump(store, problems)
    assert tree_bytes(problems) == before


def test_reload_of_unchanged_folder_changes_nothing(workspace, store):
    audit_before = store.one("SELECT count(*) AS n FROM audit")["n"]
    report = sync.load(store, workspace.problems_dir)
    assert report.loaded == [] and len(report.unchanged) == len(list(workspace.problems_dir.iterdir()))
    assert store.one("SELECT count(*) AS n FROM audit")["n"] == audit_before


def test_changed_file_updates_only_what_changed(workspace, store):
    pid = sorted(p.name for p in workspace.problems_dir.iterdir())[0]
    prompt = workspace.problems_dir / pid / "prompt.md"
    prompt.write_text(prompt.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    report = sync.load(store, workspace.problems_dir)
    assert report.loaded == [pid] and report.changes[pid] == ["prompt"]
    rows = store.query("SELECT field FROM audit WHERE action = 'update'")
    assert [r["field"] for r in rows] == ["prompt"]
    assert problem_store.get(store, pid).prompt.endswith("One more line.\n")


def test_database_edit_dumps_canonical_toml_and_reloads_unchanged(workspace, store):
    pid = sorted(p.name for p in workspace.problems_dir.iterdir())[0]
    problem_store.update_fields(store, pid, status="retired")
    sync.dump(store, workspace.problems_dir, [pid])
    problem, _ = read_problem(workspace.problems_dir / pid)
    assert problem.status == "retired"
    assert sync.load(store, workspace.problems_dir).loaded == []


def test_handwritten_toml_with_comments_survives_round_trip(tmp_path):
    problems = tmp_path / "problems"
    d = make_problem(problems, "p1")
    text = "# a comment kept verbatim\n" + d.joinpath("problem.toml").read_text() + \
        '\n[source]\nrepo = "https://example.org/x.git"\nlines = [3, 9]\n'
    d.joinpath("problem.toml").write_text(text, encoding="utf-8")
    d.joinpath("prompt.md").write_bytes(b"Windows line endings\r\nkept\r\n")
    before = tree_bytes(problems)
    with Store(tmp_path / "c.sqlite") as store:
        assert not sync.load(store, problems).errors
        shutil.rmtree(problems)
        sync.dump(store, problems)
    assert tree_bytes(problems) == before


label = st.sampled_from(("",) + STAGES)
text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(title=text, prompt=text, solution=text, tests=st.one_of(st.none(), text),
       stage=label, task=st.sampled_from(TASKS), data=st.sampled_from(DATA),
       node_ids=st.one_of(st.none(), st.lists(st.text(min_size=1, max_size=30).filter(
           lambda s: s.strip()), min_size=1, max_size=3)),
       source=st.one_of(st.none(), st.fixed_dictionaries(
           {"repo": text, "path": text, "symbol": text, "license": text})))
def test_write_read_round_trip_for_any_content(tmp_path_factory, title, prompt, solution, tests,
                                               stage, task, data, node_ids, source):
    if tests is None and not node_ids:
        tests = ""
    problem = Problem(id="p", entry_point="f", title=title, prompt=prompt, solution=solution,
                      tests=tests, stage=stage, task=task, data=data, test_node_ids=node_ids,
                      source=source)
    folder = tmp_path_factory.mktemp("rt")
    write_problem(problem, folder)
    again, raw = read_problem(folder / "p")
    assert again == problem
    assert raw == render_toml(problem)


# -- bad input: one clear line naming the file, and every valid problem still loads ----------

BAD_CASES = {
    "malformed_toml": (lambda d: d.joinpath("problem.toml").write_text('id = "bad\n'),
                       "malformed TOML"),
    "unknown_label": (lambda d: d.joinpath("problem.toml").write_text(
        d.joinpath("problem.toml").read_text().replace('stage = "model"', 'stage = "modle"')),
        "unknown stage label 'modle'"),
    "missing_prompt": (lambda d: d.joinpath("prompt.md").unlink(), "missing prompt.md"),
    "id_mismatch": (lambda d: d.joinpath("problem.toml").write_text(
        d.joinpath("problem.toml").read_text().replace('id = "bad"', 'id = "other"')),
        "does not match its folder"),
    "non_utf8": (lambda d: d.joinpath("solution.py").write_bytes(b"x = '\xff\xfe'\n"),
                 "not valid UTF-8"),
    "bad_commit": (lambda d: d.joinpath("problem.toml").write_text(
        d.joinpath("problem.toml").read_text() + '\n[source]\ncommit = "abc123"\n'),
        "full hex SHA"),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_bad_problem_is_reported_and_the_rest_load(tmp_path, case):
    from click.testing import CliRunner

    from curator.cli import main

    problems = tmp_path / "problems"
    make_problem(problems, "good")
    bad = make_problem(problems, "bad")
    breaker, expected = BAD_CASES[case]
    breaker(bad)
    (tmp_path / "db").mkdir()
    result = CliRunner().invoke(main, ["--workspace", str(tmp_path), "load"])
    assert result.exit_code == 1
    error_lines = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
    assert len(error_lines) == 1
    assert expected in error_lines[0] and str(bad) in error_lines[0]
    with Store(tmp_path / "db" / "curator.sqlite") as store:
        assert [r["id"] for r in problem_store.list_rows(store)] == ["good"]


def test_duplicate_id_is_reported(tmp_path):
    problems = tmp_path / "problems"
    make_problem(problems, "a")
    d = make_problem(problems, "b")
    # A copy of a's folder under another name claims a's id; an id must name its folder.
    d.joinpath("problem.toml").write_text(
        d.joinpath("problem.toml").read_text().replace('id = "b"', 'id = "a"'))
    with Store(tmp_path / "c.sqlite") as store:
        report = sync.load(store, problems)
    assert [(e["path"], e["message"]) for e in report.errors] == [
        (str(d / "problem.toml"), "id 'a' does not match its folder name 'b'")]
    assert report.loaded == ["a"]


def test_load_json_summary_shape(tmp_path):
    from click.testing import CliRunner

    from curator.cli import main

    make_problem(tmp_path / "problems", "good")
    make_problem(tmp_path / "problems", "bad").joinpath("prompt.md").unlink()
    result = CliRunner().invoke(main, ["--workspace", str(tmp_path), "load", "--json"])
    import json

    data = json.loads(result.stdout)
    assert data["loaded"] == 1 and data["unchanged"] == 0
    assert data["errors"][0]["path"].endswith("prompt.md")
    assert "missing prompt.md" in data["errors"][0]["message"]


KILLED_LOADER = r"""
import sys, time
from curator import sync
from curator.store import Store
store = Store(sys.argv[1], "loader")
def progress(done, total, label):
    if done == int(sys.argv[3]):
        print("MIDWAY", flush=True)
        time.sleep(60)
sync.load(store, sys.argv[2], progress=progress)
"""


def test_killed_load_leaves_database_as_before(tmp_path):
    problems = tmp_path / "problems"
    for i in range(300):
        make_problem(problems, f"p{i:03d}")
    db = tmp_path / "c.sqlite"
    with Store(db) as store:
        sync.load(store, problems)  # "before" state: 300 problems
    for i in range(300):
        (problems / f"p{i:03d}" / "prompt.md").write_text(f"changed {i}\n")
    proc = subprocess.Popen([sys.executable, "-c", KILLED_LOADER, str(db), str(problems), "150"],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "MIDWAY"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    with Store(db) as store:
        prompts = {r["prompt"] for r in store.query("SELECT prompt FROM problems")}
        assert prompts == {"Write f.\n"}
        assert store.one("SELECT count(*) AS n FROM audit WHERE action = 'update'")["n"] == 0
        # and the interrupted load can simply be run again
        assert len(sync.load(store, problems).loaded) == 300
