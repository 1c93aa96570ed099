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


def question(untrusted: list[str], why: str = trust.WEAK) -> str:
    shown = ", ".join(untrusted[:3]) + (f" and {len(untrusted) - 3} more"
                                        if len(untrusted) > 3 else "")
    if why == trust.SHARED_UID:
        return (f"curator runs as an ordinary user: {shown} would run in the sandbox but "
                "with the judge's uid, able to write the judge's files (this kernel "
                "refuses the user namespace that would make them read-only to it). "
                "Started as root, runs get a uid of their own. Run untrusted code this "
                "way for the rest of this session?")
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
    why = trust.consent_needed(app.isolation_level())
    if not message.untrusted or not why or trust.allowed(conf):
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

    shared = why == trust.SHARED_UID
    app.push_screen(ChoiceModal("Shared uid" if shared else "Weak isolation",
                                question(message.untrusted, why),
                                [(CANCEL, "Cancel", "primary"),
                                 (RUN, "Run it with my uid" if shared
                                  else "Run without the sandbox", "warning")],
                                cancel=CANCEL), answered)
