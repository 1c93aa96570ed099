"""Mutants of a reference solution, made from its syntax tree.

Only the entry point's body is mutated (its signature, decorators and the rest of the
solution stay). Each mutant changes one node and replaces exactly that node's text, so
its line is the line of the original it changed. Operators:

  arithmetic          + - * / // % ** @ and bit operators swapped; a unary minus dropped
  comparison          < <= > >= == != is / is not, in / not in swapped
  boolean             and / or swapped; `not x` becomes `x`
  constant            a number n becomes n + 1 (0 -> 1, 1 -> 0, floats doubled), True / False
  off_by_one          an integer index or slice bound moved by one
  dropped_statement   an assignment, call, raise or assert becomes `pass`
  dropped_return      `return value` becomes `return None`
  swapped_arguments   the first two positional arguments of a call swapped
  dim                 a `dim=` / `axis=` value changed (-1 -> 0, 0 -> 1, k -> k - 1)
  reduction           mean / sum, max / min, argmax / argmin, any / all ... swapped

A mutant whose code is the same as the reference's (or as an earlier mutant's) after the
change is *equivalent* by construction and is not run; one that does not parse is
dropped. When there are more sites than asked for, the operators take turns (in line
order within each), so a small budget still covers every kind of change.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from dataclasses import dataclass

from curator.validity.source import DEFS, find_definition, line_offsets, line_text, replace_span
from curator.validity.stub import NoEntryPoint

OPERATORS = ("arithmetic", "comparison", "boolean", "constant", "off_by_one",
             "dropped_statement", "dropped_return", "swapped_arguments", "dim", "reduction")

_ARITH = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
          ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult,
          ast.MatMult: ast.Mult, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd,
          ast.BitXor: ast.BitAnd, ast.LShift: ast.RShift, ast.RShift: ast.LShift}
_COMPARE = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
            ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
            ast.In: ast.NotIn, ast.NotIn: ast.In}
_REDUCTIONS = {"mean": "sum", "sum": "mean", "max": "min", "min": "max", "amax": "amin",
               "amin": "amax", "argmax": "argmin", "argmin": "argmax", "any": "all",
               "all": "any", "prod": "sum", "nanmean": "nansum", "nansum": "nanmean",
               "maximum": "minimum", "minimum": "maximum", "cumsum": "cumprod",
               "cumprod": "cumsum", "logsumexp": "sum", "median": "mean", "std": "var",
               "var": "std"}
_DIM_KEYWORDS = {"dim", "axis", "dims", "axes"}
_DROPPABLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Raise, ast.Assert)
_NEEDS_PARENS = (ast.BinOp, ast.BoolOp, ast.Compare, ast.UnaryOp, ast.IfExp, ast.Lambda,
                 ast.NamedExpr)


@dataclass
class Mutant:
    operator: str
    line: int
    original: str      # the reference's line
    mutated: str       # the same line in the mutant
    text: str          # the whole mutated solution

    def to_json(self) -> dict:
        return {"operator": self.operator, "line": self.line, "original": self.original,
                "mutated": self.mutated}


@dataclass
class MutantSet:
    mutants: list[Mutant]
    equivalent: int    # sites whose change left the code as it was (not run)
    sites: int         # every distinct mutant the operators could make


def _int_value(node: ast.AST) -> int | None:
    """The value of an int literal, `-1` included (bools are not ints here)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _literal(value) -> ast.expr:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-value))
    return ast.Constant(value)


def _code(node: ast.AST) -> str:
    text = ast.unparse(node)
    return f"({text})" if isinstance(node, _NEEDS_PARENS) else text


