"""Problem: edit one problem — prompt, solution, tests, labels — run it, read its history.

Edits stay on this screen until ctrl+s, which saves through `curator.sync.save_and_write`
(database, audit rows, problems/<id>/ files). Leaving or quitting with unsaved edits asks.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from functools import partial
from typing import Any, ClassVar

from rich.markdown import Markdown as RichMarkdown
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import (
    Footer,
    Input,
    Label,
    Static,
    TabbedContent,
    TabPane,
    Tabs,
    TextArea,
)

from curator import sync
from curator.labels import AXES
from curator.panel import rounds
from curator.problem import STATUSES, Problem
from curator.pysource.formatting import FormatError, format_python
from curator.pysource.syntax import syntax_problem
from curator.store import problems as problem_store
from curator.tui import queries, recovery
from curator.tui.messages import DataChanged, ShowError
from curator.tui.screens.dialogs import ErrorModal, unsaved_modal
from curator.tui.screens.drafts import DraftsScreen
from curator.tui.widgets.editors import CodeEditor, Editor, PromptEditor
from curator.tui.widgets.history_pane import HistoryPane
from curator.tui.widgets.label_picker import Choice, LabelPicker
from curator.tui.widgets.nav_bar import NavBar
from curator.tui.widgets.runs_pane import RunsPane
from curator.tui.widgets.validity_pane import ValidityPane
from curator.tui.widgets.vote_pane import VotePane

TABS = ("prompt", "solution", "tests", "labels", "runs", "history")
TEXT_FIELDS = {"prompt": "#prompt-editor", "solution": "#solution-editor",
               "tests": "#tests-editor"}
FILENAMES = {"prompt": "prompt.md", "solution": "solution.py", "tests": "test_solution.py"}
STATUS_HELP = {
    "draft": "Being written or fixed; not offered to models yet.",
    "ready": "Reviewed: prompt, tests and labels checked, the reference passes.",
    "released": "Part of a published release; change it only through a new version.",
    "retired": "Kept for history, left out of releases and statistics.",
}
PREVIEW_DELAY_S = 0.3


class ProblemScreen(Screen):
    HELP = """\
## Problem screen

