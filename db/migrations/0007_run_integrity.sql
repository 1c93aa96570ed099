-- Runs that tried to change how they are judged: outcome `tampered`, with the evidence.
-- SQLite cannot alter a CHECK constraint, so the table is rebuilt with its rows and indexes.

CREATE TABLE runs_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    problem_id TEXT NOT NULL REFERENCES problems(id),
    solution_kind TEXT NOT NULL CHECK (solution_kind IN ('reference', 'sample')),
    solution_hash TEXT NOT NULL,           -- sha256 of the solution text that ran
    sample_id INTEGER,                     -- samples arrive in 0004; no foreign key here
    outcome TEXT NOT NULL CHECK (outcome IN
        ('passed', 'failed', 'error', 'timeout', 'oom', 'crashed', 'no_code', 'tampered',
         'infra')),
    tests TEXT NOT NULL DEFAULT '[]',      -- JSON [{"id", "outcome", "duration_s"}]
    duration_s REAL NOT NULL DEFAULT 0,
    stdout TEXT NOT NULL DEFAULT '',       -- capped
    stderr TEXT NOT NULL DEFAULT '',       -- capped
    reason TEXT NOT NULL DEFAULT '',
    env TEXT NOT NULL DEFAULT '{}',        -- JSON {"python", "torch", "isolation"}
    timeout_s REAL,                        -- the wall-clock limit this run had
    started_at TEXT NOT NULL,
    actor TEXT NOT NULL,
    job_id TEXT NOT NULL,
    evidence TEXT NOT NULL DEFAULT '[]'    -- JSON [str]: what a tampered run tried
);

INSERT INTO runs_new (id, problem_id, solution_kind, solution_hash, sample_id, outcome, tests,
                      duration_s, stdout, stderr, reason, env, timeout_s, started_at, actor,
                      job_id)
SELECT id, problem_id, solution_kind, solution_hash, sample_id, outcome, tests, duration_s,
       stdout, stderr, reason, env, timeout_s, started_at, actor, job_id FROM runs;

DROP TABLE runs;

ALTER TABLE runs_new RENAME TO runs;

CREATE INDEX runs_problem ON runs (problem_id, id);
CREATE INDEX runs_sample ON runs (sample_id);
CREATE INDEX runs_kind ON runs (solution_kind, problem_id, id);
