"""The curator app: a thin App that holds the store and routes between screens.

Flows live on the screens (curator/tui/screens/), logic in the core packages. The App
only knows: which screens exist, the keys that reach them, how to report an error, how to
ask before losing unsaved edits, and how to rescue them when something crashes. Screens and
widgets never import it: they post the messages of curator.tui.messages (open a problem,
data changed, an error to show), handled here, and run core functions in threads through
curator.tui.tasks.run_task.
"""

from __future__ import annotations

import gc
import signal
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import ContentSwitcher, TabbedContent

from curator import crashlog, sync
from curator.errors import CuratorError
from curator.execution import trust
from curator.store import Store
from curator.store import problems as problem_store
from curator.tui import recovery, weak_consent
from curator.tui.commands import GoToProblem, binding_commands, screen_commands
from curator.tui.keymap import ALT_DIGIT_KEYS
from curator.tui.messages import AskWeakConsent, DataChanged, OpenProblem, ShowError
from curator.tui.screens import available_modes
from curator.tui.screens.dialogs import ErrorModal, describe
from curator.tui.screens.help import HelpScreen, help_text
from curator.tui.screens.problems import ask_new_problem
from curator.tui.widgets.nav_bar import SCREENS, NavBar
from curator.workspace import Workspace

if TYPE_CHECKING:
    from curator.tui.screens.problem import ProblemScreen


