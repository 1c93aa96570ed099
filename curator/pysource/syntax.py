"""Whether a Python text parses: its tree or None, and the first syntax error, for editors
and checks."""

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


def parse(code: str) -> ast.Module | None:
    """The module's tree, or None when it does not parse (also for nesting too deep for
    the parser, or text too large for memory: code from outside is never trusted)."""
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def syntax_problem(text: str, filename: str) -> SyntaxProblem | None:
    """The first syntax error in `text`, or None when it parses."""
    try:
        ast.parse(text, filename=filename)
    except SyntaxError as exc:
        return SyntaxProblem(filename, exc.lineno or 1, exc.offset or 1, exc.msg)
    except ValueError as exc:   # e.g. null bytes
        return SyntaxProblem(filename, 1, 1, str(exc))
    return None
