"""The app's plain-Python parts: filter language, code checks, recovery, keymap, queries,
and the synthetic workspace generator."""

from __future__ import annotations

import json

import pytest

from curator import config as config_file
from curator import synthetic
from curator.errors import CuratorError
from curator.evaluation import samples as sample_files
from curator.problem import validate
from curator.pysource.formatting import FormatError, format_python
from curator.pysource.syntax import syntax_problem
from curator.store import Store
from curator.store import candidates as candidate_store
from curator.store import problems as problem_store
from curator.tui import filtering, queries, recovery
from curator.tui.screens import stats as stats_screen

# -- filter language -------------------------------------------------------------------


def test_filter_splits_text_and_terms():
    flt = filtering.parse("focal stage:model status:draft,ready -task:general loss")
    assert flt.text == "focal loss"
    assert flt.include == {"stage": {"model"}, "status": {"draft", "ready"}}
    assert flt.exclude == {"task": {"general"}}
    assert not flt.warnings


def test_filter_prefixes_none_and_aliases():
    assert filtering.parse("stage:mod").include == {"stage": {"model"}}
    assert filtering.parse("task:re").include == {"task": {"regression", "recommendation"}}
    assert filtering.parse("data:none").include == {"data": {""}}
    assert filtering.parse("outcome:fail").include == {"outcome": {"failed"}}
    assert filtering.parse("stage:").empty   # still typing: no constraint yet


def test_filter_reports_unknown_keys_and_values():
    flt = filtering.parse("colour:red stage:banana")
    assert any("unknown filter key 'colour'" in w for w in flt.warnings)
    assert any("stage:banana matches no value" in w for w in flt.warnings)
    assert flt.include == {"stage": set()}   # matches nothing, visibly


def test_filter_waits_for_a_second_letter_of_text():
    flt = filtering.parse("s stage:model")
    assert flt.text == "" and flt.hints


def test_filter_apply():
    rows = [{"id": "a", "stage": "model", "status": "draft", "outcome": ""},
            {"id": "b", "stage": "", "status": "ready", "outcome": "failed"},
            {"id": "c", "stage": "model", "status": "retired", "outcome": "passed"}]
    def ids(q):
        return [r["id"] for r in filtering.apply(rows, filtering.parse(q))]

    assert ids("stage:model") == ["a", "c"]
    assert ids("stage:model -status:retired") == ["a"]
    assert ids("stage:none") == ["b"]
    assert ids("run:none") == ["a"]
    assert ids("run:failed,passed") == ["b", "c"]



def test_filter_value_lists_mix_prefixes_none_and_stray_commas():
    assert filtering.parse("status:draft,,ready").include == {"status": {"draft", "ready"}}
    assert filtering.parse("stage:model,tra").include == {"stage": {"model", "training"}}
    assert filtering.parse("task:none,re").include == {
        "task": {"", "regression", "recommendation"}}
    assert filtering.parse("stage:,").empty   # still typing: no constraint yet
    assert filtering.parse("Stage:MODEL").include == {"stage": {"model"}}


def test_filter_unfinished_term_does_not_drop_the_rest():
    flt = filtering.parse("stage: run:failed focal")
    assert flt.include == {"outcome": {"failed"}} and flt.text == "focal"


def test_filter_warnings_list_the_choices():
    flt = filtering.parse("KIND:X colour:red status:ready:x")   # keys and values fold case
    assert flt.warnings == [
        "kind:x matches no value (one of function, method, none)",
        "unknown filter key 'colour' (use stage, task, data, status, kind, run, valid)",
        # the key ends at the first colon; values never hold one
        "status:ready:x matches no value (one of draft, ready, released, retired, none)",
    ]
    assert flt.include == {"kind": set(), "status": set()}


def test_filter_two_letters_are_enough_for_text():
    flt = filtering.parse("ab x")
    assert flt.text == "ab"
    assert flt.hints == ["type 2+ letters to search text"]
    assert filtering.parse("ab").hints == []