class CuratorApp(App[None]):
    TITLE = "DL-Bench Curator"
    CSS_PATH: ClassVar[list[str]] = ["app.tcss", "screens.tcss"]
    COMMANDS: ClassVar[set] = App.COMMANDS | {GoToProblem}

    # One navigation model for every screen. F-keys and alt+ keys are priority bindings,
    # so an editor with focus cannot swallow them (TextArea binds F6 to "select line").
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True, id="app.quit", show=False,
                tooltip="Quit (asks first when there are unsaved edits)"),
        Binding("f1", "help", "Help", id="app.help",
                tooltip="Help for the focused part of the screen and the labelling guidelines"),
        *(Binding(key, f"goto('{mode}')", title, id=f"app.{mode}", priority=True, show=False,
                  tooltip=f"The {title} screen")
          for key, mode, title in SCREENS),
        Binding("ctrl+l", "reload", "Reload", id="app.reload", priority=True,
                tooltip="Read what this screen shows again from the database"),
        Binding("escape", "back", "Back", id="app.back", show=False,
                tooltip="Back to the screen shown before"),
        Binding("alt+right", "tab_step(1)", "Next tab", id="app.next_tab", priority=True,
                show=False, key_display="alt+→"),
        Binding("alt+left", "tab_step(-1)", "Previous tab", id="app.previous_tab",
                priority=True, show=False, key_display="alt+←"),
        *(Binding(f"alt+{n}", f"tab_number({n})", f"Tab {n}", id=f"app.tab{n}",
                  priority=True, show=False) for n in range(1, 10)),
        # one binding per key: Textual keeps one key of a multi-key binding that has an id
        *(Binding(ALT_DIGIT_KEYS[n - 1], f"tab_number({n})", f"Tab {n}",
                  id=f"app.tab{n}_esc", priority=True, show=False) for n in range(1, 10)),
    ]

    def __init__(self, workspace: Workspace, actor: str, *, store: Store | None = None):
        self.workspace = workspace
        self.crash_line: str | None = None   # set when a bug ends the app (see crashlog)
        self.actor = actor
        self.store = store or Store(workspace.db_path, actor)
        # factories, so a screen's module (and its core) is imported when first shown
        self.MODES = {name: (lambda info=info: info.screen())
                      for name, info in available_modes().items()}
        self.DEFAULT_MODE = "problems"
        super().__init__()
        self.sub_title = f"{workspace.root.name} · {actor}"
        # problem id -> field -> text not yet saved; kept as plain text so a crash in any
        # widget cannot take it down with it.
        self.drafts: dict[str, dict[str, str]] = {}
        self.problem_screen: ProblemScreen | None = None
        self.recovery_path: Path | None = None
        # Bumped whenever problems or runs change, so screens know to reload on resume.
        self.data_version = 0
        self.mode_history: list[str] = []   # modes shown before, for Escape
        # Isolation runs get here ("" until probed) and whether the person allowed
        # untrusted code to run weakly this session (curator.tui.weak_consent).
        self.isolation, self.isolation_reason = "", ""
        self.weak_allowed = False
        self.set_keymap(dict(workspace.config.keymap))
        theme = workspace.config.app.theme
        if theme is not None and theme in self.available_themes:
            self.theme = theme

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("switch_mode", "goto"):
            # a screen whose core is not built yet has no key; the one shown now has
            # nothing to do (except F2 over an open problem: back to the list)
            if parameters[0] not in self.MODES:
                return False
            if parameters[0] == self.current_mode:
                open_problem = self.problem_screen is not None \
                    and self.screen is self.problem_screen
                return True if open_problem and parameters[0] == "problems" else None
            return True
        if action in ("tab_step", "tab_number"):
            return self._tabs() is not None
        if action == "back":
            return len(self.mode_history) > 0 or len(self.screen_stack) > 1
        return True

    # -- navigation ------------------------------------------------------------------

    def open_problem(self, problem_id: str, tab: str | None = None) -> None:
        """Show a problem (asking about unsaved edits of the one open now, if any),
        on one of its tabs when `tab` is given."""

        def show() -> None:
            from curator.tui.screens.problem import ProblemScreen

            self.push_screen(ProblemScreen(problem_id, tab=tab))

        async def go() -> None:
            if self.current_mode != "problems":
                await self.switch_mode("problems")
            current = self.problem_screen
            if current is None:
                show()
            elif current.problem_id == problem_id:
                return
            else:
                current.leave_then(show)

        self.call_later(go)

    def settle_memory(self) -> None:
        """After start-up: move what exists now out of the garbage collector's view.

        The app, its widgets and 10,000 row dicts are long-lived; without this, a full
        collection scanning them stalls a keystroke by 100+ ms now and then.
        """
        gc.freeze()

    def on_mount(self) -> None:
        # probing bwrap starts a process: off the UI thread; the top bar shows the result
        self.run_worker(self._probe_isolation, thread=True, group="isolation",
                        exit_on_error=False)

    def _probe_isolation(self) -> None:
        level, reason = trust.level(self.workspace.config.execution)
        self.call_from_thread(self._set_isolation, level, reason)

    def _set_isolation(self, level: str, reason: str) -> None:
        self.isolation, self.isolation_reason = level, reason
        for bar in self.screen.query(NavBar):
            bar.refresh()

    def isolation_level(self) -> str:
        """"strong" or "weak" for runs started from this app (probed once)."""
        if not self.isolation:
            self._set_isolation(*trust.level(self.workspace.config.execution))
        return self.isolation

    # -- the messages screens and widgets post (curator.tui.messages) ---------------------

    def on_ask_weak_consent(self, message: AskWeakConsent) -> None:
        weak_consent.handle(self, message)

    def on_open_problem(self, message: OpenProblem) -> None:
        self.open_problem(message.problem_id, message.tab)

    def on_data_changed(self, message: DataChanged) -> None:
        """Problems or runs changed: screens reload what they show when they resume."""
        self.data_version += 1

    def on_show_error(self, message: ShowError) -> None:
        self.show_error(message.title, message.error, message.details)

    # -- the navigation model ----------------------------------------------------------

    async def action_goto(self, mode: str) -> None:
        """F2…F6: show that screen; F2 on an open problem goes back to the list."""
        if mode == self.current_mode:
            if mode == "problems" and self.problem_screen is not None \
                    and self.screen is self.problem_screen:
                self.problem_screen.leave_then()
            return
        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
        self.mode_history.append(self.current_mode)
        del self.mode_history[:-20]
        await self.switch_mode(mode)

    async def action_back(self) -> None:
        """Escape where nothing on the screen uses it: the screen shown before."""
        if self.screen is self.problem_screen:
            self.problem_screen.leave_then()
            return
        while self.mode_history:
            mode = self.mode_history.pop()
            if mode != self.current_mode and mode in self.MODES:
                await self.switch_mode(mode)
                return

    def action_reload(self) -> None:
        reload = getattr(self.screen, "action_reload", None)
        if reload is None:
            self.notify("Nothing to reload here", timeout=2)
        else:
            reload()

    def _tabs(self):
        found = self.screen.query(TabbedContent)
        return found.first() if found else None

    async def action_tab_number(self, number: int) -> None:
        tabs = self._tabs()
        if tabs is None:
            return
        panes = self._pane_ids(tabs)
        if 1 <= number <= len(panes):
            await self._show_tab(tabs, panes[number - 1])

    async def action_tab_step(self, step: int) -> None:
        tabs = self._tabs()
        if tabs is None:
            return
        panes = self._pane_ids(tabs)
        index = panes.index(tabs.active) if tabs.active in panes else 0
        await self._show_tab(tabs, panes[(index + step) % len(panes)])

    @staticmethod
    def _pane_ids(tabs) -> list[str]:
        switcher = tabs.get_child_by_type(ContentSwitcher)
        return [pane.id for pane in switcher.children if pane.id]

    async def _show_tab(self, tabs, pane_id: str) -> None:
        show = getattr(self.screen, "show_tab", None)
        if show is not None:   # the screen builds or focuses what the tab holds
            await show(pane_id)
        else:
            tabs.active = pane_id

    # -- actions ----------------------------------------------------------------------

    async def action_quit(self) -> None:
        screen = self.problem_screen
        if screen is not None and screen.dirty_fields():
            if self.current_mode != "problems":
                await self.switch_mode("problems")
            screen.leave_then(self.exit, leaving="quitting", close=False)
        else:
            self.exit()

    def action_new_problem(self) -> None:
        ask_new_problem(self)

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(help_text(self.screen, self.store)))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("New problem", "Create a problem from a template and open it "
                            "(n on the Problems screen)", self.action_new_problem)
        yield from screen_commands(screen)
        yield from binding_commands(self, screen)

    # -- feedback ---------------------------------------------------------------------

    def show_error(self, title: str, exc: BaseException | str, details: str = "") -> None:
        """The error modal: a one-line message, details below."""
        if isinstance(exc, BaseException):
            message, details = describe(exc)
            if not isinstance(exc, CuratorError):  # a bug: its traceback goes to db/logs/
                path = crashlog.write(exc, self.workspace.db_dir)
                if path is not None:
                    message += f" (traceback in {path})"
        else:
            message = exc
        self.push_screen(ErrorModal(title, message, details))

    # -- crash safety -----------------------------------------------------------------

    def rescue_drafts(self, reason: str) -> Path | None:
        """Write unsaved edits to db/recovery/ (once); returns the file, if any."""
        if self.recovery_path is None and self.drafts:
            try:
                self.recovery_path = recovery.write(self.workspace.db_dir, self.actor,
                                                    self.drafts, reason)
            except OSError as exc:   # the disk is the last resort; say so on the way out
                print(f"could not write unsaved edits to {self.workspace.db_dir}: {exc}",
                      file=sys.stderr)
        return self.recovery_path

    def _handle_exception(self, error: Exception) -> None:
        # Textual's hook for an unhandled exception (the app exits after it)
        self.rescue_drafts(f"{type(error).__name__}: {error}")
        if self.crash_line is None:   # the traceback goes to db/logs/, one line to people
            self.crash_line = crashlog.report(error, self.workspace.db_dir)
        super()._handle_exception(error)

    def _print_error_renderables(self) -> None:
        # Textual prints the traceback of a crash on the way out; print the one line instead
        if self.crash_line is None:
            super()._print_error_renderables()
            return
        self._exit_renderables.clear()
        print(f"error: {self.crash_line}", file=sys.stderr)


def run_app(workspace: Workspace, actor: str) -> None:
    store = Store(workspace.db_path, actor)
    if not problem_store.any_stored(store) and workspace.problems_dir.is_dir():
        sync.load(store, workspace.problems_dir, limit=workspace.limits.file_bytes)
    app = CuratorApp(workspace, actor, store=store)

    def closed_from_outside(signum, _frame) -> None:
        # terminal closed or process killed politely: keep the text, then leave
        app.rescue_drafts(f"signal {signal.Signals(signum).name}")
        app.exit(return_code=128 + signum)

    previous = {sig: signal.signal(sig, closed_from_outside)
                for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        app.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        # every way out that asked first cleared the drafts; anything left is rescued
        app.rescue_drafts("the app ended with unsaved edits")
        store.close()
    if app.recovery_path is not None:   # after Textual's own traceback, if it crashed
        print(f"Unsaved edits were written to {app.recovery_path}; open the problem and "
              "use 'Restore rescued edits' (ctrl+p) to get them back.", file=sys.stderr)
    if app.return_code:
        sys.exit(app.return_code)

