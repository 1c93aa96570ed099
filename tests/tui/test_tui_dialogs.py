"""The modal dialogs focus what they name when they open, and one pushed while the app is
closing does not raise (a query in on_mount found no children then: NoMatches, seen in
test_tui_tasks on a loaded machine)."""

from __future__ import annotations

import pytest
from textual.app import App

from curator.tui.screens.dialogs import (
    ChoiceModal,
    ErrorModal,
    ImportSamplesModal,
    InputModal,
    LabelEditModal,
    NewProblemModal,
)

DIALOGS = {
    "error": (lambda tmp: ErrorModal("Could not check", "broken", "a\ntraceback"), "close"),
    "choice": (lambda tmp: ChoiceModal("Run?", "Run it?", [("yes", "Yes", "primary"),
                                                          ("no", "No", "default")]), "yes"),
    "input": (lambda tmp: InputModal("Verify", "Bundle:", value="x"), "answer"),
    "new problem": (lambda tmp: NewProblemModal(), "new-id"),
    "import samples": (lambda tmp: ImportSamplesModal(str(tmp)), "import-tree"),
    "label": (lambda tmp: LabelEditModal("stage", "training", "Training", "Fit."),
              "label-definition"),
}


class Bare(App):
    pass


@pytest.mark.parametrize("name", DIALOGS)
async def test_a_dialog_focuses_what_it_names(name, tmp_path):
    make, focused = DIALOGS[name]
    app = Bare()
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(make(tmp_path))
        await pilot.pause()
        await pilot.pause()
        assert app.focused is not None and app.focused.id == focused, app.focused


@pytest.mark.parametrize("name", DIALOGS)
async def test_a_dialog_pushed_as_the_app_closes_raises_nothing(name, tmp_path):
    make, _focused = DIALOGS[name]
    app = Bare()
    async with app.run_test(size=(100, 30)):
        app.push_screen(make(tmp_path))
        app.exit()
