"""Recall of mining against DL-Bench: which of its items for a repository get mined.

    .venv/bin/python benchmarks/mine_recall.py REPO DLBENCH [--rev REV] [--name NAME]

REPO is a git repository (a bare snapshot is fine), DLBENCH the DL-Bench release: a
folder of `.txt` problem files or a `.tar.gz` of one (extract it from the DL-Bench
repository with `git show <commit>:Dataset/DLBenchv2.tar.gz > v2.tar.gz`). NAME is the
`repo` value of the items to measure (default: REPO's folder or remote name).

An item counts as present when its `ground Truth` file defines its function (or its
class's method) at the commit. Of the present items the script reports how many are
candidates (recall), how many of those carry a test from the item's own test files
(test-file links), how many came only through the call graph (indirect), and how often
the strongest label suggestion per axis matches DL-Bench's label. It prints
the items it misses so the reasons can be read.
"""

from __future__ import annotations

import argparse
import ast
import resource
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from curator.dlbench.fileformat import identifier, node_ids, parse_ground_truth, parse_txt  # noqa: E402
from curator.dlbench.label_map import resolve_labels, spelling_map  # noqa: E402
from curator.mining.index import index_commit  # noqa: E402
from curator.mining.settings import MiningSettings  # noqa: E402
from curator.mining.suggest import best  # noqa: E402
from curator.repos.gitcache import CachedRepo, GitError, run_git  # noqa: E402


def read_items(source: Path, name: str) -> list[dict]:
    """DL-Bench items whose `repo` is NAME: path, function, class, test files."""
    texts: list[tuple[str, str]] = []
    if source.is_dir():
        texts = [(p.name, p.read_text(encoding="utf-8", errors="replace"))
                 for p in sorted(source.rglob("*.txt"))]
    else:
        with tarfile.open(source) as archive:
            for member in archive.getmembers():
                if member.isfile() and member.name.endswith(".txt"):
                    data = archive.extractfile(member).read()
                    texts.append((member.name.rsplit("/", 1)[-1],
                                  data.decode("utf-8", errors="replace")))
    items = []
    table = spelling_map()
    for origin, text in texts:
        record = parse_txt(text, origin)
        fields = record.fields
        if fields.get("repo", "").strip().lower() != name.lower():
            continue
        function = identifier(fields.get("function", ""))
        if not function:
            continue
        labels = resolve_labels(record, table)
        items.append({
            "labels": {"stage": labels.stage, "task": labels.task, "data": labels.data},
            "origin": origin, "path": parse_ground_truth(fields.get("ground_truth", "")).path,
            "function": function, "class": identifier(fields.get("class", "")) or None,
            "test_files": sorted({n.split("::", 1)[0] for n in
                                  node_ids(fields.get("test_cases", ""))})})
    return items


def defined(repo: Path, commit: str, path: str) -> dict[str, set[str]] | None:
    """Qualnames defined at top level of PATH at COMMIT (None when the file is absent)."""
    try:
        text = run_git(["show", f"{commit}:{path}"], cwd=repo)
        tree = ast.parse(text)
    except (GitError, SyntaxError, ValueError):
        return None
    names: dict[str, set[str]] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.setdefault(stmt.name, set()).add(stmt.name)
        elif isinstance(stmt, ast.ClassDef):
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.setdefault(item.name, set()).add(f"{stmt.name}.{item.name}")
    return names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("dlbench", type=Path)
    parser.add_argument("--rev", default=None)
    parser.add_argument("--name", default=None)
    parser.add_argument("--call-depth", type=int, default=None)
    args = parser.parse_args()
    repo = args.repo.resolve()
    cached = CachedRepo(url=str(repo), path=repo if (repo / "HEAD").is_file() else repo / ".git")
    name = args.name or (repo.name if repo.name != "repo" else repo.parent.name.split("+")[-1])
    commit = cached.resolve(args.rev)
    items = read_items(args.dlbench, name)

    present = []
    for item in items:
        names = defined(cached.path, commit, item["path"])
        if not names or item["function"] not in names:
            continue
        wanted = (f"{item['class']}.{item['function']}" if item["class"]
                  else item["function"])
        qualnames = names[item["function"]]
        item["qualname"] = wanted if wanted in qualnames else sorted(qualnames)[0]
        present.append(item)

    settings = MiningSettings()
    if args.call_depth is not None:
        settings.call_depth = args.call_depth
    started = time.perf_counter()
    result = index_commit(cached, commit, settings, with_tests=True)
    seconds = time.perf_counter() - started
    found = {(c.path, c.qualname): c for c in result.candidates}

    hits = linked = indirect = 0
    agree = {"stage": [0, 0], "task": [0, 0], "data": [0, 0]}
    misses = []
    for item in present:
        candidate = found.get((item["path"], item["qualname"]))
        if candidate is None:
            misses.append(item)
            continue
        hits += 1
        files = {t.split("::", 1)[0] for t in candidate.tests}
        linked += bool(files & set(item["test_files"]))
        indirect += any(e["kind"] == "indirect-tests" for e in candidate.evidence)
        suggested = best(candidate.suggestions)
        for axis, (same, total) in agree.items():
            if item["labels"][axis]:
                agree[axis] = [same + (suggested.get(axis) == item["labels"][axis]), total + 1]

    def pct(a: int, b: int) -> str:
        return f"{a}/{b} ({100 * a / b:.0f}%)" if b else f"{a}/0"

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{name} at {commit[:12]}: {result.files} Python files, {result.test_modules} test "
          f"modules, {len(result.candidates)} candidates; index {seconds:.1f} s, "
          f"peak RSS {rss:.0f} MB")
    print(f"DL-Bench items for {name}: {len(items)}, present at the commit: {len(present)}")
    print(f"recall: {pct(hits, len(present))}; test-file links: {pct(linked, hits)}; "
          f"found only through calls: {indirect}")
    print("label suggestions (strongest per axis) agreeing with DL-Bench's labels: " +
          ", ".join(f"{axis} {pct(*agree[axis])}" for axis in agree))
    for item in misses:
        print(f"  missed: {item['path']}::{item['qualname']} ({item['origin']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
