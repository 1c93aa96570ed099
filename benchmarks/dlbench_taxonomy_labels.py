"""DL-Bench's human bug labels (Taxonomy-Data/taxonomy.xlsx) as a review export.

    .venv/bin/python benchmarks/dlbench_taxonomy_labels.py TAXONOMY.xlsx --workspace WS \
        [--out labels.jsonl]

WS is a workspace where DL-Bench's release and its Taxonomy-Data were imported
(`curator dlbench import`, `curator dlbench taxonomy DIR --model NAME`). The workbook's
"Final" sheet has one row per sample: links to its Original / Generated / Result files
(column D names Result/processed_<name>.txt), then two annotators' labels, each up to
two (category, reason) pairs: columns E-H and K-N; "pass"/"passed" is the verdict that
the sample is correct, "problem" that the benchmark item is defective. Rows are matched to
the workspace's samples by that file name; the output is the exchange format of `curator
review export` (curator-review-labels/1), annotators `dlbench-1` and `dlbench-2`, for
benchmarks/review_suggest.py to score the suggestions against. The workbook is read with
the standard library (it is a zip of XML). Nothing here is committed data: point it at a
fetched copy of DL-Bench.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curator.store import Store  # noqa: E402
from curator.store import samples as sample_store  # noqa: E402
from curator.workspace import discover  # noqa: E402

NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
ANNOTATORS = {"dlbench-1": ("E", "F", "G", "H"), "dlbench-2": ("K", "L", "M", "N")}
VERDICT_WORDS = {"pass": "sample-correct", "passed": "sample-correct",
                 "problem": "benchmark-defect"}


def sheet_rows(path: Path, sheet: str = "Final") -> list[dict[str, str]]:
    with zipfile.ZipFile(path) as book:
        strings = []
        if "xl/sharedStrings.xml" in book.namelist():
            for item in ET.fromstring(book.read("xl/sharedStrings.xml")).iter(f"{NS}si"):
                strings.append("".join(t.text or "" for t in item.iter(f"{NS}t")))
        workbook = ET.fromstring(book.read("xl/workbook.xml"))
        names = [s.get("name") for s in workbook.iter(f"{NS}sheet")]
        number = names.index(sheet) + 1
        root = ET.fromstring(book.read(f"xl/worksheets/sheet{number}.xml"))
    rows = []
    for row in root.iter(f"{NS}row"):
        values = {}
        for cell in row.findall(f"{NS}c"):
            value = cell.find(f"{NS}v")
            if value is None:
                inline = cell.find(f"{NS}is")
                text = "".join(t.text or "" for t in inline.iter(f"{NS}t")) if inline is not None \
                    else ""
            else:
                text = strings[int(value.text)] if cell.get("t") == "s" else value.text or ""
            values[re.match(r"[A-Z]+", cell.get("r")).group()] = text.strip()
        rows.append(values)
    return rows


def _category(value: str) -> str | None:
    match = re.fullmatch(r"(\d+)(?:\.0)?", value or "")
    return match.group(1) if match and 1 <= int(match.group(1)) <= 15 else None


def labels(rows: list[dict[str, str]], by_name: dict[str, dict]) -> tuple[list[dict], int]:
    out, unmatched = [], 0
    for row in rows:
        result = re.search(r"Result/(processed_[^/]+)\.txt", row.get("D", ""))
        if not result:
            continue
        sample = by_name.get(result.group(1))
        if sample is None:
            unmatched += 1
            continue
        for annotator, (c1, r1, c2, r2) in ANNOTATORS.items():
            first = (row.get(c1) or "").lower()
            base = {"kind": "label", "sample": sample["content_hash"],
                    "problem_id": sample["problem_id"], "model": sample["model"],
                    "technique": sample["technique"], "sample_index": sample["sample_index"],
                    "annotator": annotator, "note": "", "taxonomy_version": 1,
                    "labelled_at": "2025-01-01T00:00:00+00:00"}
            if first in VERDICT_WORDS:
                out.append({**base, "verdict": VERDICT_WORDS[first], "pairs": []})
                continue
            pairs = []
            for column, reason in ((c1, r1), (c2, r2)):
                category = _category(row.get(column, ""))
                if category and all(p["category"] != category for p in pairs):
                    pairs.append({"category": category, "dl": None,
                                  "reason": row.get(reason, "")[:500]})
            if pairs:
                out.append({**base, "verdict": "bug", "pairs": pairs})
    return out, unmatched


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workbook")
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    ws = discover(args.workspace)
    with Store(ws.db_path, "benchmark") as store:
        by_name = {}
        for ident in sample_store.identities(store):
            origin = sample_store.get(store, ident["id"]).get("origin") or ""
            by_name[Path(origin).stem] = ident
    rows, unmatched = labels(sheet_rows(Path(args.workbook)), by_name)
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    print(f"{len(rows)} label(s) from {len({r['sample'] for r in rows})} sample(s); "
          f"{unmatched} row(s) name no sample of the workspace", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
