"""Problem screen: edits reach the database, the files and the audit log; nothing is lost."""

from __future__ import annotations

import json

import pytest
from textual.widgets import TabbedContent, TextArea
from tui_support import *  # fixtures: app_for, no_blink, synth_workspace
from tui_support import open_problem, settle

from curator.store import problems as problem_store
from curator.tui.screens.dialogs import ChoiceModal, ErrorModal
from curator.tui.screens.problems import ProblemsScreen
from curator.tui.widgets.label_picker import LabelPicker

PID = "focal_loss_multiclass"


def audit_fields(store, problem_id):
    return [(r["actor"], r["action"], r["field"]) for r in store.history("problem", problem_id)]


async def test_edit_prompt_and_save_writes_db_files_and_audit(workspace, store, app_for):
    before = problem_store.get(store, PID)
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_problem(pilot, PID)
        editor = screen.query_one("#prompt-editor", TextArea)
        assert editor.has_focus
        editor.move_cursor(editor.document.end)
        await pilot.press("enter", *"Mind the ignore index.")
        assert screen.dirty_fields() == ["prompt"]
        assert "● unsaved: prompt" in str(screen.query_one("#problem-heading").render())
        assert app.drafts[PID]["prompt"].endswith("Mind the ignore index.")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert screen.dirty_fields() == []
        assert PID not in app.drafts

    after = problem_store.get(store, PID)
    assert after.prompt == before.prompt + "\nMind the ignore index."
    on_disk = (workspace.problems_dir / PID / "prompt.md").read_text(encoding="utf-8")
    assert on_disk == after.prompt
    assert ("tester", "update", "prompt") in audit_fields(store, PID)


async def test_number_keys_set_labels_undo_and_save_with_history(workspace, store, app_for):
    labels = {axis: [r["slug"] for r in store.labels(axis)] for axis in ("stage", "task")}
    before = problem_store.get(store, PID)
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_problem(pilot, PID)
        await pilot.press("alt+4")            # Labels tab, focus on the stage picker
        stage = screen.query_one("#pick-stage", LabelPicker)
        assert stage.has_focus
        # undo walks back label changes one at a time
        await pilot.press("1", "5")
        assert screen.current().stage == labels["stage"][4]
        await pilot.press("ctrl+z")
        assert screen.current().stage == labels["stage"][0]
        await pilot.press("ctrl+z")
        assert screen.current().stage == before.stage and screen.dirty_fields() == []

        await pilot.press("3")                # 3 = Training
        await pilot.press("right", "5")       # task picker, 5 = Time Series Prediction
        assert screen.current().stage == labels["stage"][2]
        assert screen.current().task == labels["task"][4]
        assert set(screen.dirty_fields()) == {"stage", "task"}
        await pilot.press("ctrl+s")
        await settle(pilot)

        # the History tab shows the audit rows just written, with the change as a diff
        await pilot.press("alt+6")
        await settle(pilot)
        pane = screen.query_one("#history-pane")
        assert [r["id"] for r in pane.rows] == [
            r["id"] for r in reversed(store.history("problem", PID))]
        assert {pane.rows[0]["field"], pane.rows[1]["field"]} == {"stage", "task"}
        assert pane.rows[0]["actor"] == "tester"

    after = problem_store.get(store, PID)
    assert (after.stage, after.task) == (labels["stage"][2], labels["task"][4])
    assert after.data == before.data
    toml = (workspace.problems_dir / PID / "problem.toml").read_text(encoding="utf-8")
    assert f'stage = "{after.stage}"' in toml and f'task = "{after.task}"' in toml
    fields = audit_fields(store, PID)
    assert ("tester", "update", "stage") in fields and ("tester", "update", "task") in fields


async def test_leaving_with_unsaved_edits_asks_and_cancel_keeps_them(workspace, store, app_for):
    before = problem_store.get(store, PID)
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_problem(pilot, PID)
        await pilot.press(*"Draft ")
        await pilot.press("escape", "escape")   # out of the editor, then leave the screen
        await settle(pilot)
        assert isinstance(app.screen, ChoiceModal)
        await pilot.press("escape")              # cancel
        await settle(pilot)
        assert app.screen is screen
        assert screen.query_one("#prompt-editor", TextArea).text.startswith("Draft ")

        await pilot.press("escape")
        await settle(pilot)
        await pilot.click("#discard")
        await settle(pilot)
        assert isinstance(app.screen, ProblemsScreen)
        assert PID not in app.drafts
    assert problem_store.get(store, PID).prompt == before.prompt


async def test_quit_with_unsaved_edits_offers_save(workspace, store, app_for):
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_problem(pilot, PID)
        await pilot.press(*"New first line.", "enter")
        await pilot.press("ctrl+q")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceModal)
        await pilot.click("#save")
        await settle(pilot)
    assert app.return_code == 0
    assert problem_store.get(store, PID).prompt.startswith("New first line.\n")
    assert (workspace.problems_dir / PID / "prompt.md").read_text(
        encoding="utf-8").startswith("New first line.\n")


