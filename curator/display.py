"""Text from runs made safe to show to a person: nothing in it is interpreted.

Code under test prints whatever it likes, and its output, test ids and failure messages
reach terminals through CLI tables and the app. `visible` spells out every control
character (ESC, BEL, backspace, carriage return, C1 controls, bidirectional overrides)
as a Python-style escape, so an escape sequence can neither set the window title nor
clear the screen nor hide text. JSON output keeps the original text: it is data.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls, and the Unicode format characters
# that reorder or hide text (bidi embeddings, overrides, isolates, zero-width marks).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e"
                      "\u2060-\u2064\u2066-\u2069\ufeff]")
_LINE_BREAKS = re.compile("[\n\t]")


def _escape(match: re.Match) -> str:
    char = match.group()
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object, multiline: bool = True) -> str:
    """`text` with control characters shown as escapes (\\x1b, \\u202e, ...).

    Newlines and tabs are kept when `multiline`; in a one-line cell they are escaped too.
    """
    text = "" if text is None else str(text)
    text = _CONTROL.sub(_escape, text)
    if not multiline:
        text = _LINE_BREAKS.sub(_escape, text)
    return text
