"""Candidates: functions mined from repositories — accept one as a problem, reject, mine more.

Every action is a call into curator.mining (the same functions as `curator candidates …`
and `curator mine`); this screen only shows and asks.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane, TextArea
from textual.worker import Worker

from curator.mining import mine as mining
from curator.mining import promote, prompt_drafts
from curator.panel import candidates as candidate_panel
from curator.repos import environments
from curator.store import candidates as candidate_store
from curator.tui.messages import DataChanged, OpenProblem, run_guarded
from curator.tui.screens.accept_dialog import AcceptModal
from curator.tui.screens.dialogs import InputModal
from curator.tui.screens.drafts import DraftsScreen
from curator.tui.tasks import Task, TaskEnded, run_task
from curator.tui.widgets.discover_pane import DiscoverPane
from curator.tui.widgets.nav_bar import NavBar
from curator.tui.widgets.task_bar import TaskBar

STATUS_CYCLE = ("new", "all", "accepted", "rejected", "vanished")


def describe(row: dict) -> str:
    """The side panel: where it comes from, why it scored, its tests and label hints."""
    lines = [f"{row['qualname']}  ({row['kind']}, score {row['score']:.2f}, {row['status']})",
             f"{row['repo_name']} @ {row['commit_sha'][:12]}",
             f"{row['path']}:{row['line_start']}-{row['line_end']}  licence {row['license']}"]
    if row.get("problem_id"):
        lines.append(f"accepted as problem {row['problem_id']}")
    if row.get("reason"):
        lines.append(f"rejected: {row['reason']}")
    lines += ["", "Evidence:"]
    lines += [f"  {e.get('weight', 0):+.2f} {e.get('kind', '')}: {e.get('detail', '')}"
              for e in row.get("evidence") or []] or ["  (none)"]
    lines += ["", f"Tests ({len(row.get('tests') or [])}):"]
    lines += [f"  {t}" for t in row.get("tests") or []] or ["  (none: cannot be accepted)"]
    suggestions = row.get("suggestions") or []
    if suggestions:
        lines += ["", "Suggested labels:"]
        lines += [f"  {s['axis']}: {s['slug']} ({s.get('rule', '')})" for s in suggestions]
    return "\n".join(lines)


def summary_line(status: str, cursor: int | None, shown: int, counts: dict[str, int]) -> str:
    """The status line: the position, what is filtered, and the count of every status."""
    position = f"row {cursor + 1} of {shown}" if cursor is not None and shown else "no rows"
    what = "all statuses" if status == "all" else f"status:{status}"
    total = sum(counts.values())
    tally = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none mined yet"
    return f"{position} · showing {what} (f changes it) · {total} candidates: {tally}"


class CandidatesScreen(Screen):
    HELP = """\
## Candidates

Functions mined from upstream repositories, best DL-relevance score first. **a** accepts
the highlighted one as a draft repo-backed problem (you confirm its id), **r** rejects it
with a reason, **s** skips to the next, **f** cycles the status shown (new, all,
accepted, rejected, vanished), **m** mines a repository (a local path or URL, optionally
followed by a revision and `--name OWNER/NAME`) with its phases shown (fetch, parse,
link tests, score) — **ctrl+g** cancels and nothing is written — and **o** opens the
problem an accepted candidate became. **e** builds (or reuses) the isolated environment
the highlighted candidate's repository runs its tests in — its declared dependencies,
pytest and this torch, at the pinned commit — with progress (**ctrl+g** cancels).
**ctrl+l** reloads (after mining from a shell, say). In the accept dialog **ctrl+d** also
has the model of curator.toml's `[llm]` draft the prompt, then shows both drafts side by
side. **alt+2** opens the **Discover** tab: GitHub repositories by topic and stars, with
licence, last push and whether they have tests; **q** queues one for `curator mine
--queued`.

