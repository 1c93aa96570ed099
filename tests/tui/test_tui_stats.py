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
        await pilot.press("ctrl+l")   # the reload key, the same on every screen
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


async def test_import_and_evaluate_from_the_app_runs_references_first(empty_workspace,
                                                                       tmp_path, app_for):
    """i picks a file in the tree, e evaluates (references first); the excluded list
    names the fix in keys; Enter on a label edits its definition."""
    import json

    from samples_support import ADD_SOLUTION, make_problems
    from textual.widgets import DirectoryTree, Input

    from curator.store import Store

    with Store(empty_workspace.db_path, "tester") as store:
        make_problems(store)
    rows = [{"task_id": "add_one", "solution": ADD_SOLUTION, "model": "m1"},
            {"task_id": "add_one", "solution": "def add_one(x):\n    return x\n",
             "model": "m1"},
            {"task_id": "double_it", "solution": "def double_it(x):\n    return 2 * x\n",
             "model": "m1"}]
    (empty_workspace.root / "samples.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows))
    app = app_for(empty_workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        screen = app.screen
        await pilot.press("i")
        # (no settle while the tree is open: its folder loader is a worker that waits on)
        tree = app.screen.query_one(DirectoryTree)
        files = []
        for _ in range(100):   # the tree lists the folder in a worker
            await pilot.pause(0.05)
            files = [n for n in tree.root.children
                     if str(n.data.path).endswith("samples.jsonl")]
            if files:
                break
        assert files, [str(n.data.path) for n in tree.root.children]
        tree.move_cursor(files[0])
        await pilot.press("enter")
        await pilot.pause(0.2)
        assert app.screen.query_one("#import-path", Input).value.endswith("samples.jsonl")
        await pilot.press("enter")
        await pilot.pause(0.5)
        await settle(pilot)
        assert app.store.one("SELECT COUNT(*) AS n FROM samples")["n"] == 3
        # break double_it's reference so it stays excluded
        from curator.store import problems as problem_store

        problem_store.update_fields(app.store, "double_it",
                                    solution="def double_it(x):\n    return x\n")
        await pilot.press("e")
        await settle(pilot)
        for _ in range(100):
            await pilot.pause(0.1)
            if not screen.busy:
                break
        await settle(pilot)
        refs = app.store.query("SELECT problem_id, outcome FROM runs WHERE solution_kind = "
                               "'reference' ORDER BY problem_id")
        outcomes = {r["problem_id"]: r["outcome"] for r in refs}
        assert outcomes["add_one"] == "passed" and outcomes["double_it"] != "passed"
        assert "ran 2 reference(s) first" in str(screen.query_one("#task-label").render())
        table = screen.query_one("#passk-table", DataTable)
        assert table.get_row_at(0)[0] == "overall" and table.get_row_at(0)[3] == "0.500"
        excluded = screen.query_one("#passk-excluded", DataTable)
        assert excluded.get_row_at(0)[0] == "double_it"
        assert "ctrl+r" in str(excluded.get_row_at(0)[2])
        # label definitions are edited where the labels are counted
        screen.query_one("TabbedContent").active = "stats-labels"
        await settle(pilot)
        numbers = screen.query_one("#numbers-stage", DataTable)
        numbers.focus()
        await pilot.press("enter")
        await settle(pilot)
        app.screen.query_one("#label-definition", Input).value = "Reading and shaping data."
        await pilot.press("enter")
        await settle(pilot)
        first = app.store.labels("stage")[0]
        assert first["definition"] == "Reading and shaping data."