def _bumped(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return {0: 1, 1: 0}.get(value, value + 1)
    if isinstance(value, float):
        return value * 2 if value else 1.0
    return None


class _Sites:
    """Every (operator, node, replacement code) in the entry point's body."""

    def __init__(self, definition: ast.AST):
        self.definition = definition
        self.special: set[int] = set()     # literals another operator already handles
        self.found: list[tuple[str, ast.AST, str]] = []

    def collect(self) -> list[tuple[str, ast.AST, str]]:
        body = list(self.definition.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]   # the docstring
        for stmt in body:
            self._statements(stmt, len(body))
        for stmt in body:
            for node in self._walk(stmt):
                self._expression(node)
        self.found.sort(key=lambda s: (s[1].lineno, s[1].col_offset, OPERATORS.index(s[0])))
        return self.found

    def _walk(self, root: ast.AST) -> Iterator[ast.AST]:
        stack = [root]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.JoinedStr, ast.Lambda)) or (
                    isinstance(node, DEFS + (ast.ClassDef,)) and node is not root):
                # f-strings and annotations are left alone; nested defs are walked body only
                if isinstance(node, DEFS):
                    stack.extend(reversed(node.body))
                continue
            yield node
            children = list(ast.iter_child_nodes(node))
            if isinstance(node, ast.AnnAssign):
                children = [c for c in children if c is not node.annotation]
            if isinstance(node, DEFS):
                children = list(node.body)
            stack.extend(reversed(children))

    def _add(self, operator: str, node: ast.AST, code: str) -> None:
        self.found.append((operator, node, code))

    def _statements(self, stmt: ast.stmt, siblings: int) -> None:
        for node in self._walk(stmt):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(node, field, None)
                if not isinstance(block, list) or not block or \
                        not isinstance(block[0], ast.stmt):
                    continue
                for child in block:
                    if isinstance(child, _DROPPABLE) and len(block) > 1 and not (
                            isinstance(child, ast.Expr) and isinstance(child.value, ast.Constant)):
                        self._add("dropped_statement", child, "pass")
        if isinstance(stmt, _DROPPABLE) and siblings > 1 and not (
                isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            self._add("dropped_statement", stmt, "pass")

    def _expression(self, node: ast.AST) -> None:
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            self._add("dropped_return", node, "return None")
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            new = copy.copy(node)
            new.op = _ARITH[type(node.op)]()
            self._add("arithmetic", node, _code(new))
        elif isinstance(node, ast.AugAssign) and type(node.op) in _ARITH:
            new = copy.copy(node)
            new.op = _ARITH[type(node.op)]()
            self._add("arithmetic", node, ast.unparse(new))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
                and _int_value(node) is None:
            self._add("arithmetic", node, _code(node.operand))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self._add("boolean", node, _code(node.operand))
        elif isinstance(node, ast.BoolOp):
            new = copy.copy(node)
            new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            self._add("boolean", node, _code(new))
        elif isinstance(node, ast.Compare):
            for index, op in enumerate(node.ops):
                if type(op) in _COMPARE:
                    new = copy.copy(node)
                    new.ops = list(node.ops)
                    new.ops[index] = _COMPARE[type(op)]()
                    self._add("comparison", node, _code(new))
        elif isinstance(node, ast.Call):
            self._call(node)
        elif isinstance(node, ast.Subscript):
            self._subscript(node)
        if isinstance(node, ast.Constant) and id(node) not in self.special \
                and isinstance(node.value, (int, float)):
            bumped = _bumped(node.value)
            if bumped is not None:
                self._add("constant", node, _code(_literal(bumped)))

    def _call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else (
            func.id if isinstance(func, ast.Name) else None)
        if name in _REDUCTIONS:
            new = copy.copy(func)
            if isinstance(func, ast.Attribute):
                new.attr = _REDUCTIONS[name]
            else:
                new.id = _REDUCTIONS[name]
            self._add("reduction", func, ast.unparse(new))
        positional = [a for a in node.args if not isinstance(a, ast.Starred)]
        if len(node.args) >= 2 and len(positional) == len(node.args):
            new = copy.copy(node)
            new.args = [node.args[1], node.args[0], *node.args[2:]]
            self._add("swapped_arguments", node, ast.unparse(new))
        for keyword in node.keywords:
            value = _int_value(keyword.value)
            if keyword.arg in _DIM_KEYWORDS and value is not None:
                self._mark(keyword.value)
                changed = 0 if value == -1 else (1 if value == 0 else value - 1)
                self._add("dim", keyword.value, _code(_literal(changed)))

    def _subscript(self, node: ast.Subscript) -> None:
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts:
            bounds = [part.lower, part.upper] if isinstance(part, ast.Slice) else [part]
            for bound in bounds:
                value = _int_value(bound) if bound is not None else None
                if value is None:
                    continue
                self._mark(bound)
                self._add("off_by_one", bound, _code(_literal(value + 1)))

    def _mark(self, node: ast.AST) -> None:
        for child in ast.walk(node):
            self.special.add(id(child))


def _round_robin(sites: list, limit: int) -> list:
    by_operator: dict[str, list] = {}
    for site in sites:
        by_operator.setdefault(site[0], []).append(site)
    queues = [by_operator[op] for op in OPERATORS if op in by_operator]
    chosen = []
    while len(chosen) < limit and any(queues):
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.append(queue.pop(0))
    return sorted(chosen, key=lambda s: (s[1].lineno, s[1].col_offset))


def make_mutants(text: str, qualname: str, limit: int = 20) -> MutantSet:
    """Up to `limit` distinct mutants of `qualname` in the solution `text`."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise NoEntryPoint(f"the solution does not parse (line {exc.lineno})") from None
    definition = find_definition(tree, qualname)
    if definition is None:
        raise NoEntryPoint(f"the solution does not define {qualname}")
    offsets = line_offsets(text)
    seen = {ast.dump(tree)}
    distinct, equivalent = [], 0
    for operator, node, code in _Sites(definition).collect():
        mutated = replace_span(text, offsets, node, code)
        try:
            dump = ast.dump(ast.parse(mutated))
        except SyntaxError:
            continue
        if dump in seen:
            equivalent += 1
            continue
        seen.add(dump)
        distinct.append((operator, node, mutated))
    chosen = _round_robin(distinct, max(0, limit))
    mutants = [Mutant(operator, node.lineno, line_text(text, node.lineno),
                      line_text(mutated, node.lineno), mutated)
               for operator, node, mutated in chosen]
    return MutantSet(mutants, equivalent, len(distinct))
