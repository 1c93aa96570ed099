"""What changed between two bundles, for the changelog: problems added, removed, changed.

Problems are matched by id (the part of task_id after the bundle name), so a renamed
bundle still diffs cleanly. A change is reported by area: prompt, solution, tests,
labels, and metadata (entry point, kind, framework, provenance).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from curator.release.reader import read_bundle
from curator.release.rows import problem_id

AREAS = {
    "prompt": ("instruct_prompt", "code_prompt"),
    "solution": ("canonical_solution",),
    "tests": ("test", "test_node_ids"),
    "labels": ("stage", "task", "data"),
    "metadata": ("entry_point", "kind", "framework", "source", "libs"),
}


@dataclass
class BundleDiff:
    old: dict
    new: dict
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[dict] = field(default_factory=list)    # {"id", "changes": [areas], "labels"}
    unchanged: int = 0

    def to_json(self) -> dict:
        return {"old": self.old, "new": self.new, "added": self.added, "removed": self.removed,
                "changed": self.changed, "unchanged": self.unchanged}

    def markdown(self) -> str:
        title = (f"## {self.new['name']} {self.new['version']} "
                 f"(since {self.old['name']} {self.old['version']})")
        lines = [title, ""]
        for title, ids in (("Added", self.added), ("Removed", self.removed)):
            if ids:
                lines += [f"### {title} ({len(ids)})", ""] + [f"- {i}" for i in ids] + [""]
        if self.changed:
            lines += [f"### Changed ({len(self.changed)})", ""]
            for item in self.changed:
                detail = ", ".join(item["changes"])
                if item.get("labels"):
                    detail += " (" + "; ".join(f"{axis}: {old} -> {new}" for axis, (old, new)
                                               in item["labels"].items()) + ")"
                lines.append(f"- {item['id']}: {detail}")
            lines.append("")
        lines.append(f"{self.unchanged} problem(s) unchanged.")
        return "\n".join(lines) + "\n"


def diff_rows(old_rows: list[dict], new_rows: list[dict], old_meta: dict,
              new_meta: dict) -> BundleDiff:
    old = {problem_id(r["task_id"]): r for r in old_rows}
    new = {problem_id(r["task_id"]): r for r in new_rows}
    result = BundleDiff(old_meta, new_meta)
    result.added = sorted(set(new) - set(old))
    result.removed = sorted(set(old) - set(new))
    for pid in sorted(set(old) & set(new)):
        a, b = old[pid], new[pid]
        changes = [area for area, keys in AREAS.items()
                   if any(a.get(k) != b.get(k) for k in keys)]
        if not changes:
            result.unchanged += 1
            continue
        item: dict = {"id": pid, "changes": changes}
        if "labels" in changes:
            item["labels"] = {axis: [a.get(axis), b.get(axis)] for axis in AREAS["labels"]
                              if a.get(axis) != b.get(axis)}
        result.changed.append(item)
    return result


def diff(old_path, new_path) -> BundleDiff:
    old, new = read_bundle(old_path), read_bundle(new_path)
    return diff_rows(old.problem_rows(), new.problem_rows(),
                     {"name": old.name, "version": old.version},
                     {"name": new.name, "version": new.version})
