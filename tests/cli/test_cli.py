"""The headless CLI: init, load, dump, problems list/show, labels, --version, actor."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from curator import __version__
from curator.cli import main
from curator.store import Store


def invoke(ws, *args, user=None):
    base = ["--workspace", str(ws.root)] + (["--user", user] if user else [])
    return CliRunner().invoke(main, [*base, *args])


def test_version():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def test_init_creates_workspace_and_database(tmp_path):
    result = CliRunner().invoke(main, ["init", str(tmp_path / "new"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (tmp_path / "new" / "problems").is_dir()
    assert data["db"].endswith("curator.sqlite") and (tmp_path / "new" / "db" /
                                                       "curator.sqlite").exists()


def test_problems_list_json_rows_and_filters(workspace):
    rows = json.loads(invoke(workspace, "problems", "list", "--json").output)
    assert len(rows) == len(list(workspace.problems_dir.iterdir()))
    for key in ("id", "title", "kind", "entry_point", "stage", "task", "data", "status"):
        assert key in rows[0]
    some_stage = rows[0]["stage"]
    filtered = json.loads(invoke(workspace, "problems", "list", "--stage", some_stage,
                                 "--json").output)
    assert filtered and all(r["stage"] == some_stage for r in filtered)
    assert len(filtered) == sum(r["stage"] == some_stage for r in rows)


def test_problems_list_rejects_unknown_label_with_usage_error(workspace):
    result = invoke(workspace, "problems", "list", "--stage", "nonsense")
    assert result.exit_code == 2


def test_problems_show_json_and_missing_id(workspace):
    pid = sorted(p.name for p in workspace.problems_dir.iterdir())[0]
    data = json.loads(invoke(workspace, "problems", "show", pid, "--json").output)
    assert data["id"] == pid and data["solution"] and data["prompt"]
    missing = invoke(workspace, "problems", "show", "no-such-problem")
    assert missing.exit_code == 1 and "no-such-problem" in missing.stderr


def test_labels_json_has_definitions(workspace):
    rows = json.loads(invoke(workspace, "labels", "--json").output)
    assert {r["axis"] for r in rows} == {"stage", "task", "data"}
    assert all(r["definition"] for r in rows)


def test_user_option_is_recorded_in_the_audit_log(workspace):
    pid = sorted(p.name for p in workspace.problems_dir.iterdir())[0]
    path = workspace.problems_dir / pid / "prompt.md"
    path.write_text("new prompt\n", encoding="utf-8")
    assert invoke(workspace, "load", user="carol").exit_code == 0
    with Store(workspace.db_path) as store:
        assert store.history("problem", pid)[-1]["actor"] == "carol"


def test_dump_writes_database_state(workspace):
    pid = sorted(p.name for p in workspace.problems_dir.iterdir())[0]
    import shutil

    shutil.rmtree(workspace.problems_dir / pid)
    result = invoke(workspace, "dump", "--json")
    assert json.loads(result.output)["written"] == 1
    assert (workspace.problems_dir / pid / "solution.py").exists()


def test_console_script_runs_as_a_real_process(workspace):
    out = subprocess.run([sys.executable, "-m", "curator", "--workspace", str(workspace.root),
                          "problems", "list", "--json"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)


def test_problems_set_changes_database_files_and_audit(workspace):
    pid = sorted(p.name for p in workspace.problems_dir.iterdir())[0]
    result = invoke(workspace, "problems", "set", pid, "--status", "retired", "--json",
                    user="dora")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["changed"] == ["status"]
    assert 'status = "retired"' in (workspace.problems_dir / pid / "problem.toml").read_text()
    with Store(workspace.db_path) as store:
        last = store.history("problem", pid)[-1]
        assert (last["actor"], last["field"], last["after"]) == ("dora", "status", "retired")
    assert invoke(workspace, "problems", "set", pid).exit_code == 2


def test_labels_edit(workspace):
    assert invoke(workspace, "labels", "edit", "task", "general", "--name", "Generic").exit_code == 0
    rows = json.loads(invoke(workspace, "labels", "--json").output)
    assert [r["name"] for r in rows if r["slug"] == "general"] == ["Generic"]


def test_full_text_search_over_title_prompt_and_code(workspace):
    from curator.store import problems as problem_store

    with Store(workspace.db_path) as store:
        hits = [r["id"] for r in problem_store.list_rows(store, text="suppression")]
        assert "nms_single_class" in hits
        # code is indexed too: an identifier that appears only in a solution
        problem_store.update_fields(store, "nms_single_class",
                                    solution="def nms():\n    zzqx_marker = 1\n")
        assert [r["id"] for r in problem_store.list_rows(store, text="zzqx_mark")] == [
            "nms_single_class"]
        # the old text is gone from the index; odd punctuation is not an FTS syntax error
        assert problem_store.list_rows(store, text='"(*') == problem_store.list_rows(store)
    rows = json.loads(invoke(workspace, "problems", "list", "--search", "zzqx", "--json").output)
    assert [r["id"] for r in rows] == ["nms_single_class"]


def test_a_problem_becomes_ready_only_after_its_reference_passes(workspace):
    pid = "xywh_to_xyxy_clipped"
    assert invoke(workspace, "problems", "set", pid, "--status", "draft").exit_code == 0
    refused = invoke(workspace, "problems", "set", pid, "--status", "ready")
    assert refused.exit_code == 1 and "reference" in refused.stderr and pid in refused.stderr
    assert invoke(workspace, "run", pid, "--workers", "1").exit_code == 0
    assert invoke(workspace, "problems", "set", pid, "--status", "ready").exit_code == 0
    assert 'status = "ready"' in (workspace.problems_dir / pid / "problem.toml").read_text()


def test_every_command_module_is_reachable_from_the_lazy_table():
    import importlib
    import pkgutil

    import curator.cli as cli

    modules = {m.name for m in pkgutil.iter_modules(cli.__path__)} - {"context"}
    for name in modules:
        for command in importlib.import_module(f"curator.cli.{name}").COMMANDS:
            assert cli._COMMAND_MODULES.get(command.name) == name, command.name
    assert set(cli._COMMAND_MODULES.values()) == modules


def test_errors_are_one_line_even_when_a_library_says_more(workspace, tmp_path):
    junk = tmp_path / "junk.tar.gz"
    junk.write_text("not an archive\n")
    result = invoke(workspace, "release", "verify", str(junk))
    assert result.exit_code == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("error: ") and str(junk) in result.stderr
