"""The Review pane shows suggested categories; `s` takes the first as the label."""

from __future__ import annotations

import json
import threading

import pytest
from llm_support import ChatServer
from samples_support import add_samples, make_problems, record_run
from tui_support import *  # fixtures: app_for, no_blink, synth_workspace
from tui_support import settle

from curator import workspace as workspace_mod
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
        assert "suggested (s takes it): 8" in text
        assert "has no attribute 'add'" in str(screen.query_one("#review-evidence").render())
        # every suggestion line is on screen, none wrapped out of the pane, and the
        # evidence starts below them
        assert shown(app, "suggested (s takes it)").startswith("suggested (s takes it): 8")
        assert shown(app, "or: ").startswith("or: 1 Deviates")
        assert shown(app, "because:").startswith("because: AttributeError")
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


def screen_lines(app) -> list[str]:
    """What the terminal shows, line by line (a line cut off the pane is not here)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def shown(app, start: str) -> str:
    found = [line for line in screen_lines(app) if start in line]
    assert found, (start, "\n".join(screen_lines(app)))
    line = found[0]
    return line[line.index(start):].rstrip("│ ")


def model_answer(body: dict) -> str:
    ask = body["messages"][-1]["content"]
    cats = [1, 10] if "return x + 2" in ask else [8]
    return json.dumps({"categories": [{"id": c, "sub": "not-dl", "evidence": f"saw {c}"}
                                      for c in cats]})


async def until(pilot, condition, what: str) -> None:
    """Let the app run until `condition()` holds (a worker finished, say)."""
    for _ in range(400):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"never happened: {what}")


@pytest.mark.parametrize("size", [(100, 30), (80, 24), (160, 50)])
async def test_the_app_asks_the_configured_model_in_a_worker(review_ws, app_for, size):
    release = threading.Event()

    def respond(body: dict) -> str:
        release.wait(timeout=60)
        return model_answer(body)

    with ChatServer(respond) as server:
        server.script = [(500, {})]          # the first request fails: shown as such
        (review_ws.root / "curator.toml").write_text(
            f'[llm]\nbase_url = "{server.url}"\nmodel = "judge-m"\nmax_retries = 0\n',
            encoding="utf-8")
        ws = workspace_mod.discover(review_ws.root)
        app = app_for(ws)
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await pilot.press("f5")
            screen = app.screen
            assert isinstance(screen, ReviewScreen)
            first = screen.current.sample_id
            await until(pilot, lambda: first not in screen._asking, "the 500 came back")
            await pilot.pause()
            assert "model judge-m: no answer:" in shown(app, "model judge-m")
            assert "HTTP 500" in str(screen.query_one("#review-current").render())
            # the rules' suggestions are there at once, each on its own line
            assert "suggested (s takes it): 8" in shown(app, "suggested (s takes it)")
            assert shown(app, "because:").startswith("because: AttributeError")
            assert shown(app, "rules:").startswith("rules: 8")

            # the next item: its request hangs, and the app goes on answering keys
            await pilot.press("n")
            second = screen.current.sample_id
            assert second != first and second in screen._asking
            assert "model judge-m: asking…" in shown(app, "model judge-m")
            await pilot.press("p")
            assert screen.current.sample_id == first
            assert "no answer" in shown(app, "model judge-m")
            await pilot.press("n")
            assert len(server.requests) == 2      # one per item, none asked twice
            release.set()
            await until(pilot, lambda: not screen._asking, "the model answered")
            await pilot.pause()
            # beside the rules' (10 1 12: a failed value assertion), the model's 1 and 10,
            # each in its own order (`s` takes the rules' first)
            assert shown(app, "rules:") == "rules: 10 · 1 · 12"
            assert shown(app, "model judge-m") == "model judge-m: 1 · 10"
            assert app.store.query("SELECT * FROM review_labels") == []   # not labels

            # asked once: moving away and back asks nothing more (the answer is stored)
            await pilot.press("p", "n")
            await settle(pilot)
            assert len(server.requests) == 2
            assert shown(app, "model judge-m") == "model judge-m: 1 · 10"
            # the item whose request failed is asked again after a reload (ctrl+l)
            await pilot.press("p")
            await settle(pilot)
            assert "no answer" in shown(app, "model judge-m")
            await pilot.press("ctrl+l")
            await settle(pilot)
            assert len(server.requests) == 3
            assert shown(app, "model judge-m") == "model judge-m: 8"
