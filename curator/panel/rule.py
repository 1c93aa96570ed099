"""The [candidates] table of curator.toml: when a panel's votes promote a candidate.

    [candidates]
    accept_when = "2 of 3"    # promoted at 2 "relevant" votes; rejected at 2 "not relevant"

A candidate is promoted once K of its votes say relevant, rejected once more than N - K
say not relevant (K can no longer be reached), and otherwise waits for votes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from curator.errors import CuratorError

DEFAULT_ACCEPT_WHEN = "2 of 3"
_RULE = re.compile(r"^\s*(\d+)\s+of\s+(\d+)\s*$")


@dataclass(frozen=True)
class AcceptRule:
    k: int
    n: int

    def __str__(self) -> str:
        return f"{self.k} of {self.n}"

    @classmethod
    def parse(cls, text: str) -> AcceptRule:
        match = _RULE.match(str(text))
        if not match:
            raise CuratorError(f"curator.toml: [candidates] accept_when = {text!r} must "
                               "read \"K of N\", e.g. \"2 of 3\"")
        k, n = int(match.group(1)), int(match.group(2))
        if not 1 <= k <= n:
            raise CuratorError(f"curator.toml: [candidates] accept_when = {text!r} needs "
                               "1 <= K <= N")
        return cls(k, n)

    def decide(self, yes: int, no: int) -> str:
        """`accept`, `reject` or `wait` for these vote counts."""
        if yes >= self.k:
            return "accept"
        if no > self.n - self.k:
            return "reject"
        return "wait"


@dataclass(frozen=True)
class CandidateSettings:
    accept_when: AcceptRule = AcceptRule.parse(DEFAULT_ACCEPT_WHEN)

    @classmethod
    def from_config(cls, config: dict | None) -> CandidateSettings:
        section = (config or {}).get("candidates", {}) or {}
        if not isinstance(section, dict):
            raise CuratorError("curator.toml: [candidates] must be a table")
        return cls(AcceptRule.parse(section.get("accept_when", DEFAULT_ACCEPT_WHEN)))
