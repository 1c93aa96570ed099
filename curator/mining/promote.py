"""Accepting a candidate: a draft repo-backed problem with provenance and suggestions."""

from __future__ import annotations

import re
import textwrap

from curator import sync
from curator.errors import CuratorError
from curator.llm import ChatClient
from curator.mining import drafts, prompt_drafts, suggest
from curator.problem import ID_PATTERN, Problem
from curator.pysource.formatting import format_or_keep
from curator.repos import identity
from curator.repos.gitcache import cache_for
from curator.store import Store, now
from curator.store import candidates as candidate_store
from curator.store import problems as problem_store
from curator.store import runs as run_rows
from curator.workspace import Workspace

DRAFT_MARK = "<!-- draft: written by `curator candidates accept` from the signature, " \
             "docstring and class context; check it before review -->"


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
    return format_or_keep(text)


def prompt_text(row: dict, module_text: str | None = None) -> str:
    """A first prompt from the signature, docstring and (for methods) class context.

    `module_text` is the upstream module at the pinned commit; without it the class
    context is the class header alone. The prompt never says where the code lives.
    """
    name = row["qualname"]
    if row["kind"] == "method":
        cls, method = name.split(".", 1)
        intro = (f"Implement the constructor of the class `{cls}`." if method == "__init__"
                 else f"Implement the method `{method}` of the class `{cls}`.")
    else:
        intro = f"Implement the function `{name}`."
    context = drafts.context_for(module_text, name) if module_text else drafts.Context()
    if row["kind"] == "method" and not context.class_header:
        context.class_header = row["class_header"]
    body = drafts.prompt_markdown(intro, row["signature"], row["kind"], row["docstring"],
                                  context)
    return f"{DRAFT_MARK}\n\n{body}"


def upstream_module(store: Store, workspace: Workspace, row: dict) -> str | None:
    """The candidate's module at its pinned commit, from the repository cache (or None)."""
    record = identity.record_for(store, row["repo_url"])
    if record is None:
        return None
    try:
        cache = cache_for(workspace.repos_dir, record["url"])
        if not cache.exists():
            return None
        return cache.read_file(row["commit_sha"], row["path"]).decode("utf-8-sig")
    except (CuratorError, UnicodeDecodeError, OSError):
        return None


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
        source={"repo": identity.portable_name(row), "commit": row["commit_sha"],
                "path": row["path"], "symbol": row["qualname"],
                "lines": f"{row['line_start']}-{row['line_end']}", "license": row["license"]},
        test_node_ids=node_ids,
        prompt=prompt_text(row, upstream_module(store, workspace, row)),
        solution=solution_text(row), tests=None)
    stamp = now()
    with store.transaction():
        problem_store.save(store, problem)
        prompt_drafts.remember_docstring_draft(store, pid, problem.prompt)
        for item in row["suggestions"]:
            candidate_store.add_suggestion(store, pid, item, row["id"], stamp)
        for node_id, reason in sorted(exclude.items()):
            run_rows.add_excluded(store, pid, node_id, reason.strip(), stamp)
        candidate_store.mark_accepted(store, row, pid, stamp)
    sync.dump_one(store, problem_store.get(store, pid), workspace.problems_dir)
    return {"candidate": row["id"], "problem_id": pid,
            "path": str(workspace.problems_dir / pid), "suggested": labels,
            "suggestions": candidate_store.suggestions_for(store, pid),
            "excluded": [{"node_id": k, "reason": v.strip()}
                         for k, v in sorted(exclude.items())]}


def accept_with_draft(store: Store, workspace: Workspace, candidate_id: int | str,
                      client: ChatClient, model: str, problem_id: str | None = None,
                      exclude: dict[str, str] | None = None) -> dict:
    """`accept`, then a model's prompt draft beside the docstring draft. The problem is
    created either way; a refused draft (it copies the reference) is reported under
    `draft_refused` with the reason, a failed request under `draft_error`."""
    row = candidate_store.get(store, candidate_id)
    result = accept(store, workspace, candidate_id, problem_id, exclude)
    module = upstream_module(store, workspace, row) or solution_text(row)
    try:
        result["draft"] = prompt_drafts.draft(store, result["problem_id"], client, model,
                                              module_text=module)
    except prompt_drafts.DraftRefused as exc:
        result["draft_refused"] = str(exc)
    except CuratorError as exc:
        result["draft_error"] = str(exc)
    return result
