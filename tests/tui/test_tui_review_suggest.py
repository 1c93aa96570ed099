"""The Review pane shows suggested categories; `s` takes the first as the label."""

from __future__ import annotations

import pytest
from samples_support import add_samples, make_problems, record_run
from tui_support import *  # fixtures: app_for, no_blink, synth_workspace
from tui_support import settle

from curator.store import Store
from curator.tui.screens.review import ReviewScreen

LOG = """    def add_one(x):
>       return math.add(x, 1)
E       AttributeError: module 'math' has no attribute 'add'

solution.py:4: AttributeError
"""


@pytest.fixture
def review_ws(empty_workspace, tmp_path):
    store = Store(empty_workspace.db_path, "tester")
    make_problems(store)
    record_run(store, "add_one", "passed")
    ids = add_samples(store, tmp_path, [
        {"task_id": "add_one", "solution": "import math\n\ndef add_one(x):\n"
                                           "    return math.add(x, 1)\n"},
        {"task_id": "add_one", "solution": "def add_one(x):\n    return x + 2\n"}])
    record_run(store, "add_one", "failed", ids[0], stdout=LOG, reason="2 of 3 tests failed")
    record_run(store, "add_one", "failed", ids[1], stdout="E       assert 4 == 2",
               reason="1 of 3 tests failed")
    store.close()
    return empty_workspace


@pytest.mark.parametrize("size", [(100, 30), (80, 24)])
async def test_suggestion_shown_and_taken_with_one_key(review_ws, app_for, size):
    app = app_for(review_ws)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        first = screen.current.sample_id
        text = str(screen.query_one("#review-current").render())
        assert "suggested (s takes it): 8" in text and "has no attribute 'add'" in text
        assert app.store.query("SELECT * FROM review_labels") == []   # not a label yet
        await pilot.press("s")
        await settle(pilot)
        label = app.store.one("SELECT * FROM review_labels WHERE sample_id = ?", (first,))
        assert '"category": "8"' in label["pairs"]
        use = app.store.one("SELECT * FROM review_suggestion_uses WHERE sample_id = ?",
                            (first,))
        assert use["accepted"] == 1 and use["by_key"] == 1
        # the next one is labelled by hand with another category: overridden
        await pilot.press("n")
        await settle(pilot)
        second = screen.current.sample_id
        assert "suggested (s takes it): 10" in str(screen.query_one("#review-current").render())
        await pilot.press("1", *"adds one twice", "enter")
        await settle(pilot)
        use = app.store.one("SELECT * FROM review_suggestion_uses WHERE sample_id = ?",
                            (second,))
        assert use["accepted"] == 0 and use["chosen"] == "1" and use["by_key"] == 0
