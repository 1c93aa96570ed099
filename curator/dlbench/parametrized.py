"""Which cases of a parametrized test use a target, as pytest names them.

pyro's `test_exponential_gamma` is parametrized over eight ELBO classes and three gamma
distributions: a problem about one of the classes needs the 3 cases that pass it, not
the 24 (about 90 s each). `cases` reads the test's `@pytest.mark.parametrize`
decorators and gives the bracketed ids pytest gives those cases (`reparam-RenyiELBO`),
or None whenever pytest's ids cannot be known from the text for certain (values whose
ids depend on what they are at run time, id functions, parametrized fixtures, class or
module level parametrization, ...): the caller then keeps the whole test. Pure: reads
syntax trees only.
"""

from __future__ import annotations

import ast
import copy
import itertools
from typing import Callable

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
# pytest's own fixtures: none of them is parametrized.
_BUILTIN_FIXTURES = {"request", "tmp_path", "tmpdir", "tmp_path_factory", "tmpdir_factory",
                     "monkeypatch", "capsys", "capsysbinary", "capfd", "capfdbinary",
                     "caplog", "recwarn", "pytestconfig", "record_property",
                     "record_testsuite_property", "doctest_namespace", "cache"}
_SELF = {"self", "cls"}

Uses = Callable[[ast.AST], bool]


def _parametrize(decorator: ast.AST) -> ast.Call | None:
    if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute) \
            and decorator.func.attr == "parametrize":
        return decorator
    return None


def mentions_parametrize(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "parametrize"
               for n in ast.walk(node))


def _argnames(node: ast.AST) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        names = [n.strip() for n in node.value.split(",")]
    elif isinstance(node, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        names = [e.value for e in node.elts]
    else:
        return None
    return names if names and all(n.isidentifier() for n in names) else None


def _names_of(tree: ast.Module) -> dict[str, str]:
    """Module-level names whose value has a `__name__` pytest takes as the id: classes and
    functions defined here, and CamelCase names imported (classes, by convention; a
    lower-case import may be a constant, whose id is its value)."""
    out: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, (*_DEFS, ast.ClassDef)):
            out[stmt.name] = stmt.name
        elif isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                name = alias.name
                if name[:1].isupper() and any(c.islower() for c in name):
                    out[alias.asname or name] = name
    return out


