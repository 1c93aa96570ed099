"""[mining] settings from curator.toml, with defaults."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

# A pattern without "/" matches any folder name on the path; one with "/" is matched
# against the whole path (fnmatch syntax).
DEFAULT_EXCLUDE = (
    "vendor", "vendored", "_vendor", "third_party", "thirdparty", "3rdparty", "external",
    "extern", "build", "dist", "docs", "doc", "examples", "example", "site-packages",
    "node_modules", ".*", "__pycache__", "*.egg-info", "setup.py", "noxfile.py",
)
DEFAULT_MAX_FILE_BYTES = 1_000_000
DEFAULT_CALL_DEPTH = 3          # calls followed from a tested function (0: direct tests only)
DEFAULT_INDIRECT_TESTS = 20     # node ids a function gets from the callers that test it


@dataclass
class MiningSettings:
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    with_tests: bool = True
    call_depth: int = DEFAULT_CALL_DEPTH
    indirect_tests: int = DEFAULT_INDIRECT_TESTS
    _dir_patterns: tuple[str, ...] = field(default=(), repr=False)
    _path_patterns: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        self._dir_patterns = tuple(p for p in self.exclude if "/" not in p)
        self._path_patterns = tuple(p.strip("/") if p.endswith("/") else p
                                    for p in self.exclude if "/" in p)

    @classmethod
    def from_config(cls, config: dict | None) -> MiningSettings:
        section = (config or {}).get("mining", {}) or {}
        exclude = tuple(section.get("exclude", DEFAULT_EXCLUDE))
        exclude += tuple(section.get("extra_exclude", ()))
        return cls(exclude=exclude,
                   max_file_bytes=int(section.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES)),
                   with_tests=bool(section.get("with_tests", True)),
                   call_depth=int(section.get("call_depth", DEFAULT_CALL_DEPTH)),
                   indirect_tests=int(section.get("indirect_tests", DEFAULT_INDIRECT_TESTS)))

    def excluded(self, path: str) -> bool:
        parts = path.split("/")
        for part in parts:
            for pattern in self._dir_patterns:
                if fnmatch.fnmatchcase(part, pattern):
                    return True
        for pattern in self._path_patterns:
            if fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, pattern + "/*"):
                return True
        return False
