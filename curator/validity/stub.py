"""The stub of a solution: the entry point's body replaced by `raise NotImplementedError`.

Everything else of the solution (imports, helpers, the signature and decorators) stays,
so a test that still passes against the stub never needed the entry point to work.
"""

from __future__ import annotations

import ast

from curator.errors import CuratorError
from curator.validity.source import find_definition, line_offsets, span

STUB_BODY = "raise NotImplementedError"


class NoEntryPoint(CuratorError):
    """The solution does not define the entry point (nothing to stub or mutate)."""


def stub_solution(text: str, qualname: str) -> str:
    """The solution with the body of `qualname` (docstring included) replaced by a raise."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise NoEntryPoint(f"the solution does not parse (line {exc.lineno}): fix it "
                           "before validating") from None
    node = find_definition(tree, qualname)
    if node is None:
        raise NoEntryPoint(f"the solution does not define {qualname}")
    offsets = line_offsets(text)
    first, last = node.body[0], node.body[-1]
    start, _ = span(text, offsets, first)
    _, end = span(text, offsets, last)
    # From the first statement's column: the indentation (or `def f(x): ` on one line)
    # stays as it is.
    return text[:start] + STUB_BODY + text[end:]
