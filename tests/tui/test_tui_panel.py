"""The app's panels: blind votes in the Labels tab, the assignment queue, candidate votes."""

from __future__ import annotations

from mining_support import make_dl_repo, mine_first_commit, mining_workspace
from textual.widgets import DataTable, Static
from tui_support import *  # noqa: F403  (fixtures: app_for, no_blink, synth_workspace)
from tui_support import open_problem, settle

from curator.panel import candidates as candidate_panel
from curator.panel import rounds
from curator.store import Store
from curator.store import candidates as candidate_store
from curator.store import label_votes as vote_store
from curator.tui.widgets.history_pane import change_text
from curator.tui.widgets.vote_pane import VotePane, VotePicker


def _text(screen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def _screen_text(screen) -> str:
    return "\n".join(str(w.render()) for w in screen.query(Static) if w.display)


async def test_blind_vote_hides_others_until_saved(workspace, store, app_for):
    ids = sorted(p.name for p in workspace.problems_dir.iterdir())
    pid = ids[1]
    rounds.assign(store, ["ana", "ben", "cy"], 3, problems=ids[:3])
    with Store(workspace.db_path, "ana") as ana:
        rounds.vote(ana, pid, "ana", "training", "timeseries", "text", note="odd one")
    problem = store.one("SELECT stage, task, data FROM problems WHERE id = ?", (pid,))
    app = app_for(workspace, "cy")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        # the Problems table does not tell the labels of cy's open assignments either
        listed = {r["id"]: r for r in app.screen.all_rows}
        assert {listed[p]["stage"] for p in ids[:3]} == {"blind"}
        assert listed[ids[3]]["stage"] == store.one(
            "SELECT stage FROM problems WHERE id = ?", (ids[3],))["stage"]
        screen = await open_problem(pilot, pid)
        await pilot.press("alt+4")            # Labels tab: the ballot, focus on its stage
        await settle(pilot)
        pane = screen.query_one(VotePane)
        assert pane.blind and screen.blind
        assert isinstance(app.focused, VotePicker) and app.focused.axis == "stage"
        # neither ana's vote nor the problem's current labels are on screen
        shown = _screen_text(screen)
        assert "ana" not in shown and "Time Series" not in _text(screen, "#vote-others")
        assert not screen.query_one("#pickers").display
        heading = _text(screen, "#problem-heading")
        assert "labels hidden until you vote" in heading
        assert f"{problem['stage']} / {problem['task']}" not in heading
        assert "assignment 2 of 3 · 0 voted · 3 to go" in _text(screen, "#vote-position")

        await pilot.press("2", "right", "3", "right", "1")   # model, detection, image
        assert vote_store.vote(store, pid, "cy") is None      # nothing saved before v
        await pilot.press("v")
        await settle(pilot)
        saved = vote_store.vote(store, pid, "cy")
        assert (saved["stage"], saved["task"], saved["data"]) == ("model", "detection",
                                                                  "image")
        assert not pane.blind and not screen.blind
        others = _text(screen, "#vote-others")
        assert "ana: Training / Time Series Prediction / Text" in others
        assert "labels hidden" not in _text(screen, "#problem-heading")
        assert "1 voted · 2 to go" in _text(screen, "#vote-position")
        # a vote is not an edit of the problem: nothing unsaved, the labels unchanged
        assert screen.dirty_fields() == []

        # ctrl+z takes the vote back: blind again
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert vote_store.vote(store, pid, "cy") is None
        assert pane.blind and "ana" not in _text(screen, "#vote-others")

        # n walks to the next assignment, on its Labels tab
        await pilot.press("n")
        await settle(pilot)
        nxt = app.screen
        assert nxt.problem_id == ids[2]
        assert "assignment 3 of 3" in _text(nxt, "#vote-position")
        assert isinstance(app.focused, VotePicker)


async def test_not_assigned_sees_the_label_pickers_as_before(workspace, store, app_for):
    ids = sorted(p.name for p in workspace.problems_dir.iterdir())
    rounds.assign(store, ["ana"], 1, problems=ids[:1])
    app = app_for(workspace, "tester")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_problem(pilot, ids[0])
        await pilot.press("alt+4")
        await settle(pilot)
        assert not screen.query(VotePane)
        assert screen.query_one("#pickers").display
        assert app.focused.id == "pick-stage"


async def test_team_tab_shows_all_three_panels(workspace, store, app_for):
    ids = sorted(p.name for p in workspace.problems_dir.iterdir())
    rounds.assign(store, ["ana", "ben"], 2, problems=ids[:2])
    for name, stage in (("ana", "model"), ("ben", "training")):
        with Store(workspace.db_path, name) as own:
            rounds.vote(own, ids[0], name, stage, "general", "image")
    app = app_for(workspace, "tester")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        await pilot.press("alt+4")
        await settle(pilot)
        screen = app.screen
        review_line = _text(screen, "#team-summary")
        panels = _text(screen, "#team-panels")
    assert "item(s) in the queue" in review_line   # failure review
    assert "Problem labels: 2 problem(s) in label rounds, 1 with every vote in" in panels
    # one problem, two votes: stage disagrees (alpha 0: n = 2, observed = expected = 2);
    # (kappa 0 too: p_o = p_e = 0); task agrees on one value, nothing to expect: undefined
    assert "stage α 0.000 κ 0.00" in panels and "task α n/a κ n/a" in panels
    assert "votes done: ana: 1/2 · ben: 1/2" in panels
    assert "Candidates (rule 2 of 3): no panel votes yet" in panels


async def test_candidates_y_n_vote_and_the_table_shows_votes(tmp_path, app_for):
    ws = mining_workspace(tmp_path / "ws")
    with Store(ws.db_path, "miner") as store:
        mine_first_commit(store, ws, make_dl_repo(tmp_path / "upstream"))
        first = candidate_store.list_rows(store)[0]   # best score first, as the table
    with Store(ws.db_path, "ana") as ana:
        candidate_panel.vote(ana, ws, first["id"], "ana", "yes")
    app = app_for(ws, "ben")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f4")
        await settle(pilot)
        screen = app.screen
        table = screen.query_one("#cand-table", DataTable)
        assert table.get_row_at(0)[0] == str(first["id"])
        assert table.get_row_at(0)[2] == "1✓ 0✗"
        await pilot.press("n")                # ben: not relevant -> 1 of each, waiting
        await settle(pilot)
        assert table.get_row_at(0)[2] == "1✓ 1✗"
        await pilot.press("y")                # ben changes his vote: 2 yes -> accepted
        await settle(pilot)
    with Store(ws.db_path, "x") as store:
        row = candidate_store.get(store, first["id"])
    assert row["status"] == "accepted" and (ws.problems_dir / row["problem_id"]).is_dir()


async def test_history_tab_is_blind_until_the_vote(workspace, store, app_for):
    ids = sorted(p.name for p in workspace.problems_dir.iterdir())
    pid = ids[0]
    problem = store.one("SELECT stage, task, data FROM problems WHERE id = ?", (pid,))
    rounds.assign(store, ["cy"], 1, problems=[pid])
    with Store(workspace.db_path, "tester") as own:   # a label change in the log, too
        own.execute("UPDATE problems SET stage = 'training' WHERE id = ?", (pid,))
        own.audit("problem", pid, "update", "stage", problem["stage"], "training")
    app = app_for(workspace, "cy")
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_problem(pilot, pid)
        await pilot.press("alt+6")
        await settle(pilot)
        pane = screen.query_one("#history-pane")
        texts = [change_text(row) for row in pane.rows]
        assert len(texts) == 2 and all("blind" in t for t in texts)
        joined = "\n".join(texts)
        for value in (problem["stage"], problem["task"], problem["data"], "training"):
            assert f'"{value}"' not in joined and f"+{value}" not in joined, value
        shown = screen.query_one("#history-detail").text
        assert "blind" in shown and "training" not in shown
        # cy votes (on the Labels tab): the log shows the labels as before
        await pilot.press("alt+4")
        await settle(pilot)
        await pilot.press("2", "right", "3", "right", "1", "v")
        await settle(pilot)
        await pilot.press("alt+6")
        await settle(pilot)
        joined = "\n".join(change_text(row) for row in pane.rows)
        assert "training" in joined and f'"task": "{problem["task"]}"' in joined


async def test_stats_count_open_assignments_as_blind(workspace, store, app_for):
    ids = sorted(p.name for p in workspace.problems_dir.iterdir())
    rounds.assign(store, ["cy"], 1, problems=ids[:2])
    stages = [store.one("SELECT stage FROM problems WHERE id = ?", (p,))["stage"]
              for p in ids[:2]]
    everyone = {r["stage"]: r["n"] for r in store.query(
        "SELECT stage, COUNT(*) AS n FROM problems WHERE status != 'retired' GROUP BY stage")}
    names = {r["slug"]: r["name"] for r in store.labels("stage")}
    app = app_for(workspace, "cy")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        table = app.screen.query_one("#numbers-stage", DataTable)
        shown = {table.get_row_at(i)[0]: int(table.get_row_at(i)[1])
                 for i in range(table.row_count)}
    assert shown.pop("(blind: yours to vote)") == 2
    assert shown.pop("total") == sum(everyone.values())
    for slug, n in everyone.items():
        assert shown[names[slug]] == n - stages.count(slug), slug


async def test_ctrl_z_in_the_ballot_takes_back_an_adjudication(workspace, store, app_for):
    ids = sorted(p.name for p in workspace.problems_dir.iterdir())
    pid = ids[0]
    before = store.one("SELECT stage FROM problems WHERE id = ?", (pid,))["stage"]
    other = "training" if before != "training" else "model"
    rounds.assign(store, ["cy"], 1, problems=[pid])
    with Store(workspace.db_path, "cy") as cy:
        rounds.vote(cy, pid, "cy", "model", "general", "image")
        rounds.adjudicate(cy, pid, workspace.problems_dir, stage=other)
    assert store.one("SELECT stage FROM problems WHERE id = ?", (pid,))["stage"] == other
    app = app_for(workspace, "cy")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_problem(pilot, pid)
        await pilot.press("alt+4")
        await settle(pilot)
        assert isinstance(app.focused, VotePicker)
        await pilot.press("ctrl+z")        # cy's latest act: the adjudication, not the vote
        await settle(pilot)
        assert not screen.query_one(VotePane).blind
    assert store.one("SELECT stage FROM problems WHERE id = ?", (pid,))["stage"] == before
    assert vote_store.decisions(store).get(pid) is None
    assert vote_store.vote(store, pid, "cy")["stage"] == "model"   # the vote stays
    assert 'stage = "' + before + '"' in (workspace.problems_dir / pid / "problem.toml"
                                          ).read_text(encoding="utf-8")
