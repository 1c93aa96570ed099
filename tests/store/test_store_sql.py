"""SQL lives in curator.store, one module per table (docs/ARCHITECTURE.md#packages-and-what-each-owns).

Everything else calls those functions: no SQL text, no `store.query/one/execute`, no
`store.conn` / `store.db` (sqlite-utils tables), no own sqlite connection. The scan reads
the code (ast), so Textual's `self.query(Button)`, a pool's `worker.execute(job)` and
GitPython's `Git().execute([...])` are not mistaken for the database, nor is a docstring
that names a statement.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CURATOR = ROOT / "curator"

# Modules that may import sqlite3 without touching the database, and why.
MAY_IMPORT_SQLITE = {"crashlog": "tells a lock error from a bug by its exception type"}

_SQL = re.compile(
    r"\bSELECT\b.*\bFROM\b|^\s*SELECT\b|\bINSERT\s+(?:OR\s+[A-Z]+\s+)?INTO\b|"
    r"\bREPLACE\s+INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b|"
    r"\b(?:CREATE|DROP)\s+(?:TEMP\s+|UNIQUE\s+)?(?:TABLE|INDEX|VIEW|TRIGGER)\b|"
    r"\bALTER\s+TABLE\b|^\s*PRAGMA\s+\w+|^\s*(?:BEGIN|COMMIT|ROLLBACK)\b", re.S)
_DB_CALLS = {"execute", "executemany", "executescript", "query", "one"}
_DB_NAMES = {"db", "conn", "connection", "cursor", "database"}
_STORE_HANDLES = {"conn", "db"}


def _name(node: ast.AST) -> str | None:
    """The last identifier of `a.b.c` (c), of `a` (a); None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_store(node: ast.AST) -> bool:
    name = (_name(node) or "").lower().strip("_")
    return name.endswith("store")


def _is_database(node: ast.AST) -> bool:
    name = (_name(node) or "").lower().strip("_")
    return _is_store(node) or name in _DB_NAMES


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.body and isinstance(node.body[0], ast.Expr) \
                and isinstance(node.body[0].value, ast.Constant):
            ids.add(id(node.body[0].value))
    return ids


def _text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def findings(source: str, module: str = "") -> list[str]:
    """`LINE: what` for every database access in the source (empty when it has none)."""
    tree = ast.parse(source)
    # docstrings document; an f-string's parts are read as the whole f-string
    skip = _docstrings(tree) | {id(v) for node in ast.walk(tree)
                                if isinstance(node, ast.JoinedStr) for v in node.values}
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        text = None if id(node) in skip else _text(node)
        if text is not None and _SQL.search(text):
            found.append(f"{line}: SQL {text.strip()[:50]!r}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _DB_CALLS and _is_database(node.func.value):
            found.append(f"{line}: .{node.func.attr}() on the database")
        elif isinstance(node, ast.Attribute) and node.attr in _STORE_HANDLES \
                and _is_store(node.value):
            found.append(f"{line}: store.{node.attr}")
        elif isinstance(node, ast.Subscript) and _is_database(node.value):
            found.append(f"{line}: a table of the database")
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and module not in MAY_IMPORT_SQLITE:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) \
                else [node.module or ""]
            if any(n.split(".")[0] in ("sqlite3", "sqlite_utils") for n in names):
                found.append(f"{line}: imports {', '.join(names)}")
    return sorted(set(found), key=lambda f: int(f.split(":")[0]))


def _outside_the_store() -> dict[str, list[str]]:
    """top-level part (package or module) -> findings `path:LINE: what` in it."""
    out: dict[str, list[str]] = {}
    for path in sorted(CURATOR.rglob("*.py")):
        part = path.relative_to(CURATOR).parts[0].removesuffix(".py")
        if part == "store":
            continue
        module = ".".join(path.relative_to(CURATOR).with_suffix("").parts)
        hits = findings(path.read_text(encoding="utf-8"), module)
        out.setdefault(part, []).extend(f"{path.relative_to(ROOT)}:{h}" for h in hits)
    return out


def test_no_sql_outside_the_store():
    found = _outside_the_store()
    assert {"mining", "evaluation", "release", "review", "tui", "sync"} <= set(found)  # seen
    assert [hit for hits in found.values() for hit in hits] == []


@pytest.mark.parametrize("code", [
    'rows = store.query("SELECT * FROM problems")',
    'rows = store.query(sql)',
    'row = store.one(sql, params)',
    'self.store.conn.executemany(sql, rows)',
    'self.app.store.query(sql)',
    'ctx.store.execute(sql)',
    'db.execute(sql)',
    'store.db["candidates"].insert(row)',
    'table = store.db.table("candidates")',
    'sql = f"DELETE FROM sample_claims WHERE owner = ? AND sample_id IN ({marks})"',
    'sql = ("INSERT OR IGNORE INTO label_suggestions (problem_id) "\n       "VALUES (?)")',
    'sql = f"UPDATE candidates SET {sets} WHERE id = ?"',
    'sql = "SELECT COUNT(*) AS n FROM samples" + (" WHERE model = ?" if model else "")',
    'sql = "INSERT OR REPLACE INTO repo_envs (a) VALUES (?)"',
    'sql = "CREATE TABLE t (x)"',
    'import sqlite3',
    'from sqlite_utils import Database',
])
def test_the_scan_sees_database_access(code):
    assert findings(code) != []


@pytest.mark.parametrize("code", [
    '"""A docstring may say INSERT OR IGNORE INTO sample_claims, or SELECT x FROM y."""',
    'def f():\n    """SELECT 1 FROM t: documented, not run."""',
    'self.query(Button).first().focus()',
    'self.screen.query(TabbedContent)',
    'worker.execute(job, marker)',
    'git.Git(cwd).execute(["git", "status"])',
    'row = candidate_store.get(store, 3)',
    'with store.transaction():\n    store.audit("candidate", 3, "update")',
    'value = rows["x"]',
    'message = "Select a problem from the list; update the view, then delete from it"',
    'import sqlite3  # allowed here',
])
def test_the_scan_leaves_other_things_alone(code):
    module = "crashlog" if "allowed here" in code else "tui.app"
    assert findings(code, module) == []


def test_a_store_alias_always_names_a_store_module():
    # `x_store` reads as "the table module of x": an alias of that shape for anything
    # else (a feature module of the same name) misleads the next reader
    wrong = []
    for path in sorted([*(ROOT / "curator").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or "").endswith("_store") and node.module != "curator.store":
                        wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}: "
                                     f"{node.module}.{alias.name} as {alias.asname}")
    assert wrong == []
