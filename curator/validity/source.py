"""Finding the entry point's definition in a solution's text, and editing spans of it.

Edits replace a node's exact text span (its start and end line and column), so the rest
of the solution stays byte for byte as written and line numbers keep their meaning.
"""

from __future__ import annotations

import ast

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def find_definition(tree: ast.Module, qualname: str):
    """The definition of `f` or `Class.method` at top level; a bare `def method` when the
    solution defines the method outside its class; None when absent."""
    cls_name, _, name = qualname.rpartition(".")
    bare = None
    for stmt in tree.body:
        if isinstance(stmt, DEFS) and stmt.name == name:
            if not cls_name:
                return stmt
            bare = bare or stmt
        if cls_name and isinstance(stmt, ast.ClassDef) and stmt.name == cls_name:
            for item in stmt.body:
                if isinstance(item, DEFS) and item.name == name:
                    return item
    return bare


def symbol_of(entry_point: str, source: dict | None) -> str:
    """The qualified name the solution defines: [source] symbol, else the entry point."""
    return str((source or {}).get("symbol") or entry_point)


def line_offsets(text: str) -> list[int]:
    """Offset of the start of every line (1-based line n starts at offsets[n - 1])."""
    offsets, total = [], 0
    for line in text.splitlines(keepends=True):
        offsets.append(total)
        total += len(line)
    offsets.append(total)
    return offsets


def span(text: str, offsets: list[int], node: ast.AST) -> tuple[int, int]:
    """Character offsets [start, end) of a node (ast columns are UTF-8 byte offsets)."""
    def at(line: int, col: int) -> int:
        start = offsets[line - 1]
        end = offsets[line] if line < len(offsets) else len(text)
        raw = text[start:end].encode("utf-8")[:col]
        return start + len(raw.decode("utf-8", "replace"))
    return at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)


def replace_span(text: str, offsets: list[int], node: ast.AST, new: str) -> str:
    start, end = span(text, offsets, node)
    return text[:start] + new + text[end:]


def line_text(text: str, line: int) -> str:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""
