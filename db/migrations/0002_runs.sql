-- Execution: one row per run of a solution (reference or sample) against a problem's tests.

CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    problem_id TEXT NOT NULL REFERENCES problems(id),
    solution_kind TEXT NOT NULL CHECK (solution_kind IN ('reference', 'sample')),
    solution_hash TEXT NOT NULL,           -- sha256 of the solution text that ran
    sample_id INTEGER,                     -- samples arrive in 0004; no foreign key here
    outcome TEXT NOT NULL CHECK (outcome IN
        ('passed', 'failed', 'error', 'timeout', 'oom', 'crashed', 'no_code', 'infra')),
    tests TEXT NOT NULL DEFAULT '[]',      -- JSON [{"id", "outcome", "duration_s"}]
    duration_s REAL NOT NULL DEFAULT 0,
    stdout TEXT NOT NULL DEFAULT '',       -- capped
    stderr TEXT NOT NULL DEFAULT '',       -- capped
    reason TEXT NOT NULL DEFAULT '',
    env TEXT NOT NULL DEFAULT '{}',        -- JSON {"python", "torch", "isolation"}
    timeout_s REAL,                        -- the wall-clock limit this run had
    started_at TEXT NOT NULL,
    actor TEXT NOT NULL,
    job_id TEXT NOT NULL
);

CREATE INDEX runs_problem ON runs (problem_id, id);
CREATE INDEX runs_sample ON runs (sample_id);
CREATE INDEX runs_kind ON runs (solution_kind, problem_id, id);
