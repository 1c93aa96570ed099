"""Key remapping from the workspace config: a [keymap] table in curator.toml.

    [keymap]
    "problems.filter" = "slash,f"
    "problem.save" = "ctrl+s"

Keys are binding ids (shown by F1 and in the command palette's Keys help), values are
comma-separated Textual key names. No textual here.
"""

from __future__ import annotations

from curator.errors import CuratorError

# Most terminals send alt+digit as ESC followed by the digit, which Textual reads as the
# character macOS types for Option+digit (ESC 3 arrives as "£"). The app binds these too,
# and its editors let them through, so alt+1…9 switch tabs everywhere.
ALT_DIGIT_KEYS = ("inverted_exclamation_mark", "trade_mark_sign", "pound_sign", "cent_sign",
                  "infinity", "section_sign", "pilcrow_sign", "bullet", "ª")


def keymap_from_config(config: dict) -> dict[str, str]:
    table = config.get("keymap", {})
    if not isinstance(table, dict):
        raise CuratorError("curator.toml: [keymap] must be a table of binding id = \"keys\"")
    keymap = {}
    for binding_id, keys in table.items():
        if isinstance(keys, list):
            keys = ",".join(str(k) for k in keys)
        if not isinstance(keys, str) or not keys.strip():
            raise CuratorError(
                f"curator.toml: [keymap] {binding_id!r} must be a key string like \"ctrl+s\"")
        keymap[str(binding_id)] = keys.strip()
    return keymap
