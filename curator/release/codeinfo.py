"""Facts read from a problem's code with `ast`: how many tests, which libraries."""

from __future__ import annotations

import ast
import re

from curator.pysource.syntax import parse

_MODULE_TEST = re.compile(r"^(?:async\s+)?def\s+test", re.MULTILINE)


def _parametrize_cases(decorator: ast.expr) -> int:
    """How many cases `@pytest.mark.parametrize(names, [..])` adds (1 when not literal)."""
    if not isinstance(decorator, ast.Call):
        return 1
    func = decorator.func
    if not (isinstance(func, ast.Attribute) and func.attr == "parametrize"):
        return 1
    values = decorator.args[1] if len(decorator.args) > 1 else None
    for keyword in decorator.keywords:
        if keyword.arg == "argvalues":
            values = keyword.value
    if isinstance(values, (ast.List, ast.Tuple, ast.Set)):
        return max(1, len(values.elts))
    return 1


def _cases(func: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    cases = 1
    for decorator in func.decorator_list:
        cases *= _parametrize_cases(decorator)
    return cases


def count_tests(test_code: str | None) -> int | None:
    """Test cases pytest would collect from a test file (None when it does not parse).

    Counts module-level `test*` functions and `test*` methods of `Test*` classes,
    multiplying by the literal case lists of `pytest.mark.parametrize`.
    """
    if not test_code:
        return 0
    if "parametrize" not in test_code and "class" not in test_code:
        # The common case, without the cost of a parse: module-level test functions.
        return len(_MODULE_TEST.findall(test_code))
    tree = parse(test_code)
    if tree is None:
        return None
    total = 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(
                "test"):
            total += _cases(node)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                        item.name.startswith("test"):
                    total += _cases(item)
    return total


_IMPORT_LINE = re.compile(r"^[ \t]*import[ \t]+([^\n#;]+)", re.MULTILINE)
_FROM_LINE = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import\b", re.MULTILINE)


def imported_libs(code: str) -> list[str]:
    """Top-level names of the modules a piece of code imports, sorted (relative ones skipped).

    Read from the import lines (a regular expression, not a parse: it runs for every
    problem of a release).
    """
    names = set()
    for items in _IMPORT_LINE.findall(code or ""):
        for item in items.strip().strip("()\\").split(","):
            words = item.split()
            if words:
                names.add(words[0].split(".")[0])
    for module in _FROM_LINE.findall(code or ""):
        if not module.startswith("."):
            names.add(module.split(".")[0])
    names.discard("__future__")
    return sorted(n for n in names if n.isidentifier())
