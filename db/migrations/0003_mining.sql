-- Mining: cached repositories, mined commits, candidate functions, label suggestions.

CREATE TABLE repos (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    url TEXT NOT NULL UNIQUE,           -- as mined: a URL, or an absolute local path
    name TEXT NOT NULL,                 -- short display name (owner/name or folder name)
    cache_key TEXT NOT NULL,            -- db/repos/<cache_key>.git
    license TEXT NOT NULL DEFAULT 'unknown',   -- SPDX id at the last mined commit
    python TEXT,                        -- interpreter for runs; NULL = curator's own
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE mined_commits (
    repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
    commit_sha TEXT NOT NULL,
    rev TEXT,                           -- what was asked for (NULL = default branch)
    all_candidates INTEGER NOT NULL DEFAULT 0,   -- 1 when mined with --all-candidates
    license TEXT NOT NULL DEFAULT 'unknown',
    summary TEXT NOT NULL DEFAULT '{}',  -- JSON: the mine summary
    mined_at TEXT NOT NULL,
    actor TEXT NOT NULL,
    PRIMARY KEY (repo_id, commit_sha)
);

CREATE TABLE candidates (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
    commit_sha TEXT NOT NULL,           -- the commit this candidate is pinned to
    first_commit TEXT NOT NULL,         -- where it was first seen
    path TEXT NOT NULL,
    qualname TEXT NOT NULL,             -- function or Class.method
    kind TEXT NOT NULL CHECK (kind IN ('function', 'method')),
    signature TEXT NOT NULL DEFAULT '',
    docstring TEXT,
    source TEXT NOT NULL,
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    decorators TEXT NOT NULL DEFAULT '[]',      -- JSON list
    imports TEXT NOT NULL DEFAULT '[]',         -- JSON list: the module's imports
    needed_imports TEXT NOT NULL DEFAULT '[]',  -- JSON list: imports the function needs
    class_header TEXT NOT NULL DEFAULT '',
    ast_hash TEXT NOT NULL,             -- normalised AST: the dedupe key
    score REAL NOT NULL DEFAULT 0,      -- DL relevance in [0, 1]
    evidence TEXT NOT NULL DEFAULT '[]',        -- JSON list of {kind, detail, weight}
    framework TEXT NOT NULL DEFAULT '',
    tests TEXT NOT NULL DEFAULT '[]',           -- JSON list of pytest node ids
    suggestions TEXT NOT NULL DEFAULT '[]',     -- JSON list of {axis, slug, rule, evidence, weight}
    license TEXT NOT NULL DEFAULT 'unknown',
    status TEXT NOT NULL DEFAULT 'new'
        CHECK (status IN ('new', 'accepted', 'rejected', 'vanished')),
    reason TEXT,                        -- why it was rejected
    problem_id TEXT REFERENCES problems(id) ON DELETE SET NULL,
    vanished_commit TEXT,               -- first mined commit where it no longer appears
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (repo_id, ast_hash)
);

CREATE INDEX candidates_status ON candidates (status, score);
CREATE INDEX candidates_repo ON candidates (repo_id, commit_sha);

-- Suggested labels for a problem (from mining rules); never the labels themselves.
CREATE TABLE label_suggestions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    problem_id TEXT NOT NULL REFERENCES problems(id) ON DELETE CASCADE,
    axis TEXT NOT NULL CHECK (axis IN ('stage', 'task', 'data')),
    slug TEXT NOT NULL,
    rule TEXT NOT NULL,                 -- e.g. function-name:loss, api:torchvision.ops.nms
    evidence TEXT NOT NULL DEFAULT '',  -- what the rule saw, for a person
    weight REAL NOT NULL DEFAULT 0,
    source TEXT NOT NULL DEFAULT 'mining',
    candidate_id INTEGER REFERENCES candidates(id) ON DELETE SET NULL,
    created_at TEXT NOT NULL,
    UNIQUE (problem_id, axis, slug, rule)
);

CREATE INDEX label_suggestions_problem ON label_suggestions (problem_id, axis);
