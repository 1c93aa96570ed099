"""The top line of every screen: the screens and their F-keys (the current one marked),
then WEAK ISOLATION when runs get no sandbox here, then the workspace, the user and what
the screen is showing.

It replaces Textual's Header so the F-keys never compete with a screen's own keys in the
Footer, and a person always sees where F2…F6 lead.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

SCREENS = (("f2", "problems", "Problems"), ("f3", "stats", "Stats"),
           ("f4", "candidates", "Candidates"), ("f5", "review", "Review"),
           ("f6", "release", "Release"))


class NavBar(Widget):
    DEFAULT_CSS = """
    NavBar {
        height: 1;
        dock: top;
        background: $panel;
        color: $text-muted;
    }
    """

    def on_mount(self) -> None:
        self.watch(self.screen, "sub_title", lambda _: self.refresh(), init=False)
        self.watch(self.app, "sub_title", lambda _: self.refresh(), init=False)

    def render(self) -> Text:
        app = self.app
        modes = getattr(app, "MODES", {})
        current = getattr(app, "current_mode", None)
        text = Text(no_wrap=True, overflow="ellipsis")
        for key, mode, title in SCREENS:
            if mode not in modes:
                continue
            here = mode == current
            text.append(f" {key.upper()} ", style="bold reverse" if here else "bold")
            text.append(f"{title} ", style="bold" if here else "")
        isolation = getattr(app, "isolation", "")
        if isolation and isolation != "strong":
            # untrusted code run from here is not sandboxed: always in sight, never cut
            warning = getattr(getattr(app, "current_theme", None), "warning", None) or "yellow"
            text.append(f" {isolation.upper()} ISOLATION ", style=f"bold reverse {warning}")
            text.append(" ")
        detail = self.screen.sub_title or app.sub_title
        right = f"{detail} " if detail else ""
        width = self.size.width
        gap = max(1, width - text.cell_len - len(right))
        if text.cell_len + len(right) < width:
            text.append(" " * gap)
            text.append(right)
        return text