def _value_id(value: ast.AST, known: dict[str, str], target: str, uses: Uses
              ) -> str | None:
    """pytest's id of one literal parameter value, None when it depends on run time."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) and \
            isinstance(value.operand, ast.Constant) and \
            type(value.operand.value) in (int, float):
        return str(-value.operand.value)
    if isinstance(value, ast.Constant):
        if isinstance(value.value, str):
            text = value.value
            return text if text and text.isascii() and text.isprintable() else None
        if value.value is None or type(value.value) in (bool, int, float):
            return str(value.value)
        return None
    if isinstance(value, ast.Name):
        return known.get(value.id) or (target if uses(value) else None)
    if isinstance(value, ast.Attribute) and value.attr == target and uses(value):
        return target
    return None


def _is_param(node: ast.AST) -> bool:
    func = getattr(node, "func", None)
    return isinstance(node, ast.Call) and (
        (isinstance(func, ast.Attribute) and func.attr == "param" and
         isinstance(func.value, ast.Name) and func.value.id == "pytest") or
        (isinstance(func, ast.Name) and func.id == "param"))


def _entry_id(entry: ast.AST, width: int, given: str | None, known: dict[str, str],
              target: str, uses: Uses) -> str | None:
    explicit = None
    if _is_param(entry):
        explicit = next((k.value.value for k in entry.keywords if k.arg == "id" and
                         isinstance(k.value, ast.Constant) and isinstance(k.value.value,
                                                                         str)), None)
        if any(k.arg == "id" for k in entry.keywords) and explicit is None:
            return None
        values = entry.args
    elif isinstance(entry, ast.Call):
        return None     # a helper of the repository's (pyro's xfail_param): unknown id
    elif width == 1:
        values = [entry]
    elif isinstance(entry, (ast.Tuple, ast.List)):
        values = entry.elts
    else:
        return None
    if explicit is not None or given is not None:
        return explicit if explicit is not None else given
    if len(values) != width:
        return None
    ids = [_value_id(v, known, target, uses) for v in values]
    return None if None in ids else "-".join(ids)


def _axis(call: ast.Call, known: dict[str, str], target: str, uses: Uses
          ) -> tuple[list[str], list[str], bool] | None:
    """(argnames, the ids of the cases kept, whether some were left out) of one
    parametrize decorator: the entries that use the target when any does, else all."""
    keywords = {k.arg: k.value for k in call.keywords}
    if len(call.args) > 2 or None in keywords or "ids" in keywords and not isinstance(
            keywords["ids"], (ast.List, ast.Tuple)):
        return None
    args = [*call.args, *[keywords[k] for k in ("argnames", "argvalues") if k in keywords]]
    if len(args) != 2:
        return None
    names, values = _argnames(args[0]), args[1]
    if names is None or not isinstance(values, (ast.List, ast.Tuple)):
        return None
    given: list[str | None] = [None] * len(values.elts)
    if "ids" in keywords:
        listed = keywords["ids"].elts
        if len(listed) != len(values.elts) or not all(
                isinstance(i, ast.Constant) and (i.value is None or isinstance(i.value, str))
                for i in listed):
            return None
        given = [i.value for i in listed]
    chosen = [uses(e) for e in values.elts] if uses(values) else [True] * len(values.elts)
    ids = [_entry_id(e, len(names), g, known, target, uses)
           for e, g in zip(values.elts, given)]
    kept = [i for i, keep in zip(ids, chosen) if keep]
    known_ids = [i for i in ids if i is not None]
    if None in kept or len(set(known_ids)) != len(known_ids):
        return None     # an unknown id, or pytest's suffixes for repeated ones
    return names, kept, len(kept) < len(ids)


class _Checks(ast.NodeTransformer):
    """Drops comparisons and isinstance/issubclass calls: `if elbo_impl is
    ReweightedWakeSleep:` asks which case runs, it does not use the target in all."""

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        # a name compared is asked about; what is computed to compare is still used
        # (`assert Reweighted().loss(1) == 2` calls it in every case)
        kept = [n for n in [node.left, *node.comparators]
                if not isinstance(n, (ast.Name, ast.Attribute))]
        return self.generic_visit(ast.Tuple(elts=kept, ctx=ast.Load()))

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass"):
            return self.generic_visit(ast.Tuple(elts=node.args[:1], ctx=ast.Load()))
        return self.generic_visit(node)


def _without_checks(node: ast.AST) -> ast.AST:
    return _Checks().visit(copy.deepcopy(node))


def _plain_fixtures(tree: ast.Module) -> set[str]:
    """Module-level fixtures that have no params (their tests get no extra ids)."""
    out = set()
    for stmt in tree.body:
        if not isinstance(stmt, _DEFS):
            continue
        for decorator in stmt.decorator_list:
            if "fixture" not in ast.unparse(decorator):
                continue
            if isinstance(decorator, ast.Call) and any(k.arg == "params" for k in
                                                       decorator.keywords):
                break
            named = [k.value.value for k in getattr(decorator, "keywords", ())
                     if k.arg == "name" and isinstance(k.value, ast.Constant)]
            out.add(str(named[0]) if named else stmt.name)
    return out


def cases(tree: ast.Module, test: ast.AST, owner: ast.ClassDef | None, target: str,
          uses: Uses) -> list[str] | None:
    """The bracketed ids of TEST's cases that use the target, when its parametrize
    decorators name the target, some of their cases do not, and its body names it only
    to ask which case runs (comparisons, isinstance); else None (run it whole). OWNER: the class of a test method. TARGET: the name pytest shows for it (a
    class's or function's `__name__`). USES: whether a node names the target."""
    if not isinstance(test, _DEFS):
        return None
    bare = copy.copy(test)
    bare.decorator_list = []
    if uses(_without_checks(bare)):
        return None
    if any(mentions_parametrize(s) for s in tree.body
           if isinstance(s, ast.Assign) and "pytestmark" in ast.unparse(s)):
        return None
    if owner is not None and (mentions_parametrize(ast.Module(
            body=[s for s in owner.body if isinstance(s, ast.Assign)], type_ignores=[]))
            or any(mentions_parametrize(d) for d in owner.decorator_list)):
        return None
    known = _names_of(tree)
    axes = []
    for decorator in test.decorator_list:
        call = _parametrize(decorator)
        if call is None:
            if uses(decorator) or mentions_parametrize(decorator):
                return None
            continue
        axis = _axis(call, known, target, uses)
        if axis is None:
            return None
        axes.append(axis)
    if not any(dropped for _n, _k, dropped in axes):
        return None     # every case uses it: the test as a whole
    arguments = test.args
    asked = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    covered = {n for names, _kept, _d in axes for n in names}
    if asked - covered - _SELF - _BUILTIN_FIXTURES - _plain_fixtures(tree):
        return None     # a fixture from a conftest may be parametrized: ids unknown
    # pytest joins the ids of stacked decorators from the one nearest the function up
    out = ["-".join(parts) for parts in itertools.product(*[kept for _n, kept, _d in
                                                            reversed(axes)])]
    return out or None
