"""The one black wrapper: mined, resolved and edited solutions are formatted alike."""

from __future__ import annotations

from curator.errors import CuratorError

# black's own default, for every solution the curator formats (mined, resolved, edited).
LINE_LENGTH = 88


class FormatError(CuratorError):
    """black could not parse the code (one line: black's reason)."""


def format_python(text: str, line_length: int = LINE_LENGTH) -> str:
    """`text` formatted by black; raises FormatError with black's one-line reason."""
    import black  # imported here: black is slow to import and only needed on demand

    try:
        return black.format_str(text, mode=black.Mode(line_length=line_length))
    except black.InvalidInput as exc:
        raise FormatError(str(exc).splitlines()[0]) from None
    except Exception as exc:  # noqa: BLE001 - black raises many kinds of error on odd code
        raise FormatError(f"black failed: {exc}".splitlines()[0]) from None


def format_or_keep(text: str) -> str:
    """black when it can parse the code; the text unchanged when it cannot."""
    try:
        return format_python(text)
    except FormatError:
        return text
