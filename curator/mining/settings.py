"""How mining reads a repository: the [mining] table of curator.toml, ready to match paths."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from curator.config import DEFAULT_EXCLUDE, MiningConfig

_DEFAULTS = MiningConfig()


@dataclass
class MiningSettings:
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    max_file_bytes: int = _DEFAULTS.max_file_bytes
    with_tests: bool = _DEFAULTS.with_tests
    call_depth: int = _DEFAULTS.call_depth
    indirect_tests: int = _DEFAULTS.indirect_tests
    _dir_patterns: tuple[str, ...] = field(default=(), repr=False)
    _path_patterns: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        self._dir_patterns = tuple(p for p in self.exclude if "/" not in p)
        self._path_patterns = tuple(p.strip("/") if p.endswith("/") else p
                                    for p in self.exclude if "/" in p)

    @classmethod
    def from_config(cls, config: MiningConfig) -> MiningSettings:
        """From the [mining] table: `exclude` replaces the defaults, `extra_exclude` adds."""
        return cls(exclude=config.exclude + config.extra_exclude,
                   max_file_bytes=config.max_file_bytes, with_tests=config.with_tests,
                   call_depth=config.call_depth, indirect_tests=config.indirect_tests)

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
