-- Reference baselines, tests left out of repo-backed problems, repository environments.

-- The per-test outcomes of a problem's passing reference: what other solutions are held to.
CREATE TABLE baselines (
    problem_id TEXT PRIMARY KEY REFERENCES problems(id) ON DELETE CASCADE,
    solution_hash TEXT NOT NULL,        -- the reference text that produced it
    run_id INTEGER NOT NULL,
    tests TEXT NOT NULL DEFAULT '{}',   -- JSON {node id: passed|skipped|xfailed|xpassed}
    created_at TEXT NOT NULL
);

-- Upstream tests a problem does not run (need options, xfail upstream ...), with why.
CREATE TABLE excluded_tests (
    problem_id TEXT NOT NULL REFERENCES problems(id) ON DELETE CASCADE,
    node_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    actor TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (problem_id, node_id)
);

-- One isolated environment per mined repository (`curator repo env`).
CREATE TABLE repo_envs (
    repo_id INTEGER PRIMARY KEY REFERENCES repos(id) ON DELETE CASCADE,
    commit_sha TEXT NOT NULL,           -- the pinned commit it was built for
    key TEXT NOT NULL,                  -- hash of commit, dependency files, python, extras
    path TEXT NOT NULL,                 -- db/envs/<name>
    python TEXT NOT NULL,               -- its interpreter
    python_version TEXT NOT NULL,
    package TEXT,                       -- the import name of the repository's package
    lock TEXT NOT NULL DEFAULT '',      -- exact versions with hashes (pip requirements form)
    packages TEXT NOT NULL DEFAULT '[]',  -- JSON [{"name", "version"}]
    preload TEXT NOT NULL DEFAULT '[]',   -- JSON: modules its warm workers import once
    seconds REAL NOT NULL DEFAULT 0,
    built_at TEXT NOT NULL,
    actor TEXT NOT NULL
);
