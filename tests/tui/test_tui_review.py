"""Review screen: label failing samples with number keys and verdict keys, undo."""

from __future__ import annotations

import pytest
from samples_support import add_samples, make_problems, record_run
from tui_support import *  # fixtures: app_for, no_blink, synth_workspace
from tui_support import settle

from curator import review
from curator.store import Store
from curator.tui.screens.review import ReviewScreen

WRONG = [f"def add_one(x):\n    return x + {i}\n" for i in range(2, 5)]


@pytest.fixture
def review_ws(empty_workspace, tmp_path):
    store = Store(empty_workspace.db_path, "tester")
    make_problems(store)
    record_run(store, "add_one", "passed")
    ids = add_samples(store, tmp_path, [{"task_id": "add_one", "solution": c} for c in WRONG])
    for sample_id in ids:
        record_run(store, "add_one", "failed", sample_id, stdout="assert 4 == 2",
                   reason="1 of 2 tests failed")
    store.close()
    return empty_workspace


def labels(store):
    return {r["sample_id"]: r for r in store.query(
        "SELECT sample_id, annotator, verdict, pairs FROM review_labels")}


async def test_label_with_number_keys_verdicts_and_undo(review_ws, app_for):
    app = app_for(review_ws)
    store = app.store
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        first, second, third = (item.sample_id for item in screen.items)
        assert "1 of 3" in str(screen.query_one("#review-position").render())
        assert "return x + 2" in screen.query_one("#review-sample").text

        # category 5 (edge cases) by number key, a reason, Enter saves
        fifth = screen.categories[4]
        await pilot.press("5", *"off by one", "enter")
        await settle(pilot)
        saved = labels(store)[first]
        assert saved["annotator"] == "tester" and saved["verdict"] == "bug"
        assert f'"category": "{fifth.id}"' in saved["pairs"] and "off by one" in saved["pairs"]
        assert "✓ 1 of 3" in str(screen.query_one("#review-position").render())

        # a second category adds a second pair to the same label
        await pilot.press("1", *"ignores spec", "enter")
        await settle(pilot)
        assert review.item(store, first, "tester").label["pairs"][1]["reason"] == \
            "ignores spec"

        # next item, verdict key
        await pilot.press("n", "d")
        await settle(pilot)
        assert labels(store)[second]["verdict"] == "benchmark-defect"

        # undo takes back the verdict, then the two-pair label becomes one pair again
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert second not in labels(store)
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert len(review.item(store, first, "tester").label["pairs"]) == 1
        assert screen.current.sample_id == first

        # ] jumps to the next item not labelled yet
        await pilot.press("right_square_bracket")
        assert screen.current.sample_id == second
        await pilot.press("c")
        await settle(pilot)
        assert labels(store)[second]["verdict"] == "sample-correct"
        await pilot.press("right_square_bracket")
        assert screen.current.sample_id == third


async def test_letters_typed_into_the_reason_do_not_fire(review_ws, app_for):
    app = app_for(review_ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        screen = app.screen
        await pilot.press("2")                     # pick category 2: focus goes to reason
        await pilot.press(*"dncx")                # would be next/verdicts/drop elsewhere
        assert screen.query_one("#review-reason").value == "dncx"
        assert screen.index == 0 and not labels(app.store)


async def test_keys_are_taxonomy_ids_and_never_move(review_ws, app_for):
    """5 is category 5 whatever was used before; 0 then 3 is 13; ctrl+t the sub-category;
    alt+2 shows the Failure tab."""
    from textual.widgets import TabbedContent

    app = app_for(review_ws)
    store = app.store
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        screen = app.screen
        first, second, third = (item.sample_id for item in screen.items)
        await pilot.press("1", *"spec", "enter", "n")   # category 1 used most now
        await settle(pilot)
        await pilot.press("5", *"edge", "enter")
        await settle(pilot)
        assert review.item(store, second, "tester").label["pairs"][0]["category"] == "5"
        options = screen.query_one("#review-categories")
        assert str(options.get_option_at_index(4).prompt).split()[0] == "5"
        assert str(options.get_option_at_index(12).prompt).split()[:2] == ["0", "3"]
        # 0 then 3: category 13, with a DL-specific sub-category through ctrl+t
        await pilot.press("n", "0", "3")
        await settle(pilot)
        assert screen.pending[-1][0] == "13"
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert screen.query_one("#review-dl").expanded
        await pilot.press("down", "enter")
        await settle(pilot)
        assert screen.query_one("#review-reason").has_focus, (screen.focused, screen.query_one("#review-dl").value)
        await pilot.press(*"slow loop", "enter")
        await settle(pilot)
        pair = review.item(store, third, "tester").label["pairs"][0]
        assert pair["category"] == "13" and pair["dl"] and pair["reason"] == "slow loop"
        # every tab by the same keys as on the other screens
        await pilot.press("alt+2")
        await settle(pilot)
        assert screen.query_one(TabbedContent).active == "review-failure"
        await pilot.press("alt+left")
        await settle(pilot)
        assert screen.query_one(TabbedContent).active == "review-code"


async def test_team_tab_assigns_shows_agreement_and_adjudicates(review_ws, app_for):
    from textual.widgets import Input

    from curator.review import annotations

    app = app_for(review_ws)
    store = app.store
    ids = review.queue_ids(store)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        screen = app.screen
        await pilot.press("a")
        await settle(pilot)
        app.screen.query_one(Input).value = "ana, ben"
        await pilot.press("enter")
        await settle(pilot)
        app.screen.query_one(Input).value = "1"
        await pilot.press("enter")
        await settle(pilot)
        assert {len(i.assigned) for i in review.queue(store)} == {2}
        review.label(store, ids[0], "ana", pairs=[("5", "edge")])
        review.label(store, ids[0], "ben", pairs=[("10", "math")])
        review.label(store, ids[1], "ana", pairs=[("5", "edge")])
        review.label(store, ids[1], "ben", pairs=[("5", "edge too")])
        await pilot.press("alt+1", "alt+4")   # labels came from elsewhere: the tab re-reads
        await settle(pilot)
        summary = str(screen.query_one("#team-summary").render())
        assert "labelled twice" in summary and "α" in summary and "κ ana / ben" in summary
        panels = [str(p.render()) for p in screen.query(".team-label")]
        assert any("5 Fails edge cases: edge" in p for p in panels)
        assert any(p.startswith("10 Arithmetic") for p in panels)
        table = screen.query_one("#team-disagreements")
        table.focus()
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("right", "enter")   # "Take ben's"
        await settle(pilot)
        final = annotations.get_final(store, ids[0])
        assert final["pairs"][0]["category"] == "10"