Tabs: **Prompt** (Markdown + preview), **Solution** and **Tests** (Python), **Labels**,
**Runs**, **History**; **alt+→** / **alt+←** move between tabs (**alt+1**…**alt+6** jump
straight to one where the terminal sends them). **ctrl+s** saves to the
database and to `problems/<id>/`; **ctrl+r** runs what is on screen (unsaved edits are
run too, and the run is marked *unsaved*); **ctrl+o** shows the prompt drafts side by
side (the docstring draft and a model's, to pick and edit); **ctrl+b** formats
the code in the current editor with black; **ctrl+t** validates the saved problem (do
its tests fail a stub, is the reference stable, how many mutants do they kill; shown in
the Runs tab) and **ctrl+n** accepts the node ids it proposes; **Escape** leaves (asks
first when there are
unsaved edits). Unsaved edits are marked with ● in the title line.

In a label round (`curator labels assign`), the Labels tab of a problem assigned to you
is your ballot: number keys pick your labels, **v** saves the vote; the problem's labels
and the other votes stay hidden until you have voted. **n** / **p** / **]** walk your
assignments (position and progress in the ballot's top line).
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="problem.save", priority=True,
                tooltip="Save to the database and the problem's files"),
        Binding("ctrl+r", "run", "Run", id="problem.run",
                tooltip="Run the solution against the tests as they are on screen "
                        "(unsaved edits too, marked as such)"),
        Binding("ctrl+g", "cancel_run", "Cancel run", id="problem.cancel_run",
                tooltip="Cancel the run or validation in progress"),
        Binding("ctrl+t", "validate", "Validate", id="problem.validate",
                tooltip="Do the tests catch wrong answers? Stub, 3 repeats, 20 mutants "
                        "(as `curator validate`)"),
        Binding("ctrl+n", "accept_repair", "Accept tests", id="problem.accept_repair",
                tooltip="Accept the node ids the validation proposed"),
        Binding("ctrl+o", "drafts", "Drafts", id="problem.drafts",
                tooltip="The prompt drafts side by side (docstring and model)"),
        Binding("ctrl+b", "format", "Black", id="problem.format",
                tooltip="Format the code in the current editor with black"),
        Binding("ctrl+z", "undo_label", "Undo label", id="problem.undo_label",
                tooltip="Undo the last label change"),
        Binding("escape", "back", "Back", id="problem.back",
                tooltip="Back to the problems list (asks about unsaved edits)"),
    ]

    def __init__(self, problem_id: str, tab: str | None = None) -> None:
        super().__init__()
        self.problem_id = problem_id
        self.initial_tab = tab
        self.blind = False   # a label round hides the labels until this person votes
        self.problem: Problem | None = None
        self.label_undo: list[tuple[str, str]] = []   # (axis, value before)
        self._shown_dirty: list[str] = []
        self._pane_lock = asyncio.Lock()
        self._preview_timer: Timer | None = None

    # -- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        store = self.app.store
        self.problem = problem_store.get(store, self.problem_id)
        problem = self.problem
        suggestions = self._suggestions()
        yield NavBar()
        yield Static("", id="problem-heading", markup=False)
        with TabbedContent(id="problem-tabs", initial="prompt"):
            with TabPane("Prompt", id="prompt"), Horizontal(id="prompt-split"):
                editor = PromptEditor(problem.prompt, id="prompt-editor", soft_wrap=True,
                                      language=self._markdown_language())
                editor.border_title = "prompt.md"
                yield editor
                with VerticalScroll(id="prompt-preview-box") as box:
                    box.border_title = "Preview"
                    # rich's Markdown: Textual's Markdown widget took ~1 s to open a
                    # prompt with code fences (it guesses languages with pygments)
                    yield Static(RichMarkdown(problem.prompt), id="prompt-preview")
            with TabPane("Solution", id="solution"):
                editor = CodeEditor.code_editor(problem.solution, language="python",
                                                id="solution-editor", theme="css")
                editor.border_title = "solution.py"
                yield editor
            with TabPane("Tests", id="tests"):
                if problem.tests is not None:
                    editor = CodeEditor.code_editor(problem.tests, language="python",
                                                    id="tests-editor", theme="css")
                    editor.border_title = "test_solution.py"
                else:
                    node_ids = "\n".join(problem.test_node_ids or [])
                    editor = TextArea(node_ids, id="tests-nodes", read_only=True)
                    editor.border_title = "upstream test node ids (repo-backed problem)"
                yield editor
            with TabPane("Labels", id="labels"), Vertical(id="labels-box"):
                with Horizontal(id="title-row"):
                    yield Label("Title ", id="title-label")
                    yield Input(problem.title, id="title-input", compact=True)
                choices = {axis: [Choice(r["slug"], r["name"], r["definition"])
                                  for r in store.labels(axis)] for axis in AXES}
                ballot = rounds.view(store, problem.id, self.app.actor)
                if ballot.assigned:   # this person's vote in a label round, blind first
                    self.blind = ballot.blind
                    yield VotePane(problem.id, ballot, choices, id="vote-pane")
                with Horizontal(id="pickers") as pickers:
                    pickers.display = not ballot.assigned
                    for axis in AXES:
                        yield LabelPicker(axis, axis.capitalize(), choices[axis],
                                          getattr(problem, axis),
                                          suggestions.get(axis), id=f"pick-{axis}")
                    yield LabelPicker(
                        "status", "Status",
                        [Choice(s, s, STATUS_HELP[s]) for s in STATUSES],
                        problem.status, clearable=False, id="pick-status")
                with VerticalScroll(id="label-help-box") as box:
                    box.border_title = "Definition"
                    yield Static("", id="label-help")
            # Runs and History are built when first shown: opening a problem stays quick
            yield TabPane("Runs", id="runs")
            yield TabPane("History", id="history")
        yield Footer(compact=True)

    def _markdown_language(self) -> str | None:
        try:
            from textual._tree_sitter import get_language

            return "markdown" if get_language("markdown") is not None else None
        except Exception:   # noqa: BLE001 - highlighting is optional
            return None

    def _suggestions(self) -> dict[str, dict[str, str]]:
        found: dict[str, dict[str, str]] = {}
        for row in queries.label_suggestions(self.app.store, self.problem_id):
            reason = row.get("reason") or ""
            if row.get("score") is not None:
                reason = f"{row['score']:.2f} {reason}".strip()
            found.setdefault(row["axis"], {}).setdefault(row["slug"], reason or "mined")
        return found

    def on_mount(self) -> None:
        self.app.problem_screen = self
        self._heading()
        drafts = self.app.drafts.get(self.problem_id)
        if drafts:   # edits left on a screen that was closed without saving or discarding
            self._apply_fields(drafts)
        saved = recovery.find(self.app.workspace.db_dir, self.problem_id)
        if saved and not drafts:
            path, _ = saved[0]
            self.notify(f"Unsaved edits of this problem were rescued to {path.name}; "
                        "ctrl+p → 'Restore rescued edits' to load them.",
                        severity="warning", timeout=10)
        self.query_one("#prompt-editor").focus()
        if self.initial_tab in TABS:
            self.call_after_refresh(self.show_tab, self.initial_tab)

    def on_unmount(self) -> None:
        if self.app.problem_screen is self:
            self.app.problem_screen = None

    # -- edited state --------------------------------------------------------------------

    def current(self) -> Problem:
        """The problem as edited on screen (not yet saved)."""
        assert self.problem is not None
        problem = copy.deepcopy(self.problem)
        for field, selector in TEXT_FIELDS.items():
            found = self.query(selector)
            if found:
                setattr(problem, field, found.first(TextArea).text)
        for picker in self.query("#pickers LabelPicker").results(LabelPicker):
            setattr(problem, picker.axis, picker.value)
        problem.title = self.query_one("#title-input", Input).value
        return problem

    def edited_fields(self) -> dict[str, str]:
        assert self.problem is not None
        edited = self.current()
        return {field: getattr(edited, field)
                for field in ("title", "prompt", "solution", "tests", *AXES, "status")
                if getattr(edited, field) != getattr(self.problem, field)}

    def dirty_fields(self) -> list[str]:
        return list(self.edited_fields())

    def _apply_fields(self, fields: dict[str, str]) -> None:
        for field, value in fields.items():
            if field in TEXT_FIELDS and self.query(TEXT_FIELDS[field]):
                editor = self.query_one(TEXT_FIELDS[field], Editor)
                editor.replace_all(value)
            elif field == "title":
                self.query_one("#title-input", Input).value = value
            elif self.query(f"#pick-{field}"):
                self.query_one(f"#pick-{field}", LabelPicker).set_value(value)
        self._edited()

    def _edited(self) -> None:
        """Something changed on screen: remember it as a draft, update the title line."""
        fields = self.edited_fields()
        if fields:
            self.app.drafts[self.problem_id] = fields
        else:
            self.app.drafts.pop(self.problem_id, None)
        if list(fields) != self._shown_dirty:   # redraw the title line and keys on change only
            self._shown_dirty = list(fields)
            self._heading(fields)
            self.refresh_bindings()

    def _heading(self, fields: dict[str, str] | None = None) -> None:
        assert self.problem is not None
        if fields is None:
            fields = self.edited_fields()
        problem = self.problem
        marker = f"● unsaved: {', '.join(fields)}" if fields else "saved"
        labels = "labels hidden until you vote" if self.blind \
            else " / ".join(getattr(problem, a) or "–" for a in AXES)
        flag = ""
        if problem.kind == "method" and problem.class_name is None:
            # a DL-Bench class file that names no class (flag class_missing)
            flag = f" · class_missing: {problem.entry_point} of which class? (dlbench resolve)"
        self.query_one("#problem-heading", Static).update(
            f"{problem.id} · {problem.status} · {labels} · {marker}{flag}")
        self.query_one("#problem-heading").set_class(bool(fields), "dirty")
        self.sub_title = f"{problem.id}{' ●' if fields else ''}"

    @on(TextArea.Changed)
    def _text_changed(self, event: TextArea.Changed) -> None:
        if event.text_area.id == "prompt-editor":
            if self._preview_timer is not None:
                self._preview_timer.stop()
            self._preview_timer = self.set_timer(PREVIEW_DELAY_S, self._update_preview)
        if event.text_area.id in ("prompt-editor", "solution-editor", "tests-editor"):
            self._edited()

    @on(Input.Changed, "#title-input")
    def _title_changed(self) -> None:
        self._edited()

    def _update_preview(self) -> None:
        self.query_one("#prompt-preview", Static).update(
            RichMarkdown(self.query_one("#prompt-editor", TextArea).text))

    def on_label_picker_changed(self, event: LabelPicker.Changed) -> None:
        self.label_undo.append((event.axis, event.before))
        self._edited()
        self._explain(event.picker)

    def on_vote_pane_voted(self, event: VotePane.Voted) -> None:
        self.blind = event.blind
        self._heading()
        for pane in self.query(HistoryPane):   # the labels in the log: hidden or shown
            pane.refresh_rows()

    def on_label_picker_explain(self, event: LabelPicker.Explain) -> None:
        self._explain(event.picker, event.choice)

    def _explain(self, picker: LabelPicker, choice: Choice | None = None) -> None:
        if choice is None and picker.highlighted is not None:
            choice = picker.choices[picker.highlighted]
        lines = []
        if choice is not None:
            lines.append(f"{picker.axis}: {choice.name} ({choice.slug})\n{choice.definition}")
        for slug, why in picker.suggestions.items():
            lines.append(f"☆ mined suggestion: {picker.name_of(slug) or slug} — {why}"
                         "  (a accepts)")
        self.query_one("#label-help", Static).update("\n".join(lines))

    # -- saving -----------------------------------------------------------------------------

    def save(self) -> bool:
        """Check, save to the database and files; True when saved (or nothing to save)."""
        problem = self.current()
        for field in ("solution", "tests"):
            text = getattr(problem, field)
            if text is None:
                continue
            issue = syntax_problem(text, FILENAMES[field])
            if issue is not None:
                self._show_syntax_problem(field, issue)
                return False
        if not self.dirty_fields():
            self.notify("Nothing to save", timeout=2)
            return True
        try:
            changed = sync.save_and_write(self.app.store, problem,
                                          self.app.workspace.problems_dir)
        except Exception as exc:   # noqa: BLE001 - the person needs to see it, edits stay
            self.post_message(ShowError(f"Could not save {problem.id}", exc))
            return False
        self.problem = problem_store.get(self.app.store, problem.id)
        self.app.drafts.pop(self.problem_id, None)
        self.label_undo.clear()
        self.post_message(DataChanged())
        self._shown_dirty = ["(saved)"]   # force the title line to redraw
        self._edited()
        for pane in self.query(HistoryPane):
            pane.refresh_rows()
        self.notify(f"Saved {problem.id}: {', '.join(changed) or 'files rewritten'}")
        return True

    def _show_syntax_problem(self, field: str, issue) -> None:
        self.query_one(TabbedContent).active = field
        editor = self.query_one(TEXT_FIELDS[field], TextArea)
        lines = editor.text.splitlines()
        line = lines[issue.line - 1] if 0 < issue.line <= len(lines) else ""
        details = f"{issue}\n\n{issue.line:>5} | {line}\n" \
                  f"{' ' * 5} | {' ' * max(issue.column - 1, 0)}^"
        editor.cursor_location = (max(issue.line - 1, 0), max(issue.column - 1, 0))
        editor.focus()
        self.app.push_screen(ErrorModal(f"Not saved: syntax error in {FILENAMES[field]}",
                                        str(issue), details))

    # -- leaving ------------------------------------------------------------------------------

    def leave_then(self, then: Callable[[], Any] | None = None, *, leaving: str = "leaving",
                   close: bool = True) -> None:
        """Leave this screen (asking about unsaved edits first), then call `then`."""

        def finish() -> None:
            if close and self.is_current:
                self.app.pop_screen()
            if then is not None:
                then()

        fields = self.dirty_fields()
        if not fields:
            finish()
            return

        def answered(choice: str | None) -> None:
            if choice == "save":
                if self.save():
                    finish()
            elif choice == "discard":
                self.app.drafts.pop(self.problem_id, None)
                finish()

        self.app.push_screen(unsaved_modal(self.problem_id, fields, leaving), answered)

    # -- actions --------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        runs = self.query(RunsPane)
        running = bool(runs) and runs.first().running
        checks = self.query(ValidityPane)
        validating = bool(checks) and checks.first().running
        if action == "cancel_run":
            return running or validating
        if action == "run":
            return not running
        if action == "validate":
            return not validating
        if action == "accept_repair":
            return bool(checks) and checks.first().can_accept
        if action == "undo_label":
            return bool(self.label_undo)
        if action == "format":
            focused = self.focused
            return isinstance(focused, CodeEditor) or None
        return True

    def action_reload(self) -> None:
        """Read the problem again (changed by the CLI, say); unsaved edits stay on screen."""
        fresh = problem_store.get(self.app.store, self.problem_id)
        edits = self.edited_fields()
        self.problem = fresh
        if edits:
            self._apply_fields(edits)
            self.notify("Reloaded; your unsaved edits stay on screen", timeout=3)
        else:
            self._apply_fields({f: getattr(fresh, f) for f in
                                ("title", "prompt", "solution", "tests", *AXES, "status")
                                if getattr(fresh, f) is not None})
            self.notify("Reloaded from the database", timeout=2)
        for pane in self.query(RunsPane):
            pane.refresh_history()
        for pane in self.query(ValidityPane):
            pane.refresh_validity()
        for pane in self.query(HistoryPane):
            pane.refresh_rows()
        self._shown_dirty = ["(reloaded)"]
        self._edited()

    def action_save(self) -> None:
        self.save()

    def action_drafts(self) -> None:
        self.app.push_screen(DraftsScreen(self.problem_id))

    def action_back(self) -> None:
        self.leave_then()

    async def _ensure_pane(self, tab: str) -> None:
        lazy = {"runs": (RunsPane, "runs-pane"), "history": (HistoryPane, "history-pane")}
        async with self._pane_lock:   # a key and the tab event may both ask at once
            if tab in lazy and not self.query(f"#{lazy[tab][1]}"):
                cls, pane_id = lazy[tab]
                await self.query_one(f"#{tab}", TabPane).mount(
                    cls(self.problem_id, id=pane_id))
                if tab == "runs":
                    await self.query_one("#runs", TabPane).mount(
                        ValidityPane(self.problem_id, id="validity-pane"))

    async def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        await self._ensure_pane(tab)
        self._focus_tab_content(tab)

    async def show_tab(self, tab: str) -> None:
        """The app's alt+←/→ and alt+1…6 land here: build the pane, focus its content."""
        await self.action_tab(tab)

    async def action_cycle_tab(self, step: int) -> None:
        current = self.query_one(TabbedContent).active
        index = TABS.index(current) if current in TABS else 0
        await self.action_tab(TABS[(index + step) % len(TABS)])

    def _focus_tab_content(self, tab: str) -> None:
        targets = {"prompt": "#prompt-editor", "solution": "#solution-editor",
                   "tests": "#tests-editor",
                   "labels": "#vote-pane VotePicker" if self.query("#vote-pane")
                   else "#pick-stage",
                   "runs": "#run-history", "history": "#history-table"}
        found = self.query(targets[tab])
        if found:
            found.first().focus()

    async def action_run(self) -> None:
        await self.action_tab("runs")
        self.query_one(RunsPane).start(self.current())
        self.refresh_bindings()

    def action_cancel_run(self) -> None:
        for pane in self.query(RunsPane):
            pane.cancel()
        for pane in self.query(ValidityPane):
            pane.cancel()

    async def action_validate(self) -> None:
        if self.edited_fields():
            self.notify("Validation runs the saved problem: ctrl+s first to include your "
                        "edits", severity="warning")
        await self.action_tab("runs")
        self.query_one(ValidityPane).start()
        self.refresh_bindings()

    def action_accept_repair(self) -> None:
        panes = self.query(ValidityPane)
        if panes:
            panes.first().accept()
            self.action_reload()
            self.refresh_bindings()

    def on_validity_pane_finished(self) -> None:
        self.refresh_bindings()

    def action_format(self) -> None:
        focused = self.focused
        if not isinstance(focused, CodeEditor):
            self.notify("Black formats the Solution or Tests editor: focus one first",
                        severity="warning")
            return
        try:
            formatted = format_python(focused.text)
        except FormatError as exc:
            self.post_message(ShowError("Black could not format this code", str(exc)))
            return
        if formatted == focused.text:
            self.notify("Already formatted", timeout=2)
            return
        focused.replace_all(formatted)
        self.notify("Formatted with black (ctrl+z undoes)")

    def action_undo_label(self) -> None:
        if not self.label_undo:
            self.notify("No label change to undo", timeout=2)
            return
        axis, before = self.label_undo.pop()
        picker = self.query_one(f"#pick-{axis}", LabelPicker)
        picker.set_value(before, notify=False)   # no Changed message: nothing to undo again
        self._edited()
        self._explain(picker)
        self.refresh_bindings()

    def on_runs_pane_finished(self) -> None:
        self.refresh_bindings()

    @on(TabbedContent.TabActivated)
    async def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        created = not self.query(HistoryPane)
        await self._ensure_pane(event.pane.id or "")
        if event.pane.id == "history" and not created:
            self.query_one(HistoryPane).refresh_rows()

    def restore_rescued(self) -> None:
        saved = recovery.find(self.app.workspace.db_dir, self.problem_id)
        if not saved:
            self.notify("No rescued edits for this problem", severity="warning")
            return
        path, fields = saved[0]
        self._apply_fields(fields)
        self.notify(f"Restored edits from {path.name}; ctrl+s saves them")

    def palette_commands(self):
        yield ("Restore rescued edits", "Load unsaved edits rescued after a crash",
               self.restore_rescued)
        for n, tab in enumerate(TABS, 1):
            yield (f"Show {tab} tab", f"alt+{n}", partial(self.action_tab, tab))
        yield ("Focus tabs", "Move focus to the tab bar",
               lambda: self.query_one(Tabs).focus())
