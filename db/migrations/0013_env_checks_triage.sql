-- Environments that say whether they work, and the triage of reference runs.

-- Whether the environment imports its framework and the repository (`built`), else
-- `broken` with the reason; the declared requirements that were left out of it, each with
-- why (JSON [{"requirement", "reason"}]); paths the checkout lacks (missing git objects).
ALTER TABLE repo_envs ADD COLUMN status TEXT NOT NULL DEFAULT 'built';
ALTER TABLE repo_envs ADD COLUMN reason TEXT NOT NULL DEFAULT '';
ALTER TABLE repo_envs ADD COLUMN left_out TEXT NOT NULL DEFAULT '[]';
ALTER TABLE repo_envs ADD COLUMN missing TEXT NOT NULL DEFAULT '[]';

-- The triage of a problem's reference (3 runs): green or why not, and the cause of every
-- test that failed (needs_gpu, needs_network, flaky, fails_upstream), which is excluded.
CREATE TABLE triage (
    problem_id TEXT PRIMARY KEY REFERENCES problems(id) ON DELETE CASCADE,
    solution_hash TEXT NOT NULL,        -- the reference text that was triaged
    green INTEGER NOT NULL,             -- 1: its remaining tests pass
    reason TEXT NOT NULL DEFAULT '',    -- why it is not green
    causes TEXT NOT NULL DEFAULT '{}',  -- JSON {node id: cause}
    runs INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    actor TEXT NOT NULL
);
