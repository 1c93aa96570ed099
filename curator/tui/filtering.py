"""The Problems screen's filter language: free text plus `key:value` terms.

    stage:model status:draft,ready -task:general focal loss valid:no

Free words go to the full-text index (title, prompt, code). `key:value` keeps rows whose
field is one of the comma-separated values; a value may be a prefix of a slug
(`stage:mod` is `stage:model`) so the table narrows while you type; `none` means unset.
A leading `-` excludes. No textual here: the screen calls `parse` and `matches`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from curator.execution.job import OUTCOMES
from curator.labels import VOCAB
from curator.problem import KINDS, STATUSES

# filter key -> (row field, allowed values)
KEYS: dict[str, tuple[str, tuple[str, ...]]] = {
    "stage": ("stage", VOCAB["stage"]),
    "task": ("task", VOCAB["task"]),
    "data": ("data", VOCAB["data"]),
    "status": ("status", STATUSES),
    "kind": ("kind", KINDS),
    "run": ("outcome", OUTCOMES),
    "valid": ("valid", ("yes", "no")),   # `curator validate`: stub fails, reference stable
}
ALIASES = {"outcome": "run", "is": "status", "type": "kind"}
NONE = "none"
# A one-letter prefix matches nearly every problem and costs the most to look up; such
# words wait for a second letter.
MIN_WORD = 2


@dataclass
class Filter:
    text: str = ""
    include: dict[str, set[str]] = field(default_factory=dict)   # row field -> values
    exclude: dict[str, set[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.text or self.include or self.exclude)


def _values(key: str, raw: str, warnings: list[str]) -> set[str] | None:
    allowed = KEYS[key][1]
    chosen: set[str] = set()
    for part in (p.strip().lower() for p in raw.split(",")):
        if not part:
            continue
        if part == NONE:
            chosen.add("")
        elif part in allowed:
            chosen.add(part)
        else:
            prefixed = {v for v in allowed if v.startswith(part)}
            if not prefixed:
                warnings.append(f"{key}:{part} matches no value "
                                f"(one of {', '.join(allowed)}, {NONE})")
            chosen |= prefixed
    return chosen if raw.strip(", ") else None


def parse(query: str) -> Filter:
    """Split what a person typed into full-text words and field terms."""
    result = Filter()
    words = []
    for token in query.split():
        negate = token[:1] in ("-", "!") and ":" in token
        body = token[1:] if negate else token
        key, sep, raw = body.partition(":")
        key = ALIASES.get(key.lower(), key.lower())
        if not sep:
            words.append(token)
            continue
        if key not in KEYS:
            result.warnings.append(
                f"unknown filter key {key!r} (use {', '.join(KEYS)})")
            continue
        values = _values(key, raw, result.warnings)
        if values is None:   # "stage:" while typing: no constraint yet
            continue
        target = result.exclude if negate else result.include
        column = KEYS[key][0]
        if negate:
            target.setdefault(column, set()).update(values)
        elif column in target:
            target[column] &= values   # two terms on one key must both hold
        else:
            target[column] = set(values)
    short = [w for w in words if len(w) < MIN_WORD]
    if short:
        result.hints.append(f"type {MIN_WORD}+ letters to search text")
    result.text = " ".join(w for w in words if len(w) >= MIN_WORD)
    return result


def matches(row: dict, flt: Filter) -> bool:
    for column, values in flt.include.items():
        if (row.get(column) or "") not in values:
            return False
    for column, values in flt.exclude.items():
        if (row.get(column) or "") in values:
            return False
    return True


def apply(rows: list[dict], flt: Filter) -> list[dict]:
    return [row for row in rows if matches(row, flt)]