def test_filter_excluding_none_keeps_rows_with_the_field_set():
    rows = [{"id": "a", "stage": "model"}, {"id": "b", "stage": ""}, {"id": "c"}]
    assert filtering.apply(rows, filtering.parse("-stage:none")) == [rows[0]]
    assert filtering.apply(rows, filtering.parse("")) == rows
    assert filtering.apply(rows, filtering.parse("focal")) == rows   # text: the index's job


# -- code helpers ------------------------------------------------------------------------


def test_syntax_problem_names_file_line_and_column():
    assert syntax_problem("x = 1\n", "solution.py") is None
    issue = syntax_problem("x = 1\ndef f(:\n    pass\n", "solution.py")
    assert (issue.filename, issue.line) == ("solution.py", 2)
    assert str(issue).startswith("solution.py line 2, column")


def test_format_python():
    assert format_python("x=( 1,2 )\n") == "x = (1, 2)\n"
    with pytest.raises(FormatError):
        format_python("def f(:\n")


# -- recovery -------------------------------------------------------------------------


def test_recovery_write_and_find(tmp_path):
    assert recovery.write(tmp_path, "ann", {"p1": {}}) is None   # nothing worth saving
    path = recovery.write(tmp_path, "ann/x", {"p1": {"prompt": "text ü"}, "p2": {}},
                          reason="boom")
    assert path.parent == tmp_path / "recovery" and "/" not in path.name
    payload = json.loads(path.read_text(encoding="utf-8"))
    assert payload["drafts"] == {"p1": {"prompt": "text ü"}} and payload["reason"] == "boom"
    assert recovery.find(tmp_path, "p1") == [(path, {"prompt": "text ü"})]
    assert recovery.find(tmp_path, "p2") == []


# -- keymap -------------------------------------------------------------------------------


def test_keymap_from_curator_toml():
    assert config_file.from_dict({}).keymap == {}
    assert config_file.from_dict({"keymap": {"problems.filter": "f, slash",
                                             "problem.save": ["ctrl+s", "f10"]}}).keymap == {
        "problems.filter": "f, slash", "problem.save": "ctrl+s,f10"}
    with pytest.raises(CuratorError, match="problem.save"):
        config_file.from_dict({"keymap": {"problem.save": 3}})
    with pytest.raises(CuratorError, match=r"\[keymap\]"):
        config_file.from_dict({"keymap": {"problem.save": " "}})
    with pytest.raises(CuratorError, match="keymap must be a"):
        config_file.from_dict({"keymap": "ctrl+s"})


# -- queries ------------------------------------------------------------------------------


def test_queries_read_runs_and_suggestions(store):
    pid = store.one("SELECT id FROM problems ORDER BY id LIMIT 1")["id"]
    assert queries.last_outcomes(store) == {}
    with store.transaction():
        for outcome in ("failed", "passed"):
            store.execute(
                "INSERT INTO runs (problem_id, solution_kind, solution_hash, outcome, tests, "
                "started_at, actor, job_id) VALUES (?, 'reference', 'h', ?, "
                "'[{\"id\": \"t1\", \"outcome\": \"passed\"}]', '2026-01-01', 'tester', 'j')",
                (pid, outcome))
        store.execute(
            "INSERT INTO runs (problem_id, solution_kind, solution_hash, outcome, started_at, "
            "actor, job_id) VALUES (?, 'sample', 'h', 'error', '2026-01-02', 'tester', 'j')",
            (pid,))
        for rule, weight in (("name:loss", 0.5), ("api:nn.Module", 0.25)):
            store.execute(
                "INSERT INTO label_suggestions (problem_id, axis, slug, rule, evidence, weight, "
                "created_at) VALUES (?, 'stage', 'model', ?, 'seen', ?, '2026-01-01')",
                (pid, rule, weight))
    assert queries.last_outcomes(store) == {pid: "passed"}   # latest reference run
    history = queries.run_history(store, pid)
    assert [r["outcome"] for r in history] == ["error", "passed", "failed"]
    assert history[1]["tests"] == [{"id": "t1", "outcome": "passed"}]
    [suggestion] = queries.label_suggestions(store, pid)
    assert (suggestion["axis"], suggestion["slug"], suggestion["score"]) == (
        "stage", "model", 0.75)
    assert "name:loss: seen" in suggestion["reason"]