async def test_code_editors_black_and_a_syntax_check_on_save(workspace, store, app_for):
    before = problem_store.get(store, PID)
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_problem(pilot, PID)
        await pilot.press("alt+2")
        editor = screen.query_one("#solution-editor", TextArea)
        assert editor.has_focus

        # ctrl+b formats with black as one undoable edit
        editor.load_text("def f( a,b ):\n  return a+b\n")
        await pilot.press("ctrl+b")
        assert editor.text == "def f(a, b):\n    return a + b\n"
        await pilot.press("ctrl+z")
        assert editor.text == "def f( a,b ):\n  return a+b\n"

        # a syntax error stops ctrl+s, says where, and leaves the cursor on it
        editor.load_text(before.solution)
        editor.move_cursor(editor.document.end)
        await pilot.press("enter", *"def x(:")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, ErrorModal)
        assert "solution.py line" in app.screen.message
        await pilot.press("escape")
        await settle(pilot)
        assert screen.query_one(TabbedContent).active == "solution"
        assert editor.cursor_location[0] == editor.document.line_count - 1
        assert screen.dirty_fields() == ["solution"]
    assert problem_store.get(store, PID).solution == before.solution


async def test_single_letters_type_into_editors_and_alt_arrows_walk_tabs(workspace, app_for):
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_problem(pilot, PID)
        await pilot.press("home", *"sqra1")      # Sort, Quit?, Run, Accept, label 1 …
        assert app.screen is screen
        assert screen.query_one("#prompt-editor", TextArea).text.startswith("sqra1")

        tabs = screen.query_one(TabbedContent)
        await pilot.press("alt+right", "alt+right", "alt+right")
        assert tabs.active == "labels"
        assert screen.query_one("#pick-stage").has_focus
        screen.query_one("#title-input").focus()
        await pilot.press("end", *" 2a")
        assert screen.current().title.endswith(" 2a")
        assert screen.current().stage == screen.problem.stage   # "2" went into the title
        await pilot.press("alt+left", "alt+left", "alt+left", "alt+left")
        assert tabs.active == "history"


async def test_a_crash_rescues_unsaved_text_to_a_recovery_file(workspace, app_for):
    app = app_for(workspace)

    def boom():
        raise RuntimeError("simulated bug in a widget")

    with pytest.raises(RuntimeError, match="simulated bug"):
        async with app.run_test(size=(100, 30)) as pilot:
            await open_problem(pilot, PID)
            await pilot.press(*"Precious words")
            app.call_later(boom)
            await pilot.pause()
    assert app.recovery_path is not None
    assert app.recovery_path.parent == workspace.db_dir / "recovery"
    saved = json.loads(app.recovery_path.read_text(encoding="utf-8"))
    assert saved["drafts"][PID]["prompt"].startswith("Precious words")
    assert saved["actor"] == "tester"


async def test_rescued_edits_can_be_restored(workspace, store, app_for):
    from curator.tui import recovery

    recovery.write(workspace.db_dir, "tester", {PID: {"prompt": "Rescued prompt\n"}})
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_problem(pilot, PID)
        screen.restore_rescued()
        await settle(pilot)
        assert screen.dirty_fields() == ["prompt"]
        await pilot.press("ctrl+s")
        await settle(pilot)
    assert problem_store.get(store, PID).prompt == "Rescued prompt\n"


async def test_run_reference_now_records_a_run_and_shows_its_tests(workspace, store, app_for):
    from textual.widgets import DataTable

    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_problem(pilot, PID)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert screen.query_one(TabbedContent).active == "runs"
        runs = store.query("SELECT * FROM runs WHERE problem_id = ?", (PID,))
        assert [r["outcome"] for r in runs] == ["passed"]
        assert runs[0]["solution_kind"] == "reference" and runs[0]["actor"] == "tester"
        history = screen.query_one("#run-history", DataTable)
        assert history.row_count == 1
        tests = json.loads(runs[0]["tests"])
        assert screen.query_one("#run-tests", DataTable).row_count == len(tests) >= 3
        assert str(screen.query_one("#run-status").render()) == "passed"
    # the Problems table shows the outcome once back there
        await pilot.press("escape", "escape")
        await settle(pilot)
        rows = {r["id"]: r for r in app.screen.query_one("ProblemTable").rows}
        assert rows[PID]["outcome"] == "passed"



async def test_ctrl_r_runs_unsaved_edits_and_labels_them(workspace, store, app_for):
    from textual.widgets import DataTable

    from curator.runs import reference_passes

    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_problem(pilot, PID)
        await pilot.press("alt+2")   # Solution tab
        await settle(pilot)
        editor = screen.query_one("#solution-editor")
        editor.replace_all(editor.text + "\nraise RuntimeError('broken on screen')\n")
        await settle(pilot)
        assert screen.dirty_fields() == ["solution"]
        await pilot.press("ctrl+r")
        await settle(pilot)
        runs = store.query("SELECT * FROM runs WHERE problem_id = ?", (PID,))
        # what ran is the broken text on screen, not the saved (passing) solution
        assert [(r["outcome"], r["unsaved"]) for r in runs] == [("error", 1)]
        history = screen.query_one("#run-history", DataTable)
        assert "unsaved edits" in [str(c) for c in history.get_row_at(0)]
        assert "[unsaved edits]" in "\n".join(screen.query_one("#run-output").lines)
        # an unsaved run never stands for the reference
        assert not reference_passes(store, problem_store.get(store, PID))
        assert app.problem_screen.dirty_fields() == ["solution"]   # edits still there
