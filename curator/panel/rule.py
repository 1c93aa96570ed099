"""The [candidates] table of curator.toml: when a panel's votes promote a candidate.

    [candidates]
    accept_when = "2 of 3"    # promoted at 2 "relevant" votes; rejected at 2 "not relevant"

A candidate is promoted once K of its votes say relevant, rejected once more than N - K
say not relevant (K can no longer be reached), and otherwise waits for votes.
"""

from __future__ import annotations

from dataclasses import dataclass

from curator.config import CandidatesConfig, Config, k_of_n
from curator.errors import CuratorError

DEFAULT_ACCEPT_WHEN = CandidatesConfig().accept_when


@dataclass(frozen=True)
class AcceptRule:
    k: int
    n: int

    def __str__(self) -> str:
        return f"{self.k} of {self.n}"

    @classmethod
    def parse(cls, text: str) -> AcceptRule:
        try:
            return cls(*k_of_n(text))
        except ValueError as exc:
            raise CuratorError(f"curator.toml: [candidates] {exc}") from None

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
    def from_config(cls, config: Config) -> CandidateSettings:
        """From the [candidates] table (curator.config checked the rule when it read it)."""
        return cls(AcceptRule.parse(config.candidates.accept_when))
