"""Put a solution's definition of one symbol into an upstream module, via the AST.

The target (a top-level function, or a method inside its class) is replaced by the
solution's definition; the solution's extra imports go after the module's imports, its
extra helper functions, classes and constants go just before the target's top-level
statement, extra methods of the target's class go into that class, and new `from
__future__` imports go first (after the module docstring). Names the module already
defines win over the solution's copies, so other functions of the module keep working.
Expression statements, `if __name__ == "__main__":` blocks and the like are dropped.

A solution that does not parse is put in place of the target as it is, so the run fails
with the solution's own SyntaxError; a solution that does not define the target at all
raises MissingSymbol (nothing to run).
"""

from __future__ import annotations

import ast
import io
import tokenize

from curator.errors import CuratorError
from curator.pysource.modules import (
    dotted_path,
    import_bindings,
    package_of,
    split_lines,
    start_line,
)

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


class PatchError(CuratorError):
    """The upstream module cannot be patched (the symbol is not where the problem says)."""


class MissingSymbol(CuratorError):
    """The solution does not define the symbol under test (nothing to run)."""


def _find(tree: ast.Module, qualname: str):
    """(definition node, class node or None) of `f` or `Class.method` at top level."""
    cls_name, _, name = qualname.rpartition(".")
    for stmt in tree.body:
        if not cls_name and isinstance(stmt, _DEFS) and stmt.name == name:
            return stmt, None
        if cls_name and isinstance(stmt, ast.ClassDef) and stmt.name == cls_name:
            for item in stmt.body:
                if isinstance(item, _DEFS) and item.name == name:
                    return item, stmt
    return None, None


def _find_in_solution(tree: ast.Module, qualname: str):
    """The solution's definition: `def f`, or `def m` in `class C`, or a bare `def m`."""
    node, cls = _find(tree, qualname)
    if node is not None:
        return node, cls
    if "." in qualname:
        name = qualname.rpartition(".")[2]
        for stmt in tree.body:
            if isinstance(stmt, _DEFS) and stmt.name == name:
                return stmt, None
    return None, None


def string_lines(text: str) -> set[int]:
    """Line numbers inside multi-line strings (after their first line): never re-indented."""
    inside: set[int] = set()
    starts: list[int] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind = tokenize.tok_name.get(token.type, "")
            if kind == "FSTRING_START":
                starts.append(token.start[0])
            elif kind == "FSTRING_END" and starts:
                inside.update(range(starts.pop() + 1, token.end[0] + 1))
            elif token.type == tokenize.STRING and token.end[0] > token.start[0]:
                inside.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return inside


def _reindent(lines: list[str], first_line: int, from_col: int, to_col: int,
              keep: set[int] = frozenset()) -> list[str]:
    """Move a block from column `from_col` to `to_col`; lines in `keep` stay as they are."""
    out = []
    pad = " " * to_col
    for number, line in enumerate(lines, first_line):
        if number in keep or from_col == to_col:
            out.append(line)
            continue
        head = line[:from_col]
        body = line[from_col:] if head.strip(" \t") == "" else line.lstrip(" \t")
        out.append(pad + body if body.strip() else body)
    if out and not out[-1].endswith(("\n", "\r")):
        out[-1] += "\n"
    return out


def _segment(lines: list[str], node: ast.stmt, to_col: int,
             keep: set[int] = frozenset()) -> list[str]:
    start, end = start_line(node), node.end_lineno or node.lineno
    return _reindent(lines[start - 1:end], start, node.col_offset, to_col, keep)


