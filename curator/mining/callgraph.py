"""Tests reached through calls: a function called by a tested function gets its tests.

The graph's nodes are functions of the repository, each with the class it runs on
(`receiver`), so `self.apply_transform(...)` inside an inherited `Base.forward` reached as
`Sub.forward` goes to `Sub.apply_transform`: dispatch through base classes counts as a
call. Edges come from the calls and names each function uses, resolved through the
symbol table. Propagation is breadth-first from every directly tested function at once,
depth-limited, so each (function, receiver) is expanded once per level at most.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from curator.errors import Cancelled
from curator.mining.symbols import CLASS, FUNCTION, Symbol, SymbolTable
from curator.progress import CancelCheck
from curator.pysource.modules import FunctionInfo

SELF_NAMES = ("self", "cls")


@dataclass
class IndirectLink:
    """Tests a function gets from the tested functions that call it."""

    tests: set[str] = field(default_factory=set)
    via: list[str] = field(default_factory=list)   # tested function -> ... -> this one
    depth: int = 0


class CallGraph:
    def __init__(self, table: SymbolTable, functions: dict[tuple[str, str], FunctionInfo]):
        self.table = table
        self.functions = functions
        self._edges: dict[Symbol, tuple[Symbol, ...]] = {}

    def callees(self, node: Symbol) -> tuple[Symbol, ...]:
        """Functions `node` calls or names, resolved, with the receiver for self-calls."""
        if node in self._edges:
            return self._edges[node]
        info = self.functions.get(node.key)
        found: list[Symbol] = []
        if info is not None:
            module = self.table.modules[node.path]
            receiver = node.receiver or ((node.path, info.class_name) if info.class_name
                                         else None)
            for ref in info.calls:
                found.extend(self._resolve(module, info, ref, receiver, True))
            for ref in info.names:
                found.extend(s for s in self._resolve(module, info, ref, receiver, False)
                             if s.kind == FUNCTION)
        edges = tuple(s for s in dict.fromkeys(found) if s.key != node.key)
        self._edges[node] = edges
        return edges

    def _resolve(self, module, info: FunctionInfo, ref: str, receiver, call: bool
                 ) -> list[Symbol]:
        root, _, rest = ref.partition(".")
        if root in SELF_NAMES:
            if not receiver or not rest or "." in rest:
                return []
            cls = Symbol(CLASS, receiver[0], receiver[1])
            return [s for s in self.table.method(cls, rest, receiver) if s.kind == FUNCTION]
        found = []
        for symbol in self.table.resolve_in(module, ref):
            if symbol.kind == FUNCTION:
                found.append(symbol)
            elif symbol.kind == CLASS and call:
                found.extend(s for s in self.table.method(symbol, "__init__")
                             if s.kind == FUNCTION)
        return found

    def propagate(self, seeds: dict[Symbol, set[str]], depth: int, cap: int,
                  cancelled: CancelCheck | None = None
                  ) -> dict[tuple[str, str], IndirectLink]:
        """Indirect tests per function key, from every seed outwards up to `depth` calls.

        A function keeps the tests of its nearest tested callers (at most `cap` node ids)
        and the call path from the first of them; directly tested functions get none.
        """
        direct = {s.key for s in seeds}
        level = {node: (set(sorted(tests)[:cap]), [_label(node)])
                 for node, tests in seeds.items()}
        visited = set(level)
        links: dict[tuple[str, str], IndirectLink] = {}
        for step in range(1, depth + 1):
            following: dict[Symbol, tuple[set[str], list[str]]] = {}
            # in a fixed order, so the path shown is the same on every run (sets of
            # names iterate in a per-process order)
            for node in sorted(level, key=_order):
                tests, via = level[node]
                if cancelled and cancelled():
                    raise Cancelled("mining cancelled; nothing was written")
                for callee in sorted(self.callees(node), key=_order):
                    if callee in visited:
                        continue
                    entry = following.get(callee)
                    if entry is None:
                        following[callee] = (set(sorted(tests)[:cap]), [*via, _label(callee)])
                    elif len(entry[0]) < cap:
                        entry[0].update(sorted(tests - entry[0])[:cap - len(entry[0])])
            visited.update(following)
            for node, (tests, via) in following.items():
                if node.key in direct:
                    continue
                link = links.get(node.key)
                if link is None:
                    links[node.key] = IndirectLink(set(tests), via, step)
                elif link.depth == step and len(link.tests) < cap:
                    link.tests.update(sorted(tests - link.tests)[:cap - len(link.tests)])
            level = following
            if not level:
                break
        return links


def _order(node: Symbol) -> tuple:
    return node.path, node.qualname, node.receiver or ("", "")


def _label(node: Symbol) -> str:
    if node.receiver and "." in node.qualname:
        cls, method = node.qualname.split(".", 1)
        if node.receiver[1] != cls:
            return f"{node.receiver[1]}.{method} ({cls})"
    return node.qualname
