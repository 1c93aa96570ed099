"""Problems screen: the table mirrors the database; filtering, sorting, opening."""

from __future__ import annotations

from textual.widgets import Input, Static
from tui_support import *  # fixtures: app_for, no_blink, synth_workspace
from tui_support import settle

from curator.store import problems as problem_store
from curator.tui.screens.problem import ProblemScreen
from curator.tui.screens.problems import ProblemsScreen
from curator.tui.widgets.problem_table import ProblemTable


async def test_table_lists_every_problem_with_its_labels(workspace, store, app_for):
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ProblemsScreen)
        table = screen.query_one(ProblemTable)
        expected = {r["id"]: r for r in problem_store.list_rows(store)}
        assert {r["id"] for r in table.rows} == set(expected)
        for row in table.rows:
            assert (row["stage"], row["task"], row["data"], row["status"]) == (
                expected[row["id"]]["stage"], expected[row["id"]]["task"],
                expected[row["id"]]["data"], expected[row["id"]]["status"])
        count = str(screen.query_one("#problems-count", Static).render())
        assert f"{len(expected)} problems" in count


async def test_filter_by_label_and_text_shows_counts(workspace, store, app_for):
    total = len(problem_store.list_rows(store))
    models = {r["id"] for r in problem_store.list_rows(store, stage="model")}
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        table = screen.query_one(ProblemTable)
        await pilot.press("slash")
        assert screen.query_one("#filter", Input).has_focus
        await pilot.press(*"stage:model")
        await settle(pilot)
        assert {r["id"] for r in table.rows} == models
        assert f"{len(models)} of {total}" in str(
            screen.query_one("#problems-count", Static).render())

        # a text term narrows through the full-text index (prompt and code included)
        target = problem_store.get(store, min(models))
        word = target.entry_point.split("_")[0]
        fts = {r["id"] for r in problem_store.list_rows(store, stage="model", text=word)}
        await pilot.press("space", *word)
        await settle(pilot)
        assert {r["id"] for r in table.rows} == fts
        assert target.id in fts

        # Enter goes to the table, Escape there clears the filter
        await pilot.press("enter")
        assert table.has_focus
        await pilot.press("escape")
        await settle(pilot)
        assert table.row_count == total


async def test_unknown_filter_key_is_reported_not_fatal(workspace, app_for):
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"colour:red")
        await settle(pilot)
        hint = str(app.screen.query_one("#problems-hint", Static).render())
        assert "unknown filter key 'colour'" in hint


async def test_sort_by_key_and_header_click(workspace, store, app_for):
    app = app_for(workspace)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(ProblemTable)
        ids = [r["id"] for r in table.rows]
        assert ids == sorted(ids)
        await pilot.press("s")   # next column: title
        assert table.sort_key == "title"
        titles = [r["title"].lower() for r in table.rows]
        assert titles == sorted(titles)
        await pilot.press("S")
        assert [r["title"].lower() for r in table.rows] == sorted(titles, reverse=True)
        # clicking the "stage" header sorts by stage
        stage_x = sum(w + 1 for w in table._widths[:2]) + 1
        await pilot.click(ProblemTable, offset=(stage_x + 1, 1))   # +1: the border
        assert table.sort_key == "stage"
        stages = [r["stage"] for r in table.rows]
        assert stages == sorted(stages, key=lambda s: (not s, s))


async def test_enter_opens_the_highlighted_problem(workspace, app_for):
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(ProblemTable)
        await pilot.press("down", "down")
        expected = table.current["id"]
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ProblemScreen)
        assert app.screen.problem_id == expected
        await pilot.press("escape")   # leave the prompt editor
        await pilot.press("escape")   # leave the problem (nothing unsaved: no question)
        await settle(pilot)
        assert isinstance(app.screen, ProblemsScreen)
