"""Accepting a candidate: a draft repo-backed problem with provenance and suggestions."""

from __future__ import annotations

import re
import textwrap

from curator import sync
from curator.errors import CuratorError
from curator.mining import candidates as candidate_store
from curator.mining import suggest
from curator.problem import ID_PATTERN, Problem
from curator.store import Store, now
from curator.store import problems as problem_store
from curator.workspace import Workspace

DRAFT_MARK = "<!-- draft: written by `curator candidates accept` from the upstream " \
             "signature and docstring; rewrite it for a model before review -->"


def format_code(text: str) -> str:
    """black when it can parse the code; the text unchanged when it cannot."""
    import black

    try:
        return black.format_str(text, mode=black.Mode())
    except Exception:  # noqa: BLE001 - black raises many kinds of error on odd code
        return text


def solution_text(row: dict) -> str:
    """The candidate's source, plus the imports it needs, formatted with black."""
    source = row["source"]
    if row["kind"] == "method":
        source = row["class_header"] + "\n" + textwrap.indent(source, "    ")
    future = [i for i in row["needed_imports"] if i.startswith("from __future__ ")]
    imports = [i for i in row["needed_imports"] if i not in future]
    header = "\n".join(future) + "\n\n" if future else ""
    header += "\n".join(imports) + "\n" if imports else ""
    text = (header + "\n\n" if header else "") + source
    return format_code(text)


def prompt_text(row: dict) -> str:
    """A first prompt from the signature and docstring, for a person to rewrite."""
    name = row["qualname"]
    if row["kind"] == "method":
        cls, method = name.split(".", 1)
        intro = f"Implement the method `{method}` of the class `{cls}`."
        code = row["class_header"] + "\n    " + row["signature"]
    else:
        intro = f"Implement the function `{name}`."
        code = row["signature"]
    doc = (row["docstring"] or "").strip()
    about = doc if doc else ("(The upstream code has no docstring: say what it computes, "
                             "its inputs and outputs, shapes and edge cases.)")
    return (f"{DRAFT_MARK}\n\n{intro}\n\n```python\n{code}\n```\n\n{about}\n\n"
            f"Upstream: `{row['path']}` in {row['repo_name']} at {row['commit_sha'][:12]}.\n")


def default_id(store: Store, row: dict) -> str:
    base = f"{row['repo_name'].split('/')[-1]}_{row['qualname']}"
    slug = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", base)
    slug = re.sub(r"[^a-z0-9]+", "_", slug.lower()).strip("_") or "candidate"
    if not slug[0].isalnum():
        slug = "c" + slug
    slug = slug[:60].rstrip("_-")
    candidate, n = slug, 2
    while problem_store.exists(store, candidate):
        candidate = f"{slug}_{n}"
        n += 1
    return candidate


def _split_excluded(tests: list[str], exclude: dict[str, str], cid) -> list[str]:
    """The node ids the problem keeps; each excluded id must be one of them or inside one."""
    for node_id, reason in exclude.items():
        if not reason.strip():
            raise CuratorError(f"candidate {cid}: say why {node_id} is left out "
                               "(--exclude-reason)")
        inside = any(node_id == t or node_id.startswith((t + "::", t + "[")) for t in tests)
        if not inside:
            raise CuratorError(f"candidate {cid}: {node_id} is not one of its tests "
                               f"({', '.join(tests)})")
    kept = [t for t in tests if t not in exclude]
    if not kept:
        raise CuratorError(f"candidate {cid}: leaving out {', '.join(exclude)} leaves no "
                           "test to run")
    return kept


def accept(store: Store, workspace: Workspace, candidate_id: int | str,
           problem_id: str | None = None, exclude: dict[str, str] | None = None) -> dict:
    """Create the draft problem (database and problems/<id>/) from a candidate.

    exclude: {node id: reason} upstream tests to leave out (they need options, or are
    xfail upstream). A listed node id is dropped from the problem's node ids; a test
    inside one (a class's method, a parameter) is deselected when the problem runs.
    Each is recorded with its reason.
    """
    row = candidate_store.get(store, candidate_id)
    exclude = dict(exclude or {})
    if row["status"] == "accepted" and row["problem_id"]:
        raise CuratorError(f"candidate {row['id']} is already problem {row['problem_id']}")
    if not row["tests"]:
        raise CuratorError(f"candidate {row['id']} ({row['qualname']}) has no tests; a "
                           "repo-backed problem needs at least one test node id")
    node_ids = _split_excluded(list(row["tests"]), exclude, row["id"]) if exclude \
        else list(row["tests"])
    pid = problem_id or default_id(store, row)
    if not ID_PATTERN.match(pid):
        raise CuratorError(f"problem id {pid!r} must match {ID_PATTERN.pattern}")
    if problem_store.exists(store, pid):
        raise CuratorError(f"problem {pid!r} already exists; choose another --id")
    labels = suggest.best(row["suggestions"])
    problem = Problem(
        id=pid, entry_point=row["qualname"], kind=row["kind"],
        title=f"{row['qualname']} from {row['repo_name']}",
        framework=row["framework"] or "pytorch", status="draft",
        source={"repo": row["repo_url"], "commit": row["commit_sha"], "path": row["path"],
                "symbol": row["qualname"], "lines": f"{row['line_start']}-{row['line_end']}",
                "license": row["license"]},
        test_node_ids=node_ids, prompt=prompt_text(row),
        solution=solution_text(row), tests=None)
    stamp = now()
    with store.transaction():
        problem_store.save(store, problem)
        for item in row["suggestions"]:
            cursor = store.execute(
                "INSERT OR IGNORE INTO label_suggestions (problem_id, axis, slug, rule, "
                "evidence, weight, source, candidate_id, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, 'mining', ?, ?)",
                (pid, item["axis"], item["slug"], item["rule"], item["evidence"],
                 item["weight"], row["id"], stamp))
            if cursor.rowcount:
                store.audit("label_suggestion", cursor.lastrowid, "create", after={
                    "problem_id": pid, "axis": item["axis"], "slug": item["slug"],
                    "rule": item["rule"]})
        for node_id, reason in sorted(exclude.items()):
            store.execute("INSERT INTO excluded_tests (problem_id, node_id, reason, actor, "
                          "created_at) VALUES (?, ?, ?, ?, ?)",
                          (pid, node_id, reason.strip(), store.actor, stamp))
            store.audit("excluded_test", f"{pid}::{node_id}", "create",
                        after={"problem_id": pid, "node_id": node_id,
                               "reason": reason.strip()})
        store.execute("UPDATE candidates SET status = 'accepted', problem_id = ?, "
                      "updated_at = ? WHERE id = ?", (pid, stamp, row["id"]))
        store.audit("candidate", row["id"], "accept", "status", row["status"], "accepted")
        store.audit("candidate", row["id"], "update", "problem_id", row["problem_id"], pid)
    sync.dump_one(store, problem_store.get(store, pid), workspace.problems_dir)
    return {"candidate": row["id"], "problem_id": pid,
            "path": str(workspace.problems_dir / pid), "suggested": labels,
            "suggestions": candidate_store.suggestions_for(store, pid),
            "excluded": [{"node_id": k, "reason": v.strip()}
                         for k, v in sorted(exclude.items())]}
