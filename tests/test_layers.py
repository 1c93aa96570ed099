"""The import contracts of docs/ARCHITECTURE.md#layers cover every part of curator.

`make lint` checks the contracts themselves (import-linter); this test makes sure a new
top-level module or package cannot slip past them by not being listed.
"""

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _contracts() -> list[dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["importlinter"]["contracts"]


def _top_level_modules() -> set[str]:
    names = set()
    for path in (ROOT / "curator").iterdir():
        if path.name.startswith("_") or path.name == "data":
            continue
        if path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists()):
            names.add(f"curator.{path.stem}")
    return names


def test_every_top_level_module_has_a_layer():
    layers = next(c for c in _contracts() if c["type"] == "layers")["layers"]
    listed = {name.strip() for layer in layers for name in layer.replace(":", "|").split("|")}
    assert _top_level_modules() - listed == set()
    assert listed - _top_level_modules() == set()


def test_the_core_may_not_import_textual():
    core = next(c for c in _contracts() if c["type"] == "forbidden"
                and "textual" in c["forbidden_modules"] and "curator.store" in c["source_modules"])
    assert set(core["source_modules"]) == _top_level_modules() - {"curator.cli", "curator.tui"}


# SQL lives in curator.store, one module per table; everything else calls those functions.
# Packages whose SQL is still being moved (drop each from here once it holds none):
_SQL_NOT_YET_MOVED = {"mining", "evaluation"}
_SQL = re.compile(r"\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|ALTER|DROP|PRAGMA)\s")


def _sql_strings(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and _SQL.match(node.value):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value[:40]!r}")
    return found


def test_sql_is_only_in_the_store():
    outside = [p for p in (ROOT / "curator").rglob("*.py")
               if p.relative_to(ROOT / "curator").parts[0] not in
               {"store", *_SQL_NOT_YET_MOVED}]
    assert outside
    assert [hit for path in outside for hit in _sql_strings(path)] == []


def test_the_sql_check_sees_sql():
    store = ROOT / "curator" / "store" / "problems.py"
    assert any("SELECT * FROM problems" in hit for hit in _sql_strings(store))
