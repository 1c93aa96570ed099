"""How often the suggested review categories agree with people's labels.

    .venv/bin/python benchmarks/review_suggest.py [LABELS.jsonl] [--workspace WS]
        [--samples FILE] [--problems DIR] [--model NAME --base-url URL] [--json]

LABELS.jsonl is a labelled review export (`curator review export`, format
curator-review-labels/1). Each label row is matched by its sample's content hash to a
failing sample of a workspace, the sample's suggestions are computed (`review suggest`:
rules on its failure log, then the model when `--model` is given), and the figures are
printed beside the majority-class baseline (always answering the most frequent category,
or the three most frequent for top-3):

- top-1: the first suggestion is the label's main category;
- top-3: the main category is one of the (up to three) suggestions;
- any: the first suggestion is one of the label's 1-2 categories.

Without --workspace a temporary one is built from the frozen seed problems
(tests/fixtures/seed_problems) and the hand-made failing samples of
benchmarks/data/review_samples.jsonl, evaluated through the sandboxed engine (about a
minute), which is what benchmarks/data/review_labels.jsonl (the default LABELS) labels.
With --workspace WS, the samples already in WS are used (for instance DL-Bench's
Taxonomy-Data imported with `curator dlbench taxonomy`, labels from
benchmarks/dlbench_taxonomy_labels.py). Verdict labels (sample correct, benchmark defect)
are counted apart: no suggestion can agree with them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curator import llm  # noqa: E402
from curator.review import suggest  # noqa: E402
from curator.review.queue import queue as review_items  # noqa: E402
from curator.store import Store  # noqa: E402
from curator.store import samples as sample_store  # noqa: E402
from curator.taxonomy import BUG  # noqa: E402
from curator.workspace import discover  # noqa: E402

DATA = ROOT / "benchmarks" / "data"


def _curator(ws: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "curator", "--workspace", str(ws), *args],
                   check=True, stdout=subprocess.DEVNULL, cwd=ROOT)


def build_workspace(where: Path, samples: Path, problems: Path) -> Path:
    ws = where / "ws"
    ws.mkdir(parents=True)
    shutil.copytree(problems, ws / "problems")
    _curator(ws, "load")
    _curator(ws, "samples", "import", str(samples))
    _curator(ws, "samples", "eval", "--workers", "2")
    return ws


def read_labels(path: Path) -> list[dict]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if row.get("kind", "label") in ("label", "final"):
                rows.append(row)
    return rows


def measure(store: Store, labels: list[dict], client=None, model: str | None = None) -> dict:
    items = {i.sample_id: i for i in review_items(store, None)}
    units = []     # (main category, all categories, suggestions)
    verdicts = 0
    missing = 0
    cache: dict[int, list[str]] = {}
    for row in labels:
        sample_id = sample_store.id_for_content(store, row["sample"])
        if sample_id is None or sample_id not in items:
            missing += 1
            continue
        if (row.get("verdict") or BUG) != BUG:
            verdicts += 1
            continue
        if sample_id not in cache:
            found = suggest.for_item(store, items[sample_id], client, model)
            cache[sample_id] = [s.category for s in found.categories]
        categories = [str(p["category"]) for p in row["pairs"]]
        units.append((categories[0], categories, cache[sample_id]))
    n = len(units)
    counts = Counter(main for main, _, _ in units)
    top3_classes = [c for c, _ in counts.most_common(3)]
    majority = counts.most_common(1)[0][0] if counts else None

    def share(hits: int) -> float | None:
        return round(hits / n, 4) if n else None

    return {
        "labels": n, "samples": len(cache), "verdict_labels": verdicts,
        "unmatched_labels": missing,
        "with_suggestion": sum(1 for _, _, s in units if s),
        "top1": share(sum(1 for main, _, s in units if s and s[0] == main)),
        "top3": share(sum(1 for main, _, s in units if main in s)),
        "any": share(sum(1 for _, cats, s in units if s and s[0] in cats)),
        "baseline": {"majority_class": majority,
                     "top1": share(counts[majority]) if majority else None,
                     "top3": share(sum(counts[c] for c in top3_classes)),
                     "any": share(sum(1 for _, cats, _ in units if majority in cats))},
        "labels_by_category": dict(counts.most_common()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("labels", nargs="?", default=str(DATA / "review_labels.jsonl"))
    parser.add_argument("--workspace")
    parser.add_argument("--samples", default=str(DATA / "review_samples.jsonl"))
    parser.add_argument("--problems", default=str(ROOT / "tests" / "fixtures" /
                                                  "seed_problems"))
    parser.add_argument("--model")
    parser.add_argument("--base-url")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    labels = read_labels(Path(args.labels))
    client = llm.client_for(args.base_url) if args.model and args.base_url else None
    with tempfile.TemporaryDirectory(prefix="review-suggest-") as tmp:
        ws_dir = Path(args.workspace) if args.workspace else \
            build_workspace(Path(tmp), Path(args.samples), Path(args.problems))
        ws = discover(ws_dir)
        with Store(ws.db_path, "benchmark") as store:
            result = measure(store, labels, client, args.model)
    result["source"] = {"labels": args.labels, "workspace": args.workspace or "built"}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    base = result["baseline"]

    def pct(x):
        return "n/a" if x is None else f"{100 * x:5.1f}%"

    print(f"{result['labels']} bug label(s) on {result['samples']} sample(s) "
          f"({result['verdict_labels']} verdict label(s) and {result['unmatched_labels']} "
          f"unmatched left out); {result['with_suggestion']} with a suggestion")
    print(f"{'':24}{'suggestions':>12}{'majority (' + str(base['majority_class']) + ')':>18}")
    for key, name in (("top1", "top-1"), ("top3", "top-3"), ("any", "top-1 in any pair")):
        print(f"{name:24}{pct(result[key]):>12}{pct(base[key]):>18}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
