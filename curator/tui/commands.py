"""Command palette (ctrl+p): the current screen's actions, the screens, "go to problem …"."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from textual.actions import parse as parse_action
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode
from textual.screen import Screen

from curator.store import problems as problem_store
from curator.tui.messages import OpenProblem

# covered by Textual's own commands (Quit, palette) or meaningless from the palette
SKIP = {"quit", "app.quit", "command_palette", "app.command_palette"}


def _command_nodes(app: App, screen: Screen) -> list[DOMNode]:
    """The screen, the app, and our own widgets around the focus (not Textual's editors,
    whose cursor keys would drown the list)."""
    nodes: list[DOMNode] = []
    focused = screen.focused
    if focused is not None:
        nodes += [n for n in focused.ancestors_with_self
                  if n is not screen and n is not app
                  and type(n).__module__.startswith("curator.tui")]
    return nodes + [screen, app]


def binding_commands(app: App, screen: Screen) -> Iterable[SystemCommand]:
    """One command per key binding of the current screen (even one a focused editor hides)."""
    keys_now = {(active.binding.action, active.node): key
                for key, active in screen.active_bindings.items()}
    seen: set[str] = set()
    for node in _command_nodes(app, screen):
        for binding in Binding.make_bindings(type(node).BINDINGS):
            if binding.system or not binding.description or binding.action in SKIP:
                continue
            _, name, params = parse_action(binding.action)
            check = node.check_action(name, params)
            if check is False or check is None or binding.description in seen:
                continue
            seen.add(binding.description)
            key = keys_now.get((binding.action, node))
            key_display = app.get_key_display(binding.with_key(key)) if key else \
                app.get_key_display(binding)
            # plain text: the palette reads help as markup, and key names like "/" are not
            help_text = f"{binding.tooltip} · key {key_display}" if binding.tooltip \
                else f"key {key_display}"
            yield SystemCommand(binding.description, help_text.replace("[", r"\["),
                                partial(app.run_action, binding.action, node))


def screen_commands(screen: Screen) -> Iterable[SystemCommand]:
    """Actions a screen offers without a key (it defines `palette_commands`)."""
    extra = getattr(screen, "palette_commands", None)
    if extra is not None:
        for title, help_text, callback in extra():
            yield SystemCommand(title, help_text, callback)


class GoToProblem(Provider):
    """`go to problem …`: jump to a problem by id or title."""

    PREFIXES = ("go to problem", "goto problem", "go to", "goto", "problem", "open")

    def _needle(self, query: str) -> str:
        lowered = query.lower().strip()
        for prefix in self.PREFIXES:
            if lowered.startswith(prefix):
                return query.strip()[len(prefix):].strip()
        return query.strip()

    def _open(self, problem_id: str) -> None:
        self.app.post_message(OpenProblem(problem_id))

    async def search(self, query: str) -> Hits:
        needle = self._needle(query)
        if not needle:
            return
        store = self.app.store   # type: ignore[attr-defined]
        matcher = self.matcher(needle)
        for row in problem_store.find(store, needle, limit=30):
            text = f"Go to problem {row['id']}"
            score = max(matcher.match(row["id"]), matcher.match(row["title"]), 0.1)
            yield Hit(score, f"Go to problem {row['id']}", partial(self._open, row["id"]),
                      text=text, help=row["title"])

    async def discover(self) -> Hits:
        store = self.app.store   # type: ignore[attr-defined]
        for row in problem_store.recently_updated(store, 5):
            yield DiscoveryHit(f"Go to problem {row['id']}", partial(self._open, row["id"]),
                               help=f"recently changed: {row['title']}")