A panel decides candidates too: **y** / **n** vote the highlighted one relevant or not (as
`curator candidates vote`); the **votes** column shows the votes so far (✓ relevant, ✗
not), and curator.toml's `[candidates] accept_when` (default "2 of 3") promotes it to a
draft problem or rejects it as soon as the rule decides.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "accept", "Accept", id="candidates.accept",
                tooltip="Accept as a draft problem"),
        Binding("r", "reject", "Reject", id="candidates.reject",
                tooltip="Reject with a reason"),
        Binding("s", "skip", "Skip", id="candidates.skip", tooltip="Go to the next candidate"),
        Binding("m", "mine", "Mine", id="candidates.mine",
                tooltip="Mine a repository (path or URL) into candidates"),
        Binding("e", "environment", "Environment", id="candidates.environment",
                tooltip="Build the test environment of the candidate's repository"),
        Binding("ctrl+g", "cancel_mine", "Cancel", id="candidates.cancel",
                tooltip="Cancel the mining in progress"),
        Binding("f", "cycle_status", "Status", id="candidates.status",
                tooltip="Show new / all / accepted / rejected / vanished candidates"),
        Binding("y", "vote('yes')", "Relevant", id="candidates.vote_yes",
                tooltip="Vote: relevant (accept_when in curator.toml decides)"),
        Binding("n", "vote('no')", "Not relevant", id="candidates.vote_no",
                tooltip="Vote: not relevant"),
        Binding("o", "open_problem", "Open problem", id="candidates.open", show=False,
                tooltip="Open the problem an accepted candidate became"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.status = "new"
        self.rows: list[dict] = []
        self._mining: Task | None = None
        self._seen_version = -1

    def compose(self) -> ComposeResult:
        yield NavBar()
        yield Static("", id="cand-summary", classes="status-line")
        with TabbedContent(id="cand-tabs"):
            with TabPane("Candidates", id="cand-list"):
                table = DataTable(id="cand-table", cursor_type="row", zebra_stripes=True)
                table.border_title = "Candidates"
                yield table
                with Horizontal(id="cand-detail"):
                    source = TextArea.code_editor("", language="python", read_only=True,
                                                  id="cand-source", theme="css")
                    source.border_title = "Source"
                    yield source
                    with VerticalScroll(id="cand-info-box", classes="pane") as box:
                        box.border_title = "Evidence and tests"
                        yield Static("", id="cand-info", markup=False)
            with TabPane("Discover", id="cand-discover"):
                yield DiscoverPane()
        yield TaskBar(id="cand-task")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#cand-table", DataTable).add_columns(
            "id", "score", "votes", "repo", "function", "tests", "status")
        self.query_one("#cand-task").display = False
        self._seen_version = self.app.data_version
        self.reload()
        self.query_one("#cand-table").focus()

    def on_screen_resume(self) -> None:
        if self._seen_version != self.app.data_version:
            self._seen_version = self.app.data_version
            self.reload()

    # -- data ----------------------------------------------------------------------------

    def reload(self, keep: int | None = None) -> None:
        self.rows = candidate_store.list_rows(self.app.store, status=self.status)
        table = self.query_one("#cand-table", DataTable)
        current = keep if keep is not None else self.current_id()
        table.clear()
        votes = candidate_panel.tally(self.app.store)
        for row in self.rows:
            # the votes next to the score: they stay in view at 80 columns
            table.add_row(str(row["id"]), f"{row['score']:.2f}",
                          candidate_panel.votes_text(votes.get(row["id"])), row["repo_name"],
                          row["qualname"], str(len(row["tests"])), row["status"],
                          key=str(row["id"]))
        if current is not None:
            index = next((i for i, r in enumerate(self.rows) if r["id"] == current), None)
            if index is not None:
                table.move_cursor(row=index)
        self._summary()
        self._show(self.current())

    def current_id(self) -> int | None:
        row = self.current()
        return row["id"] if row else None

    def current(self) -> dict | None:
        table = self.query_one("#cand-table", DataTable)
        if not self.rows or table.cursor_row is None or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row]

    def _summary(self) -> None:
        counts = candidate_store.status_counts(self.app.store)
        table = self.query_one("#cand-table", DataTable)
        self.query_one("#cand-summary", Static).update(
            summary_line(self.status, table.cursor_row if self.rows else None,
                         len(self.rows), counts))

    def _show(self, row: dict | None) -> None:
        source = self.query_one("#cand-source", TextArea)
        info = self.query_one("#cand-info", Static)
        if row is None:
            source.load_text("")
            info.update("No candidates here. Press m to mine a repository, f to show "
                        "other statuses.")
            return
        full = candidate_store.get(self.app.store, row["id"])
        source.load_text(full["source"])
        info.update(describe(full))

    @on(DataTable.RowHighlighted, "#cand-table")
    def _highlighted(self) -> None:
        self._show(self.current())
        self._summary()

    # -- actions ---------------------------------------------------------------------------

    async def show_tab(self, tab: str) -> None:
        """The app's alt+1/2 and alt+←/→: the candidates list or the Discover tab."""
        tabs = self.query_one("#cand-tabs", TabbedContent)
        tabs.active = tab
        target = "#cand-table" if tab == "cand-list" else "#discover-query"
        self.call_after_refresh(self.query_one(target).focus)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("accept", "reject", "skip", "cycle_status", "open_problem",
                      "environment", "vote") and self.is_mounted and \
                self.query_one("#cand-tabs", TabbedContent).active == "cand-discover":
            return False    # the candidate keys act on the hidden list: not on Discover
        mining_now = self._mining is not None   # until its thread has really ended
        if action == "cancel_mine":
            return mining_now and not self._mining.is_cancelled
        if action in ("mine", "environment"):
            return not mining_now
        return True

    def action_reload(self) -> None:
        self.reload()
        self.notify("Candidates reloaded", timeout=2)

    def action_skip(self) -> None:
        table = self.query_one("#cand-table", DataTable)
        if self.rows:
            table.move_cursor(row=min(table.cursor_row + 1, len(self.rows) - 1))

    def action_cycle_status(self) -> None:
        self.status = STATUS_CYCLE[(STATUS_CYCLE.index(self.status) + 1) % len(STATUS_CYCLE)]
        self.reload()

    def action_accept(self) -> None:
        row = self.current()
        if row is None:
            return
        if row["status"] == "accepted":
            self.notify(f"Already accepted as {row['problem_id']} (o opens it)",
                        severity="warning")
            return
        suggested = promote.default_id(self.app.store, row)

        def answered(choice: dict | None) -> None:
            if not choice:
                return
            problem_id = choice["id"]
            result = run_guarded(
                self, f"Could not accept candidate {row['id']}",
                lambda: promote.accept(self.app.store, self.app.workspace, row["id"],
                                       problem_id))
            if result:
                self.post_message(DataChanged())
                self.notify(f"Accepted as draft problem {result['problem_id']} "
                            "(o opens it)")
                self.reload(keep=row["id"])
                if choice["draft"]:
                    self._draft(result["problem_id"], row)

        self.app.push_screen(AcceptModal(
            f"Accept candidate {row['id']}", f"{row['qualname']} becomes a draft problem "
            "with this id:", suggested), answered)

    def _draft(self, problem_id: str, row: dict) -> None:
        """The configured model drafts the prompt (a thread task); both drafts then show."""
        module = promote.upstream_module(self.app.store, self.app.workspace, row) or \
            promote.solution_text(row)
        config = self.app.workspace.config
        self._drafting = run_task(
            self, lambda ctx: prompt_drafts.draft_with_settings(ctx.store, config, problem_id,
                                                                module),
            group="draft", label=f"drafting the prompt of {problem_id}…",
            bar=self.query_one("#cand-task", TaskBar), error_title="Prompt draft failed")
        self._drafting_problem = problem_id

    def action_reject(self) -> None:
        row = self.current()
        if row is None:
            return

        def answered(reason: str | None) -> None:
            if not reason:
                return
            if run_guarded(
                    self, f"Could not reject candidate {row['id']}",
                    lambda: candidate_store.reject(self.app.store, row["id"], reason)):
                self.notify(f"Rejected candidate {row['id']}")
                self.reload(keep=row["id"])

        self.app.push_screen(InputModal(
            f"Reject candidate {row['id']}", f"Why is {row['qualname']} not a good problem?",
            placeholder="not DL-specific / trivial / tests too weak …"), answered)

    def action_vote(self, answer: str) -> None:
        row = self.current()
        if row is None:
            return
        result = run_guarded(self, f"Vote on candidate {row['id']} not recorded",
                             lambda: candidate_panel.vote(self.app.store, self.app.workspace,
                                                          row["id"], self.app.actor, answer))
        if result is None:
            return
        self.post_message(DataChanged())
        counts = f"{result['yes']}✓ {result['no']}✗, rule {result['rule']}"
        if result["decision"] == "accepted":
            self.notify(f"Candidate {row['id']}: {counts}: accepted as draft problem "
                        f"{result['problem_id']} (o opens it)")
        elif result["decision"] == "rejected":
            self.notify(f"Candidate {row['id']}: {counts}: rejected")
        elif result["decision"] == "blocked":
            self.notify(f"Candidate {row['id']}: {counts}, but it cannot become a problem: "
                        f"{result['error']}", severity="warning", timeout=8)
        else:
            self.notify(f"Candidate {row['id']}: {counts}: waiting for votes", timeout=3)
        self.reload(keep=row["id"])

    def action_open_problem(self) -> None:
        row = self.current()
        if row and row.get("problem_id"):
            self.post_message(OpenProblem(row["problem_id"]))
        else:
            self.notify("Only an accepted candidate has a problem", severity="warning")

    def action_mine(self) -> None:
        def answered(text: str | None) -> None:
            if not text:
                return
            words = text.split()
            name = None
            if "--name" in words:
                at = words.index("--name")
                name = words[at + 1] if at + 1 < len(words) else ""
                del words[at:at + 2]
            if not words:
                return
            source, rev = words[0], (words[1] if len(words) > 1 else None)
            self._start(f"mining {source}…", lambda ctx: mining.mine(
                ctx.store, ctx.workspace, source, rev, progress=ctx.progress,
                cancelled=ctx.cancelled, name=name).to_json())

        self.app.push_screen(InputModal(
            "Mine a repository", "Path or URL of a git repository, optionally followed by "
            "a revision and --name OWNER/NAME:",
            placeholder="~/src/kornia v0.7.0 --name kornia/kornia"), answered)

    def action_cancel_mine(self) -> None:
        if self._mining is not None:
            self._mining.cancel()   # the core's loops see it within a few milliseconds
            self.query_one(TaskBar).start("cancelling…")

    def _start(self, label: str, func) -> None:
        self._mining = run_task(self, func, group="mine", label=label,
                                bar=self.query_one(TaskBar),
                                error_title="Mining or environment build failed")
        self.refresh_bindings()

    def action_environment(self) -> None:
        row = self.current()
        if row is None:
            self.notify("No candidate highlighted", severity="warning")
            return
        repo = row["repo_name"]
        # the same core function as `curator repo env`, with progress and cancel
        self._start(f"environment of {repo}…", lambda ctx: environments.build(
            ctx.store, ctx.workspace, repo, progress=ctx.progress, cancelled=ctx.cancelled))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if self._mining is not None and event.worker is self._mining.worker:
            self.refresh_bindings()

    def on_task_ended(self, event: TaskEnded) -> None:
        if event.task is getattr(self, "_drafting", None):
            self._drafting = None
            bar = self.query_one(TaskBar)
            if event.status == "done":
                bar.finish(f"{self._drafting_problem}: model draft stored")
                self.post_message(DataChanged())
                self.app.push_screen(DraftsScreen(self._drafting_problem))
            else:
                bar.finish(f"{self._drafting_problem}: no model draft ({event.status})")
            return
        if event.task is not self._mining:
            return
        self._mining = None
        self.refresh_bindings()
        bar = self.query_one(TaskBar)
        if isinstance(event.result, environments.EnvReport):
            env = event.result
            how = "reused" if env.reused else "built"
            text = (f"{env.repo}: environment {how} in {env.seconds:.1f} s, python "
                    f"{env.python_version}, {len(env.packages)} package(s)")
            bar.finish(text)
            self.notify(text + (f"; left out {len(env.skipped)} optional requirement(s)"
                                if env.skipped else ""), timeout=8)
        elif event.result is not None:
            report = event.result
            text = (f"{report['name']} @ {report['commit'][:12]}: "
                    f"{report['candidates']} candidates, {report['new']} new")
            if report.get("already_mined"):
                text += " (already mined)"
            bar.finish(text)
            self.notify(text)
            self.reload()
        elif event.cancelled:
            bar.finish("mining cancelled; nothing was written")
            self.notify("Mining cancelled", severity="warning")
        else:
            bar.finish("failed")
