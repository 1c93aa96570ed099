"""The app shell: keymap from the workspace config, command palette, F1 help, errors, themes."""

from __future__ import annotations

from textual.command import CommandPalette
from textual.widgets import Input, Markdown
from tui_support import *  # fixtures: app_for, no_blink, synth_workspace
from tui_support import settle

from curator import workspace as workspace_mod
from curator.tui.screens.dialogs import ErrorModal
from curator.tui.screens.help import HelpScreen
from curator.tui.screens.problem import ProblemScreen
from curator.tui.screens.stats import StatsScreen


async def test_keymap_in_curator_toml_remaps_bindings(workspace, app_for):
    (workspace.root / "curator.toml").write_text(
        '[keymap]\n"problems.filter" = "f"\n"app.stats" = "f9"\n', encoding="utf-8")
    ws = workspace_mod.discover(workspace.root)
    app = app_for(ws)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("slash")   # no longer the filter key
        assert not app.screen.query_one("#filter", Input).has_focus
        await pilot.press("f")
        assert app.screen.query_one("#filter", Input).has_focus
        await pilot.press("f9")
        await settle(pilot)
        assert isinstance(app.screen, StatsScreen)


async def test_palette_offers_screen_actions_and_goes_to_a_problem(workspace, app_for):
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Filter", "Sort", "Open", "Stats", "Help", "Theme"} <= titles
        assert "Problems" not in titles   # the screen we are on
        await pilot.press("ctrl+p")
        await settle(pilot)
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"go to problem soft_dice")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ProblemScreen)
        assert app.screen.problem_id == "soft_dice_loss"
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Save", "Run", "Back", "Show labels tab", "Restore rescued edits"} <= titles
        assert "Copy" not in titles   # the editor's own cursor keys stay out of the list


async def test_f1_help_explains_the_focused_widget_and_the_label_definitions(
        workspace, store, app_for):
    store.set_label_text("stage", "training", definition="Changes weights. Our own words.")
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("slash", "f1")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        text = app.screen.text
        assert "## Filter" in text                        # the focused widget's help
        assert "Labelling guidelines" in text
        assert "Changes weights. Our own words." in text  # definitions from the store
        assert "problems.filter" in text                  # binding ids, for the keymap
        assert app.screen.query_one(Markdown)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_errors_open_a_modal_with_details(workspace, app_for):
    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        try:
            {}["missing"]
        except KeyError as exc:
            app.show_error("Something broke", exc)
        await settle(pilot)
        assert isinstance(app.screen, ErrorModal)
        assert app.screen.message.startswith("KeyError: 'missing' (traceback in ")
        assert "Traceback" in app.screen.details
        (log,) = (workspace.db_dir / "logs").glob("crash-*.log")  # a bug is logged
        assert "KeyError" in log.read_text(encoding="utf-8")
        await pilot.press("enter")
        assert not isinstance(app.screen, ErrorModal)


async def test_theme_can_be_changed_and_is_read_from_the_config(workspace, app_for):
    (workspace.root / "curator.toml").write_text('[app]\ntheme = "nord"\n', encoding="utf-8")
    app = app_for(workspace_mod.discover(workspace.root))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.theme == "nord"
        assert app.get_css_variables()["primary"].lower() == \
            app.get_theme("nord").primary.lower()
        app.theme = "textual-light"   # what the palette's theme picker does
        app.open_problem("soft_dice_loss")
        await settle(pilot)
        assert isinstance(app.screen, ProblemScreen)
        assert app.get_css_variables()["primary"].lower() == \
            app.get_theme("textual-light").primary.lower()


async def test_f_keys_switch_screens_and_keep_an_open_problem(workspace, app_for):
    app = app_for(workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.open_problem("soft_dice_loss")
        await settle(pilot)
        problem_screen = app.screen
        await pilot.press(*"unsaved ")
        await pilot.press("f3")
        await settle(pilot)
        assert isinstance(app.screen, StatsScreen)
        await pilot.press("f2")
        await settle(pilot)
        assert app.screen is problem_screen
        assert problem_screen.dirty_fields() == ["prompt"]


async def test_f2_from_an_open_problem_returns_to_the_list(workspace, app_for):
    from curator.tui.screens.problem import ProblemScreen
    from curator.tui.screens.problems import ProblemsScreen

    app = app_for(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ProblemScreen)
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("f2")   # back to the problems mode: the problem is on top
        await settle(pilot)
        assert isinstance(app.screen, ProblemScreen)
        await pilot.press("f2")   # F2 again on the open problem: the list
        await settle(pilot)
        assert isinstance(app.screen, ProblemsScreen)


async def test_a_bug_that_ends_the_app_prints_one_line_and_logs_the_traceback(
        workspace, app_for, capsys):
    app = app_for(workspace)

    def boom() -> None:
        raise RuntimeError("nobody planned for this")

    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            app.call_later(boom)
            await pilot.pause()
    except RuntimeError:
        pass   # run_test hands the app's exception to the test, as Textual does
    assert app.crash_line is not None and "nobody planned for this" in app.crash_line
    (log,) = (workspace.db_dir / "logs").glob("crash-*.log")
    assert "Traceback" in log.read_text(encoding="utf-8")
    capsys.readouterr()
    app._exit_renderables.append("a traceback Textual would have printed")
    app._print_error_renderables()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: internal error: RuntimeError")
    assert "Traceback" not in err and str(log) in err
