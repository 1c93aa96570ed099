"""Exchanging review labels between machines as JSONL.

Samples are named by their content hash (the same on every machine that imported the
same sample file), never by the local row id. Importing merges: a label this database
lacks is added; an identical one is left alone (so re-importing is a no-op); a different
label from the same annotator on the same item keeps the newer (by `labelled_at`) and is
reported as a conflict. Adjudicated (final) labels travel the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from curator import timestamps
from curator.limits import INT_MAX, Field, loads_json, one_line, read_text, schema_errors
from curator.review import annotations as review_annotations
from curator.store import Store
from curator.store import review_labels as label_store
from curator.store import samples as sample_store

FORMAT = "curator-review-labels/1"

# The typed schema of one exchanged row, checked before anything is written.
ROW_SCHEMA = {
    "kind": Field("str", choices=("label", "final")), "sample": Field("str", required=True),
    "problem_id": Field("str"), "model": Field("str"), "technique": Field("str"),
    "sample_index": Field("int", min=0, max=INT_MAX), "annotator": Field("str"),
    "adjudicator": Field("str"), "verdict": Field("str"), "pairs": Field("list"),
    "note": Field("str"), "taxonomy_version": Field("int", min=0, max=INT_MAX),
    "labelled_at": Field("str", required=True),
}
PAIR_SCHEMA = {"category": Field("str|int", required=True), "dl": Field("str"),
               "reason": Field("str")}


def export_rows(store: Store, annotator: str | None = None) -> list[dict]:
    rows = []
    for r in label_store.labels_with_samples(store, annotator):
        rows.append({"kind": "label", "sample": r["content_hash"], "problem_id": r["problem_id"],
                     "model": r["model"], "technique": r["technique"],
                     "sample_index": r["sample_index"], "annotator": r["annotator"],
                     "verdict": r["verdict"], "pairs": r["pairs"],
                     "note": r["note"], "taxonomy_version": r["taxonomy_version"],
                     "labelled_at": r["labelled_at"]})
    if not annotator:
        for r in label_store.finals_with_samples(store):
            rows.append({"kind": "final", "sample": r["content_hash"],
                         "problem_id": r["problem_id"], "model": r["model"],
                         "technique": r["technique"], "sample_index": r["sample_index"],
                         "adjudicator": r["adjudicator"], "verdict": r["verdict"],
                         "pairs": r["pairs"], "note": r["note"],
                         "taxonomy_version": r["taxonomy_version"],
                         "labelled_at": r["labelled_at"]})
    return rows


def export_jsonl(store: Store, path: str | Path | None = None,
                 annotator: str | None = None) -> tuple[str, int]:
    rows = export_rows(store, annotator)
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text, len(rows)


@dataclass
class MergeReport:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    conflicts: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"added": self.added, "updated": self.updated, "unchanged": self.unchanged,
                "conflicts": self.conflicts, "errors": self.errors}


def _same(local: dict, value: review_annotations.LabelValue) -> bool:
    return review_annotations.from_json(local) == value


def import_jsonl(store: Store, path: str | Path) -> MergeReport:
    """Merge an exported label file into this database, in one transaction."""
    path = Path(path)
    text = read_text(path)
    report = MergeReport()
    with store.transaction():
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = loads_json(line)
                if not isinstance(row, dict):
                    raise ValueError("expected a JSON object")
                errors = schema_errors(row, ROW_SCHEMA)
                for index, pair in enumerate(row.get("pairs") or []):
                    errors += schema_errors(pair, PAIR_SCHEMA, f"pairs[{index}]")
                if errors:
                    raise ValueError("; ".join(errors))
                _merge_row(store, row, number, report)
            except (ValueError, KeyError, TypeError) as exc:
                report.errors.append({"file": str(path), "line": number,
                                      "message": one_line(str(exc))})
    return report


def _merge_row(store: Store, row: dict, line: int, report: MergeReport) -> None:
    kind = row.get("kind", "label")
    if kind not in ("label", "final"):
        raise ValueError(f"unknown kind {kind!r}")
    content_hash = row.get("sample")
    if not content_hash:
        raise ValueError("no 'sample' (the sample's content hash)")
    sample_id = sample_store.id_for_content(store, content_hash)
    if sample_id is None:
        raise ValueError(f"unknown sample {str(content_hash)[:12]} "
                         f"({row.get('problem_id')}, {row.get('model')}): import its samples first")
    labelled_at = row.get("labelled_at")
    if not isinstance(labelled_at, str) or not labelled_at:
        raise ValueError("no 'labelled_at' timestamp")
    timestamps.parse(labelled_at)
    value = review_annotations.from_json(row)
    version = row.get("taxonomy_version")
    if kind == "label":
        who = row.get("annotator")
        if not who:
            raise ValueError("no 'annotator'")
        local = review_annotations.get(store, sample_id, who)
        entity, entity_id = review_annotations.LABEL_ENTITY, f"{sample_id}/{who}"
    else:
        who = row.get("adjudicator") or "unknown"
        local = review_annotations.get_final(store, sample_id)
        entity, entity_id = review_annotations.FINAL_ENTITY, str(sample_id)
    if local is not None and _same(local, value):
        report.unchanged += 1
        return
    if local is not None:
        newer = timestamps.parse(labelled_at) > timestamps.parse(local["labelled_at"])
        report.conflicts.append({
            "line": line, "kind": kind, "sample_id": sample_id, "problem_id": row.get("problem_id"),
            "annotator": who, "kept": "imported" if newer else "local",
            "local_labelled_at": local["labelled_at"], "imported_labelled_at": labelled_at})
        if not newer:
            return
    if kind == "label":
        after = review_annotations.write_label(store, sample_id, who, value, version, labelled_at)
    else:
        after = review_annotations.write_final(store, sample_id, value, who, version, labelled_at)
    store.audit(entity, entity_id, "import", before=local, after=after)
    if local is None:
        report.added += 1
    else:
        report.updated += 1