def test_queries_on_a_fresh_database(tmp_path):
    with Store(tmp_path / "x.sqlite") as store:
        assert queries.last_outcomes(store) == {}
        assert queries.run_history(store, "p") == []
        assert queries.label_suggestions(store, "p") == []


def test_store_reads_behind_the_palette_and_the_stats_screen(store, tmp_path):
    ids = sorted(problem_store.all_ids(store))
    assert problem_store.any_stored(store) and len(ids) > 2
    assert [r["id"] for r in problem_store.find(store, ids[1].upper())] == [ids[1]]
    problem_store.update_fields(store, ids[2], title="A freshly edited title")
    assert problem_store.recently_updated(store, 1) == [
        {"id": ids[2], "title": "A freshly edited title"}]
    counts = problem_store.label_counts(store)
    assert {axis: sum(c.values()) for axis, c in counts.items()} == {
        "stage": len(ids), "task": len(ids), "data": len(ids)}
    stage = problem_store.get(store, ids[0]).stage
    problem_store.update_fields(store, ids[0], status="retired")
    assert problem_store.label_counts(store)["stage"].get(stage, 0) == \
        counts["stage"][stage] - 1
    assert store.label("stage", stage)["slug"] == stage
    assert store.label("stage", "no-such-label") is None
    assert stats_screen.samples_summary(store) == "no samples yet: i imports a file"
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({"task_id": ids[1], "solution": "x = 1\n", "model": m})
                            + "\n" for m in ("m1", "m2", "m2")), encoding="utf-8")
    sample_files.import_files(store, [path])
    assert stats_screen.samples_summary(store) == \
        "3 sample(s) of 2 model(s), 3 not evaluated: e evaluates"


def test_store_reads_on_a_fresh_database(tmp_path):
    with Store(tmp_path / "x.sqlite") as store:
        assert not problem_store.any_stored(store)
        assert problem_store.find(store, "x") == []
        assert problem_store.label_counts(store) == {"stage": {}, "task": {}, "data": {}}
        assert candidate_store.status_counts(store) == {}


# -- synthetic workspace --------------------------------------------------------------------


def test_synthetic_problems_are_valid_deterministic_and_audited(tmp_path):
    first = [p.to_dict() for p in synthetic.make_problems(50, seed=3)]
    assert first == [p.to_dict() for p in synthetic.make_problems(50, seed=3)]
    assert all(not validate(p) for p in synthetic.make_problems(50, seed=3))
    ws = synthetic.create_workspace(tmp_path / "ws", 40, seed=3, write_files=True)
    with Store(ws.db_path) as store:
        rows = problem_store.list_rows(store)
        assert len(rows) == 40 and len({r["id"] for r in rows}) == 40
        assert store.one("SELECT COUNT(*) AS n FROM audit WHERE action = 'create'")["n"] == 40
        assert len({r["stage"] for r in rows}) > 2 and len({r["status"] for r in rows}) > 1
    assert len(list(ws.problems_dir.iterdir())) == 40


def test_a_synthetic_reference_passes_its_own_tests(tmp_path):
    problem = next(synthetic.make_problems(1, seed=11))
    namespace: dict = {}
    exec(compile(problem.solution, "solution.py", "exec"), namespace)  # noqa: S102 (our code)
    tests = problem.tests.replace(f"from solution import {problem.entry_point}\n", "")
    exec(compile(tests, "test_solution.py", "exec"), namespace)  # noqa: S102
    called = [name for name in list(namespace) if name.startswith("test_")]
    for name in called:
        namespace[name]()
    assert len(called) >= 3


def test_cli_dev_synth_creates_a_workspace(tmp_path):
    from click.testing import CliRunner

    from curator.cli import main

    result = CliRunner().invoke(main, ["dev", "synth", str(tmp_path / "big"), "--count", "25",
                                       "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["problems"] == 25
    listed = CliRunner().invoke(main, ["--workspace", str(tmp_path / "big"), "problems",
                                       "list", "--json"])
    assert len(json.loads(listed.output)) == 25
    again = CliRunner().invoke(main, ["dev", "synth", str(tmp_path / "big")])
    assert again.exit_code == 1 and "already has a database" in again.output
