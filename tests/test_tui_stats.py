"""Stats screen: the numbers beside the charts are the database's counts."""

from __future__ import annotations

from textual.widgets import DataTable
from textual_plotext import PlotextPlot
from tui_support import *  # fixtures: app_for, no_blink, synth_workspace
from tui_support import settle

from curator.tui.screens.stats import StatsScreen


async def test_label_distribution_matches_the_database(workspace, store, app_for):
    app = app_for(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, StatsScreen)
        for axis in ("stage", "task", "data"):
            expected = {r["name"]: 0 for r in store.labels(axis)}
            names = {r["slug"]: r["name"] for r in store.labels(axis)}
            for row in store.query(f"SELECT {axis} AS v, COUNT(*) AS n FROM problems "
                                   f"WHERE status != 'retired' GROUP BY {axis}"):
                expected[names.get(row["v"], "(unset)")] = row["n"]
            table = screen.query_one(f"#numbers-{axis}", DataTable)
            shown = {table.get_row_at(i)[0]: int(table.get_row_at(i)[1])
                     for i in range(table.row_count)}
            assert shown.pop("total") == sum(expected.values())
            assert shown == expected
            assert screen.query_one(f"#plot-{axis}", PlotextPlot)


async def test_stats_reload_after_a_label_changes(workspace, store, app_for):
    from curator.store import problems as problem_store

    app = app_for(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        table = app.screen.query_one("#numbers-stage", DataTable)

        def training() -> int:
            return next(int(table.get_row_at(i)[1]) for i in range(table.row_count)
                        if table.get_row_at(i)[0] == "Training")

        before = training()
        pid = store.one("SELECT id FROM problems WHERE stage = 'model' LIMIT 1")["id"]
        problem_store.update_fields(store, pid, stage="training")
        await pilot.press("r")
        await settle(pilot)
        assert training() == before + 1
