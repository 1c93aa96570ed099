"""Key remapping from the workspace config: a [keymap] table in curator.toml.

    [keymap]
    "problems.filter" = "slash,f"
    "problem.save" = "ctrl+s"

Keys are binding ids (shown by F1 and in the command palette's Keys help), values are
comma-separated Textual key names (curator.config checks them when it reads the file).
No textual here.
"""

from __future__ import annotations

# Most terminals send alt+digit as ESC followed by the digit, which Textual reads as the
# character macOS types for Option+digit (ESC 3 arrives as "£"). The app binds these too,
# and its editors let them through, so alt+1…9 switch tabs everywhere.
ALT_DIGIT_KEYS = ("inverted_exclamation_mark", "trade_mark_sign", "pound_sign", "cent_sign",
                  "infinity", "section_sign", "pilcrow_sign", "bullet", "ª")
