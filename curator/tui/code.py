"""Python source helpers for the editors: syntax check and black formatting. No textual."""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass
class SyntaxProblem:
    filename: str
    line: int        # 1-based
    column: int      # 1-based
    message: str

    def __str__(self) -> str:
        return f"{self.filename} line {self.line}, column {self.column}: {self.message}"


def syntax_problem(text: str, filename: str) -> SyntaxProblem | None:
    """The first syntax error in `text`, or None when it parses."""
    try:
        ast.parse(text, filename=filename)
    except SyntaxError as exc:
        return SyntaxProblem(filename, exc.lineno or 1, exc.offset or 1, exc.msg)
    except ValueError as exc:   # e.g. null bytes
        return SyntaxProblem(filename, 1, 1, str(exc))
    return None


class FormatError(Exception):
    pass


def format_python(text: str, line_length: int = 100) -> str:
    """`text` formatted by black; raises FormatError with black's one-line reason."""
    import black  # imported here: black is slow to import and only needed on demand

    try:
        return black.format_str(text, mode=black.Mode(line_length=line_length))
    except black.InvalidInput as exc:
        raise FormatError(str(exc).splitlines()[0]) from None
