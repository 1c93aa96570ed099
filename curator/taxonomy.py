"""The bug taxonomy: top-level categories, DL-specific sub-categories, review verdicts.

The default ships as curator/data/taxonomy.json (editable). The database keeps every
version that was ever used (table taxonomy_versions); the highest version is current and
every review label records the version it was made against.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from curator.errors import CuratorError, NotFoundError
from curator.limits import Field, InputError, loads_json, read_text, schema_errors
from curator.store import Store, taxonomy_versions

# Each category of a taxonomy document: ids may be numbers (1-15), the rest text.
CATEGORY_SCHEMA = {"id": Field("str|int", required=True), "name": Field("str", required=True),
                   "definition": Field("str"), "slug": Field("str")}

NOT_DL = "not-dl"
BUG = "bug"


@dataclass(frozen=True)
class Category:
    id: str
    name: str
    definition: str
    slug: str = ""


def review_key(category_id: str, position: int) -> str:
    """The key that picks a category when reviewing: its id.

    Ids 1-9 are one key; 10-19 are `0` then the last digit (`0 0` is 10, `0 5` is 15).
    A category whose id is not a number takes its 1-based position the same way. The app,
    the CLI's `taxonomy` table and the labelling guidelines all show this key.
    """
    number = int(category_id) if category_id.isdigit() else position
    if 1 <= number <= 9:
        return str(number)
    if 10 <= number <= 19:
        return f"0 {number - 10}"
    return ""


@dataclass(frozen=True)
class Taxonomy:
    version: int
    name: str
    categories: tuple[Category, ...]
    dl_categories: tuple[Category, ...]
    verdicts: tuple[Category, ...]
    document: dict

    def category(self, key: str) -> Category:
        key = str(key).strip()
        for cat in self.categories:
            if key in (cat.id, cat.slug):
                return cat
        raise NotFoundError(f"unknown bug category {key!r} (see `curator taxonomy`)")

    def dl_category(self, key: str) -> Category:
        key = str(key).strip()
        for cat in self.dl_categories:
            if key == cat.id:
                return cat
        raise NotFoundError(f"unknown DL-specific category {key!r} (see `curator taxonomy`)")

    def resolve(self, spec: str) -> tuple[str, str | None]:
        """'8', 'wrong-attribute-api' or '8/dl-api-usage' -> (top-level id, DL id or None)."""
        top, _, sub = str(spec).partition("/")
        return self.category(top).id, (self.dl_category(sub).id if sub.strip() else None)

    def verdict_ids(self) -> tuple[str, ...]:
        return tuple(v.id for v in self.verdicts)

    def verdict_name(self, verdict: str) -> str:
        return next((v.name for v in self.verdicts if v.id == verdict), verdict)

    def category_name(self, category: str) -> str:
        return next((c.name for c in self.categories if c.id == category), "")

    def to_json(self) -> dict:
        return {"version": self.version, "name": self.name,
                "categories": [_cat_json(c, slug=True) for c in self.categories],
                "dl_categories": [_cat_json(c) for c in self.dl_categories],
                "verdicts": [_cat_json(c) for c in self.verdicts]}


def _cat_json(cat: Category, slug: bool = False) -> dict:
    out = {"id": cat.id}
    if slug:
        out["slug"] = cat.slug
    out.update(name=cat.name, definition=cat.definition)
    return out


def default_document() -> dict:
    text = resources.files("curator").joinpath("data/taxonomy.json").read_text(encoding="utf-8")
    return json.loads(text)


# The review verdicts: ids from the shipped taxonomy.json (the one definition; review
# labels, the database's CHECK and the app's keys use these ids, the names come from the
# taxonomy in use).
VERDICTS: tuple[str, ...] = tuple(str(v["id"]) for v in default_document()["verdicts"])


def validate(doc: dict) -> list[str]:
    """Every reason this taxonomy document is malformed (empty when fine)."""
    errors = []
    if not isinstance(doc, dict):
        return ["a taxonomy must be a JSON object"]
    errors += schema_errors(doc, {"name": Field("str")})
    for key in ("categories", "dl_categories", "verdicts"):
        items = doc.get(key)
        if not isinstance(items, list) or not items:
            errors.append(f"{key!r} must be a non-empty list")
            continue
        seen = set()
        for position, item in enumerate(items):
            if not isinstance(item, dict) or not str(item.get("id", "")).strip() \
                    or not str(item.get("name", "")).strip():
                errors.append(f"{key}[{position}] needs a non-empty 'id' and 'name'")
                continue
            wrong = schema_errors(item, CATEGORY_SCHEMA, f"{key}[{position}]")
            if wrong:
                errors += wrong
                continue
            ident = str(item["id"])
            if "/" in ident:
                errors.append(f"{key}[{position}]: id {ident!r} must not contain '/'")
            if ident in seen:
                errors.append(f"{key}: duplicate id {ident!r}")
            seen.add(ident)
    if isinstance(doc.get("dl_categories"), list) and not any(
            isinstance(c, dict) and c.get("id") == NOT_DL for c in doc["dl_categories"]):
        errors.append(f"dl_categories must include {NOT_DL!r}")
    if isinstance(doc.get("verdicts"), list):
        ids = {c.get("id") for c in doc["verdicts"] if isinstance(c, dict)}
        if ids != set(VERDICTS):
            errors.append("verdicts must be exactly "
                          + " and ".join(repr(v) for v in VERDICTS))
    return errors


def from_document(doc: dict, version: int) -> Taxonomy:
    def cats(key: str) -> tuple[Category, ...]:
        return tuple(Category(str(c["id"]), c["name"], c.get("definition", ""),
                              c.get("slug", "")) for c in doc[key])

    return Taxonomy(version, doc.get("name", "bug taxonomy"), cats("categories"),
                    cats("dl_categories"), cats("verdicts"), doc)


def _canonical(doc: dict) -> str:
    return json.dumps(doc, sort_keys=True, ensure_ascii=False, indent=2)


def add_version(store: Store, doc: dict, source: str = "") -> tuple[int, bool]:
    """Store `doc` as the new current version: (version, created). Unchanged -> not created."""
    errors = validate(doc)
    if errors:
        raise CuratorError(f"{source or 'taxonomy'}: {'; '.join(errors)}")
    if source != "default":
        current(store)  # version 1 is always the packaged default
    body = _canonical(doc)
    digest = hashlib.sha256(body.encode()).hexdigest()
    with store.transaction():
        latest = taxonomy_versions.latest(store)
        if latest and latest["sha256"] == digest:
            return latest["version"], False
        version = (latest["version"] if latest else 0) + 1
        taxonomy_versions.insert(store, version, digest, body, source)
    return version, True


def current(store: Store) -> Taxonomy:
    """The current taxonomy; the packaged default is stored as version 1 on first use."""
    row = taxonomy_versions.latest(store)
    if row is None:
        add_version(store, default_document(), source="default")
        row = taxonomy_versions.latest(store)
    return from_document(json.loads(row["body"]), row["version"])


def get_version(store: Store, version: int) -> Taxonomy:
    current(store)
    row = taxonomy_versions.get(store, version)
    if row is None:
        raise NotFoundError(f"taxonomy version {version} not found")
    return from_document(json.loads(row["body"]), row["version"])


def versions(store: Store) -> list[dict]:
    current(store)
    return taxonomy_versions.listing(store)


def load_file(store: Store, path: str | Path) -> tuple[int, bool]:
    path = Path(path)
    try:
        doc = loads_json(read_text(path))
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(path, str(exc), getattr(exc, "line", None)) from None
    return add_version(store, doc, source=str(path))
