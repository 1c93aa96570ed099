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


async def test_pass_at_k_table_shows_the_report_figures(empty_workspace, tmp_path, app_for):
    from samples_support import add_samples, make_problems, record_run

    from curator.evaluation import report
    from curator.store import Store

    with Store(empty_workspace.db_path, "tester") as store:
        make_problems(store)
        record_run(store, "add_one", "passed")
        codes = [f"def add_one(x):\n    return x + {i}\n" for i in range(1, 5)]
        ids = add_samples(store, tmp_path, [{"task_id": "add_one", "solution": c}
                                            for c in codes])
        for sample_id, outcome in zip(ids, ["passed", "failed", "failed", "failed"]):
            record_run(store, "add_one", outcome, sample_id)
        expected = report.build(store)["models"]["m1"]
    app = app_for(empty_workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        screen = app.screen
        screen.query_one("TabbedContent").active = "stats-passk"
        await settle(pilot)
        table = screen.query_one("#passk-table", DataTable)
        overall = table.get_row_at(0)
        assert overall[0] == "overall"
        assert overall[3] == f"{expected['overall']['pass@1']:.3f}"
        stage_rows = {table.get_row_at(i)[0] for i in range(1, table.row_count)}
        assert stage_rows == set(expected["stage"])
        await pilot.press("b")                      # by task
        assert {table.get_row_at(i)[0] for i in range(1, table.row_count)} == \
            set(expected["task"])