def _defined_names(tree: ast.Module) -> set[str]:
    names = set()
    for stmt in tree.body:
        if isinstance(stmt, (*_DEFS, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(stmt, (ast.If, ast.Try, ast.With)):
            for node in ast.walk(stmt):
                if isinstance(node, (*_DEFS, ast.ClassDef)):
                    names.add(node.name)
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    for alias in node.names:
                        names.add((alias.asname or alias.name).split(".")[0])
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.add(node.id)
    return names


def _stmt_names(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, (*_DEFS, ast.ClassDef)):
        return {stmt.name}
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _futures(tree: ast.Module) -> set[str]:
    return {a.name for s in tree.body if isinstance(s, ast.ImportFrom)
            and s.module == "__future__" for a in s.names}


def _new_imports(solution: ast.Module, module: ast.Module, package: str) -> list[str]:
    """The solution's imports that bind names the module does not bind yet."""
    taken = _defined_names(module)
    module_targets = set()
    for stmt in module.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            found, _ = import_bindings(stmt, package)
            module_targets |= {(b.name, b.target) for b in found}
    out = []
    for stmt in solution.body:
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            continue
        keep = []
        for alias in stmt.names:
            if alias.name == "*":
                keep.append(alias)
                continue
            bound = (alias.asname or alias.name).split(".")[0]
            if bound not in taken:
                keep.append(alias)
        if not keep:
            continue
        if isinstance(stmt, ast.Import):
            node = ast.Import(names=keep)
        else:
            node = ast.ImportFrom(module=stmt.module, names=keep, level=stmt.level)
        line = ast.unparse(node)
        if line not in out:
            out.append(line)
    return out


def _import_block_end(tree: ast.Module, before_line: int) -> int | None:
    """Line after the last top-level import that comes before the first def/class."""
    end = None
    for stmt in tree.body:
        if stmt.lineno >= before_line or isinstance(stmt, (*_DEFS, ast.ClassDef)):
            break
        is_import = isinstance(stmt, (ast.Import, ast.ImportFrom)) or (
            isinstance(stmt, (ast.Try, ast.If)) and all(
                isinstance(s, (ast.Import, ast.ImportFrom, ast.Pass)) for s in stmt.body))
        if is_import:
            end = stmt.end_lineno
    return end


def _header_end(tree: ast.Module) -> int:
    """Line after the module docstring and its `from __future__` imports (0 if none)."""
    end = 0
    for index, stmt in enumerate(tree.body):
        if index == 0 and isinstance(stmt, ast.Expr) and isinstance(
                stmt.value, ast.Constant) and isinstance(stmt.value.value, str) or isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            end = stmt.end_lineno
        else:
            break
    return end


def replace_symbol(module_text: str, qualname: str, solution_text: str,
                   path: str = "module.py") -> str:
    """The module with `qualname` replaced by the solution's definition (see the docstring)."""
    try:
        module = ast.parse(module_text, filename=path)
    except SyntaxError as exc:
        raise PatchError(f"{path}: upstream module does not parse: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise PatchError(f"{path}: upstream module is nested too deeply to parse") from None
    target, target_cls = _find(module, qualname)
    if target is None:
        raise PatchError(f"{path}: {qualname} not found in the upstream module")
    lines = split_lines(module_text)
    t_start, t_end = start_line(target), target.end_lineno or target.lineno
    column = target.col_offset
    top = target_cls or target           # the top-level statement holding the target
    top_start = start_line(top)

    try:
        solution = ast.parse(solution_text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # Patched in as it is: the run then reports why it does not compile, as an
        # outcome of this solution (a 200k-term expression must not stop a batch).
        raw = split_lines(solution_text.rstrip("\n") + "\n")
        replaced = lines[:t_start - 1] + _reindent(raw, 1, 0, column) + lines[t_end:]
        return "".join(replaced)

    sol_lines = split_lines(solution_text if solution_text.endswith("\n")
                            else solution_text + "\n")
    definition, sol_cls = _find_in_solution(solution, qualname)
    if definition is None:
        raise MissingSymbol(f"the solution does not define {qualname}")

    keep = string_lines(solution_text)
    replacement = _segment(sol_lines, definition, column, keep)
    if not definition.decorator_list and target.decorator_list:
        replacement = lines[t_start - 1:target.lineno - 1] + replacement
    if target_cls is not None and sol_cls is not None:
        existing = {i.name for i in target_cls.body if isinstance(i, (*_DEFS, ast.ClassDef))}
        for item in sol_cls.body:
            if isinstance(item, (*_DEFS, ast.ClassDef)) and item is not definition and \
                    item.name not in existing:
                replacement += ["\n"] + _segment(sol_lines, item, column, keep)

    taken = _defined_names(module)
    helpers: list[str] = []
    for stmt in solution.body:
        if stmt is definition or stmt is sol_cls:
            continue
        if isinstance(stmt, (*_DEFS, ast.ClassDef, ast.Assign, ast.AnnAssign)):
            names = _stmt_names(stmt)
            if names and not names & taken:
                helpers += _segment(sol_lines, stmt, 0, keep) + ["\n", "\n"]
    package = package_of(path) if not path.endswith("__init__.py") else dotted_path(path)
    imports = _new_imports(solution, module, package)
    futures = sorted(_futures(solution) - _futures(module))

    # Apply bottom-up so earlier line numbers stay valid.
    out = lines[:t_start - 1] + replacement + lines[t_end:]
    if helpers:
        index = top_start - 1
        out = out[:index] + ["# --- helpers from the solution ---\n"] + helpers + out[index:]
    if imports:
        index = _import_block_end(module, top_start)
        if index is None:
            index = _header_end(module)
        block = [line + "\n" for line in imports]
        if index and not out[index - 1].endswith(("\n", "\r")):
            out[index - 1] += "\n"
        out = out[:index] + block + out[index:]
    if futures:
        index = _header_end(module)
        if index and not out[index - 1].endswith(("\n", "\r")):
            out[index - 1] += "\n"
        out = out[:index] + [f"from __future__ import {', '.join(futures)}\n"] + out[index:]
    text = "".join(out)
    try:
        ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise PatchError(f"{path}: patched module does not parse (line {exc.lineno}: "
                         f"{exc.msg})") from None
    return text
