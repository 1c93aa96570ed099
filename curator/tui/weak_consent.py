"""The app's one question before untrusted code runs without the sandbox.

Under weak isolation the first sample evaluation or run of a mined or imported problem in
a session asks; a yes holds for the rest of the session (the core then gets allow_weak),
a no runs nothing. `[execution] allow_weak = true` in curator.toml means yes without
asking; references the user wrote are never asked about (the core names what is
untrusted: curator.execution.trust).
"""

from __future__ import annotations

from curator.execution import trust
from curator.tui.messages import AskWeakConsent
from curator.tui.screens.dialogs import ChoiceModal

RUN, CANCEL = "weak-run", "weak-cancel"


def question(untrusted: list[str]) -> str:
    shown = ", ".join(untrusted[:3]) + (f" and {len(untrusted) - 3} more"
                                        if len(untrusted) > 3 else "")
    return (f"Isolation is weak (no working bubblewrap): {shown} would run able to read "
            "your files, write where you can and reach the network. Install bubblewrap "
            "for the sandbox (curator doctor says what is missing). Run untrusted code "
            "without it for the rest of this session?")


def handle(app, message: AskWeakConsent) -> None:
    """Call message.then at once, or after asking; message.declined on a no."""
    conf = app.workspace.config.execution
    if app.weak_allowed:
        message.then(True)
        return
    if not message.untrusted or app.isolation_level() != "weak" or trust.allowed(conf):
        message.then(None)
        return

    def answered(choice: str | None) -> None:
        if choice == RUN:
            app.weak_allowed = True
            message.then(True)
        else:
            app.notify("Nothing was run: untrusted code needs the sandbox, or your yes",
                       severity="warning")
            if message.declined is not None:
                message.declined()

    app.push_screen(ChoiceModal("Weak isolation", question(message.untrusted),
                                [(CANCEL, "Cancel", "primary"),
                                 (RUN, "Run without the sandbox", "warning")],
                                cancel=CANCEL), answered)
