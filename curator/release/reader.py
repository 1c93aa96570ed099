"""Reading a release bundle, from its folder or from its .tar.gz, into memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from curator.archives import ArchiveError, read_tar_gz
from curator.errors import ReleaseError
from curator.limits import DEFAULT, InputError, Limits, decode, loads_json, read_bytes

MANIFEST = "manifest.json"
PROBLEMS = "problems.jsonl"
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz")


def is_archive_name(name: str) -> bool:
    return name.endswith(ARCHIVE_SUFFIXES) or name.endswith(
        tuple(s + ".sha256" for s in ARCHIVE_SUFFIXES))


@dataclass
class Bundle:
    path: Path
    kind: str                                   # "folder" | "archive"
    files: dict[str, bytes]                     # relative path -> bytes (manifest included)
    archives: list[Path] = field(default_factory=list)   # .tar.gz files beside a folder

    @property
    def manifest(self) -> dict:
        raw = self.files.get(MANIFEST)
        if raw is None:
            raise ReleaseError(f"{self.path}: no {MANIFEST}; not a release bundle")
        try:
            data = loads_json(decode(raw, MANIFEST, bom=False))
        except ValueError as exc:
            raise ReleaseError(f"{self.path}: {MANIFEST}: {exc}") from None
        if not isinstance(data, dict):
            raise ReleaseError(f"{self.path}: {MANIFEST} must be a JSON object")
        return data

    @property
    def name(self) -> str:
        return str(self.manifest.get("name", ""))

    @property
    def version(self) -> str:
        return str(self.manifest.get("version", ""))

    def jsonl(self, name: str) -> list[tuple[int, object]]:
        """(line number, parsed value or the ValueError saying why not) for each non-empty
        line; values are checked against the shared limits (curator.limits)."""
        raw = self.files.get(name)
        if raw is None:
            return []
        out = []
        for number, line in enumerate(raw.split(b"\n"), 1):
            if not line.strip():
                continue
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                out.append((number, ValueError(f"not valid UTF-8 (byte {exc.start})")))
                continue
            try:
                out.append((number, loads_json(text)))
            except ValueError as exc:
                out.append((number, exc))
        return out

    def problem_rows(self) -> list[dict]:
        rows = []
        for number, row in self.jsonl(PROBLEMS):
            if not isinstance(row, dict) or "task_id" not in row:
                raise ReleaseError(f"{self.path}: {PROBLEMS} line {number} is not a problem row")
            rows.append(row)
        return rows


def read_bundle(path: str | Path, limits: Limits = DEFAULT) -> Bundle:
    """A bundle folder (with manifest.json) or a bundle .tar.gz, within the size limits."""
    path = Path(path)
    if path.is_dir():
        files = {}
        archives = []
        total = 0
        for item in sorted(path.rglob("*")):
            if not item.is_file():
                continue
            rel = item.relative_to(path).as_posix()
            if "/" not in rel and is_archive_name(rel):
                if rel.endswith(ARCHIVE_SUFFIXES):
                    archives.append(item)
                continue
            try:
                files[rel] = read_bytes(item, limits.archive_member_bytes)
            except InputError as exc:
                raise ReleaseError(f"{path}: {rel}: {exc.message}") from None
            total += len(files[rel])
            if total > limits.archive_total_bytes:
                raise ReleaseError(f"{path}: files add up to more than "
                                   f"{limits.archive_total_bytes} bytes ([limits] "
                                   "archive_total_bytes in curator.toml)")
        if MANIFEST not in files:
            raise ReleaseError(f"{path}: no {MANIFEST}; not a release bundle folder")
        return Bundle(path, "folder", files, archives)
    if path.is_file():
        try:
            _prefix, files = read_tar_gz(path, limits)
        except ArchiveError as exc:
            raise ReleaseError(f"{path}: {exc}") from None
        if MANIFEST not in files:
            raise ReleaseError(f"{path}: the archive holds no {MANIFEST}; not a release bundle")
        return Bundle(path, "archive", files)
    raise ReleaseError(f"{path}: no such bundle folder or archive")
