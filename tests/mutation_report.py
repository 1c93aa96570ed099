"""Print the mutation score per module from mutmut's results (`make mutate` runs this).

Reads mutants/**/*.py.meta (mutmut 3). Score = (killed + timeout) / (mutants checked),
where "no tests" counts as not killed. Mutants listed as equivalent in
docs/ARCHITECTURE.md#equivalent-mutants (lines "- `name`") are left out of the score.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

from mutmut.stats import status_by_exit_code

ROOT = Path(__file__).resolve().parents[1]


def equivalent() -> set[str]:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("### Equivalent mutants", 1)[-1] if "### Equivalent mutants" in text \
        else ""
    return set(re.findall(r"^- `([\w.]+__mutmut_\d+)`", section, re.M))


def main(mutants: Path = ROOT / "mutants", target: float = 90.0) -> int:
    skip = equivalent()
    rows, below = [], 0
    for meta in sorted(mutants.rglob("*.py.meta")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        counts = Counter()
        for name, code in data.get("exit_code_by_key", {}).items():
            counts["equivalent" if name in skip else status_by_exit_code[code]] += 1
        checked = sum(n for status, n in counts.items()
                      if status not in ("not checked", "skipped", "equivalent"))
        killed = counts["killed"] + counts["timeout"]
        score = 100.0 * killed / checked if checked else None   # None: not run
        below += score is not None and score < target
        module = str(meta.relative_to(mutants)).removesuffix(".meta")
        rows.append((module, score, killed, counts["survived"], counts["no tests"],
                     counts["equivalent"], counts["not checked"]))
    print(f"{'module':40} {'score':>7} {'killed':>7} {'survived':>9} {'no tests':>9} "
          f"{'equiv.':>7} {'unchecked':>10}")
    for module, score, *numbers in rows:
        shown = f"{score:6.1f}%" if score is not None else "not run"
        print(f"{module:40} {shown:>7} " + " ".join(
            f"{n:>{w}}" for n, w in zip(numbers, (7, 9, 9, 7, 10))))
    return 1 if below and "--strict" in sys.argv else 0


if __name__ == "__main__":
    sys.exit(main())
