"""What one run is (a Job: problem spec + solution text + limits) and what it yields.

Both are plain data that survive a round trip through JSON, so a job can be executed by
a local worker process today and by a cluster backend (Ray) later.
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass, field, fields

# Every outcome a run can have; the one definition (the runs table's CHECK, the bundle
# verifier and the app's filter all use this tuple). `tampered`: the solution tried to
# change how it is judged, never a pass. `infra`: the harness failed, not the solution.
OUTCOMES = ("passed", "failed", "error", "timeout", "oom", "crashed", "no_code", "tampered",
            "infra")


@dataclass
class Limits:
    """Resource limits for one run.

    memory_mb is address space the run may add on top of the interpreter it starts from
    (a warm worker that has imported torch, or a fresh interpreter for repo-backed runs),
    per process: the judge and the solution each, and twice that for the two in the slot's
    memory cgroup (`pool.run_memory_mb`).
    file_mb caps each file a run writes; it must leave room for what compilers write at
    run time (torch.compile's precompiled header is ~160 MB). What a strong run writes
    in all is bounded by its size-limited /tmp.
    """

    timeout_s: float = 60.0
    memory_mb: int = 4096
    processes: int = 128
    file_mb: int = 512
    open_files: int = 256
    output_kb: int = 64
    # A limit that grows with the tests the run collects (a reference never timed, whose
    # node ids may name a file of many tests): per_test_s for each, at most
    # max_timeout_s, never below timeout_s (`wall_limit`). 0: timeout_s alone.
    per_test_s: float = 0.0
    max_timeout_s: float = 0.0

    def wall_limit(self, collected: int | None = None) -> float:
        """The wall-clock limit of a run that collected `collected` tests (None: not
        known yet, the limit is timeout_s until collection ends)."""
        if self.per_test_s <= 0 or not collected:
            return self.timeout_s
        return max(self.timeout_s, min(self.max_timeout_s, self.per_test_s * collected))

    def longest(self) -> float:
        """The most `wall_limit` can give: what CPU limits and safety nets allow."""
        return max(self.timeout_s, self.max_timeout_s) if self.per_test_s > 0 \
            else self.timeout_s

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> Limits:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (data or {}).items() if k in names})


@dataclass
class Job:
    problem_id: str
    solution: str
    entry_point: str = ""
    kind: str = "function"
    tests: str | None = None           # test_solution.py text (self-contained problems)
    node_ids: list[str] | None = None  # pytest node ids that must all pass (repo-backed)
    deselect: list[str] = field(default_factory=list)  # tests inside them left out
    repo_dir: str | None = None        # checkout of a repo-backed problem
    overlay: dict[str, str] = field(default_factory=dict)  # relpath -> text, for this run
    # The target's qualname in the overlay's module ("func", "Class.method"): in the judge
    # it is a proxy for the candidate in the solution process (with whatever else the
    # candidate's module changed).
    symbol: str | None = None
    python: str | None = None          # interpreter for repo-backed runs
    env_preload: list[str] = field(default_factory=list)  # its warm workers import these
    # pytest plugins of the environment its runs disable (-p no:NAME): ones that stop
    # pytest from starting there (the repository's recipe, `disable_plugins`)
    disable_plugins: list[str] = field(default_factory=list)
    # {"url", "commit", "lock", "python_version"}: lets a cluster node rebuild the
    # checkout and environment itself (None: the job runs only where repo_dir is).
    repo: dict | None = None
    # How the run is judged (curator.execution.verdict): the reference by pytest's own
    # rule; any other solution against the reference's per-test outcomes (baseline), or,
    # with no baseline known, by requiring every test to pass.
    reference: bool = False
    baseline: dict[str, str] | None = None
    limits: Limits = field(default_factory=Limits)
    job_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def repo_backed(self) -> bool:
        return self.repo_dir is not None

    def to_dict(self) -> dict:
        data = asdict(self)
        data["limits"] = self.limits.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Job:
        names = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in names}
        kwargs["limits"] = Limits.from_dict(data.get("limits"))
        return cls(**kwargs)


def safe_text(value: str) -> str:
    """Text any store and terminal can take: lone surrogates and invalid UTF-8 written as
    backslash escapes, NUL as \\x00."""
    if not isinstance(value, str):
        value = str(value)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value.replace("\x00", "\\x00") if "\x00" in value else value


def safe_data(value):
    """safe_text for every string in JSON-like data (keys too)."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_data(k) if isinstance(k, str) else k: safe_data(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [safe_data(v) for v in value]
    return value


@dataclass
class RunResult:
    job_id: str
    problem_id: str
    outcome: str
    tests: list[dict] = field(default_factory=list)  # [{"id", "outcome", "duration_s"}]
    duration_s: float = 0.0
    stdout: str = ""
    stderr: str = ""
    reason: str = ""
    env: dict = field(default_factory=dict)  # {"python", "torch", "isolation"}
    timeout_s: float | None = None
    evidence: list[str] = field(default_factory=list)  # what a `tampered` run tried

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    def to_dict(self) -> dict:
        return asdict(self)

    def cleaned(self) -> RunResult:
        """This result with every text safe to store (see safe_text)."""
        return RunResult.from_dict(safe_data(self.to_dict()))

    @classmethod
    def from_dict(cls, data: dict) -> RunResult:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    @classmethod
    def infra(cls, job: Job, reason: str, **extra) -> RunResult:
        return cls(job_id=job.job_id, problem_id=job.problem_id, outcome="infra",
                   reason=reason, timeout_s=job.limits.timeout_s, **extra)
