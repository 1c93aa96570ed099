"""Text from runs reaches people with its control characters spelled out, never obeyed."""

from __future__ import annotations

import json

from click.testing import CliRunner

from curator import sync
from curator.cli import main
from curator.display import visible
from curator.store import Store

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\r\x08\u202eevil\x9b"


def test_visible_spells_out_every_control_character():
    shown = visible(HOSTILE)
    assert not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or c == "\u202e" for c in shown)
    assert shown == ("\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mred\\x0d\\x08\\u202eevil\\x9b")


def test_visible_keeps_lines_unless_asked_for_one_line():
    assert visible("a\n\tb") == "a\n\tb"
    assert visible("a\n\tb", multiline=False) == "a\\x0a\\x09b"
    assert visible(None) == "" and visible("plain [bold]text[/]") == "plain [bold]text[/]"


def test_run_reason_column_shows_escapes_and_json_keeps_them(workspace):
    pid = "xywh_to_xyxy_clipped"
    solution = workspace.problems_dir / pid / "solution.py"
    solution.write_text("def xywh_to_xyxy(boxes, image_size):\n"
                        f"    raise ValueError({HOSTILE!r})\n", encoding="utf-8")
    with Store(workspace.db_path, "tester") as store:
        assert not sync.load(store, workspace.problems_dir).errors
    base = ["--workspace", str(workspace.root)]
    table = CliRunner().invoke(main, [*base, "run", pid, "--workers", "1"])
    assert table.exit_code == 1, table.output
    assert "\x1b" not in table.output and "\x07" not in table.output
    assert "\\x1b]0;pwned" in table.output
    data = json.loads(CliRunner().invoke(main, [*base, "run", pid, "--workers", "1",
                                                "--json"]).output)
    reasons = [run["reason"] for run in data["runs"]]
    assert any("\x1b]0;pwned\x07" in reason for reason in reasons), reasons


def test_a_tampered_run_is_stored_with_its_evidence(store):
    from curator.execution.job import RunResult
    from curator.store import runs

    result = RunResult("job1", "xywh_to_xyxy_clipped", "tampered", reason="the run tried "
                       "to change how it is judged: gc.get_objects",
                       evidence=["gc.get_objects", "_pytest.python.Function.runtest was "
                                 "replaced"])
    run_id = runs.record(store, result, "reference", runs.solution_hash("x"))
    row = runs.get(store, run_id)
    assert row["outcome"] == "tampered"
    assert row["evidence"] == result.evidence
    assert runs.history(store, "xywh_to_xyxy_clipped")[0]["outcome"] == "tampered"
